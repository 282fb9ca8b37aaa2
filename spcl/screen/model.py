"""The screen model stack (hashed TF-IDF → LightGBM ∪ LinearSVC, plus category scores): load,
predict, save.

The artifact's files, their digest and the checks a loader makes are :mod:`spcl.screen.artifact`.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import scipy.sparse as sp

from spcl import __version__
from spcl.labels import CATEGORIES
from spcl.screen.artifact import FORMAT_VERSION, checked_files, model_digest
from spcl.screen.features import FeatureSettings, Featurizer, tfidf
from spcl.screen.kinds import (
    CARD,
    DEFAULT_KIND,
    LGBM_SVC_OUTPUTS,
    ScreenModelError,
    ScreenOutputs,
    ScreenResult,
    load_any,
    register_kind,
)
from spcl.screen.lgbm_import import import_lightgbm
from spcl.screen.tokenize import Tokenizers
from spcl.text import guess_langs

lgb = import_lightgbm()

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_NPZ_KEYS = ("idf", "svc_coef", "svc_intercept", "lgbm_columns", "cat_coef", "cat_intercept")


class DecisionCard(TypedDict):
    """The card fields that change a screen's decisions (:data:`DECISION_FIELDS`), hashed into
    its version."""

    categories: list[str]
    features: dict[str, object]
    format_version: int
    kind: str
    lang_thresholds: dict[str, dict[str, float]]
    thresholds: dict[str, float]


class Screen:
    """A loaded (or freshly trained) screen: one object per worker, reused for every batch.

    Build it with :func:`load_screen` (from a folder) or :func:`spcl.screen.train.fit_screen`.
    """

    def __init__(
        self,
        *,
        settings: FeatureSettings,
        sp_model: bytes,
        lexicon: Mapping[str, Mapping[str, Sequence[str]]],
        arrays: Mapping[str, np.ndarray],
        lgbm_model: str,
        thresholds: Mapping[str, float],
        lang_thresholds: Mapping[str, Mapping[str, float]] | None = None,
        card: Mapping[str, Any] | None = None,
        name: str = "screen",
        files_digest: str | None = None,
    ) -> None:
        missing = [k for k in _NPZ_KEYS if k not in arrays]
        if missing:
            raise ScreenModelError(f"screen arrays lack {missing}")
        self.settings = settings
        self.sp_model = bytes(sp_model)
        self.lexicon = {lang: {k: list(v) for k, v in t.items()} for lang, t in lexicon.items()}
        self.arrays = {k: np.asarray(arrays[k]) for k in _NPZ_KEYS}
        self.lgbm_model = lgbm_model
        self.thresholds = {"lgbm": float(thresholds["lgbm"]), "svc": float(thresholds["svc"])}
        self.lang_thresholds = {
            str(lang): {"lgbm": float(t["lgbm"]), "svc": float(t["svc"])}
            for lang, t in (lang_thresholds or {}).items()
        }
        """Thresholds of the languages that have their own (the others use :attr:`thresholds`)."""
        self.oof_scores: dict[str, np.ndarray] = {}
        """Out-of-fold ``lgbm``/``svc`` scores of the training records, in their order (set by
        :func:`spcl.screen.train.fit_screen`, empty for a loaded screen; never saved)."""
        self.card: dict[str, Any] = dict(card or {})
        self.name = name
        self._files_digest = files_digest
        self.featurizer = Featurizer(
            settings, Tokenizers(self.sp_model, settings.mecab_dic), self.lexicon
        )
        self._booster = lgb.Booster(model_str=lgbm_model)
        self._idf = self.arrays["idf"].astype(np.float32)
        self._svc_w = self.arrays["svc_coef"].astype(np.float32)
        self._svc_b = np.float32(self.arrays["svc_intercept"].reshape(-1)[0])
        self._cols = self.arrays["lgbm_columns"].astype(np.int64)
        self._cat_w = self.arrays["cat_coef"].astype(np.float32)
        self._cat_b = self.arrays["cat_intercept"].astype(np.float32)
        if (
            self._svc_w.shape[0] != self.featurizer.width
            or self._cat_w.shape[1] != self.featurizer.width
        ):
            raise ScreenModelError("weight width does not match the feature settings")

    @property
    def outputs(self) -> ScreenOutputs:
        """``lgbm`` and ``svc``: both a score and a flag."""
        return LGBM_SVC_OUTPUTS

    @cached_property
    def version(self) -> str:
        """``NAME@SHA12``: the artifact name and the first 12 hex digits of its model files' hash
        (of the files it was loaded from; a screen not loaded from files hashes its serialized
        files, once)."""
        digest = self._files_digest or model_digest(self.file_bytes(), self.decision_card())
        return f"{self.name}@{digest[:12]}"

    def decision_card(self) -> DecisionCard:
        """The card fields that change decisions (``spcl.screen.artifact.DECISION_FIELDS``), as
        :meth:`save` writes them."""
        return {
            "categories": list(CATEGORIES),
            "features": self.settings.to_json(),
            "format_version": FORMAT_VERSION if self.lang_thresholds else 1,
            "kind": DEFAULT_KIND,
            "lang_thresholds": self.lang_thresholds,
            "thresholds": self.thresholds,
        }

    def features(self, texts: Sequence[str], langs: Sequence[str] | None = None) -> sp.csr_matrix:
        """The TF-IDF matrix (hashed block plus lexicon block) the models see."""
        if langs is None:
            langs = guess_langs(texts)
        try:
            counts, lex = self.featurizer.featurize(texts, langs)
        except (UnicodeError, TypeError):
            # Lone surrogates (valid in JSON, not in UTF-8) break MeCab and SentencePiece: replace
            # them and retry, so one odd record never fails a whole batch. Clean batches skip this
            # pass.
            texts = [_scrub(t) for t in texts]
            counts, lex = self.featurizer.featurize(texts, langs)
        return tfidf(counts, self._idf, lex, self.settings.sublinear_tf)

    def predict(self, texts: Sequence[str], langs: Sequence[str] | None = None) -> ScreenResult:
        """Score a batch of NFC texts; ``langs`` (ja/ko/en/other) is guessed by script when None.

        Example: ``load_screen("models/screen-default").predict(["김모(41)씨는 사기 혐의로
        구속됐다."], ["ko"]).flag`` → ``array([ True])``; an empty batch gives empty arrays.
        """
        texts = list(texts)
        if langs is not None and len(langs) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(langs)} langs")
        n = len(texts)
        if n == 0:
            empty_f = np.zeros(0, np.float32)
            empty_b = np.zeros(0, bool)
            return ScreenResult(
                empty_b,
                {"lgbm": empty_f, "svc": empty_f},
                {"lgbm": empty_b, "svc": empty_b},
                {c: empty_f for c in CATEGORIES},
            )
        if langs is None and self.lang_thresholds:
            langs = guess_langs(texts)
        x = self.features(texts, langs)
        return self.predict_features(x, langs)

    def threshold_arrays(
        self, n: int, langs: Sequence[str] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per-document (lgbm, svc) thresholds: a language's own where the model has one, else
        the global."""
        lg_t = np.full(n, self.thresholds["lgbm"], np.float32)
        svc_t = np.full(n, self.thresholds["svc"], np.float32)
        if langs is not None and self.lang_thresholds:
            lang_arr = np.asarray(list(langs), dtype=object)
            for lang, t in self.lang_thresholds.items():
                m = lang_arr == lang
                lg_t[m], svc_t[m] = t["lgbm"], t["svc"]
        return lg_t, svc_t

    def predict_features(
        self, x: sp.csr_matrix, langs: Sequence[str] | None = None
    ) -> ScreenResult:
        """Score an already built feature matrix (see :meth:`features`); ``langs`` picks
        per-language thresholds (the global ones when None or for a language without its own)."""
        svc = (x @ self._svc_w + self._svc_b).astype(np.float32)
        lg = self._booster.predict(x[:, self._cols], num_threads=1).astype(np.float32)
        cat = np.asarray(x @ self._cat_w.T, dtype=np.float32) + self._cat_b
        cat = (1.0 / (1.0 + np.exp(-np.clip(cat, -30, 30)))).astype(np.float32)
        lg_t, svc_t = self.threshold_arrays(x.shape[0], langs)
        lf = lg >= lg_t
        sf = svc >= svc_t
        return ScreenResult(
            flag=lf | sf,
            scores={"lgbm": lg, "svc": svc},
            flags={"lgbm": lf, "svc": sf},
            categories={c: np.ascontiguousarray(cat[:, i]) for i, c in enumerate(CATEGORIES)},
        )

    def file_bytes(self) -> dict[str, bytes]:
        """The deterministic model files (everything but the card), name → bytes."""
        return {
            "lexicon.json": _json_bytes(self.lexicon),
            "lgbm.txt": self.lgbm_model.encode("utf-8"),
            "screen.npz": _npz_bytes(self.arrays),
            "spm.model": self.sp_model,
        }

    def save(self, path: str | Path, card_extra: Mapping[str, Any] | None = None) -> Path:
        """Write the artifact folder (created if needed); returns its path.

        The card gets the settings, thresholds and the SHA-256 of every file, plus ``card_extra``.
        """
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        files = self.file_bytes()
        for fname, data in files.items():
            (out / fname).write_bytes(data)
        card = dict(self.card)
        card.update(card_extra or {})
        decisions = self.decision_card()
        card.update(decisions)
        card.update(
            {
                "name": out.name,
                "spcl_version": card.get("spcl_version", __version__),
                "files": {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())},
                "model_sha256": model_digest(files, decisions),
            }
        )
        (out / CARD).write_text(
            json.dumps(card, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        )
        self.card = card
        self.name = out.name
        return out


def _scrub(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """A NumPy ``.npz`` (deflated zip) with fixed entry dates, so equal arrays give equal bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            arr_buf = io.BytesIO()
            np.lib.format.write_array(
                arr_buf, np.ascontiguousarray(arrays[key]), allow_pickle=False
            )
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, arr_buf.getvalue(), compresslevel=6)
    return buf.getvalue()


def load_screen(path: str | Path) -> Screen:
    """Load a screen artifact folder with the loader of the kind its card names (``lgbm_svc`` by
    default: :func:`load_lgbm_svc`); see :mod:`spcl.screen.kinds`.

    Raises :class:`ScreenModelError` with a message naming the file when something is missing,
    corrupt (hash mismatch, unreadable) or written by an incompatible format version.
    """
    return load_any(path)  # type: ignore[return-value]  # another kind gives its own object


@register_kind(DEFAULT_KIND)
def load_lgbm_svc(root: Path, card: dict[str, Any]) -> Screen:
    """Load a LightGBM ∪ LinearSVC artifact whose card is read, checking the format version and
    every file's SHA-256."""
    files = checked_files(root, card)
    try:
        settings = FeatureSettings.from_json(card["features"])
        with np.load(io.BytesIO(files["screen.npz"]), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in _NPZ_KEYS}
        screen = Screen(
            settings=settings,
            sp_model=files["spm.model"],
            lexicon=json.loads(files["lexicon.json"].decode("utf-8")),
            arrays=arrays,
            lgbm_model=files["lgbm.txt"].decode("utf-8"),
            thresholds=card["thresholds"],
            lang_thresholds=card.get("lang_thresholds") or {},
            card=card,
            name=str(card.get("name", root.name)),
            files_digest=str(card["model_sha256"]),
        )
    except ScreenModelError:
        raise
    except Exception as err:  # any parse failure of a hashed-but-wrong file is a corrupt artifact
        raise ScreenModelError(f"{root}: cannot load screen model ({type(err).__name__})") from None
    return screen
