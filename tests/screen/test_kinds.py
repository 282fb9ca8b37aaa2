"""The screen-kind registry: a toy keyword screen added by one module (this file) runs through the
filter's batch function, its scores/flags named by its model card; the shipped kind keeps its
columns."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.config import load_settings
from spcl.filter.batch import build_context, process_batch
from spcl.io.schema import OUTPUT_SCHEMA, RECORD_SCHEMA, SCORES_TYPE
from spcl.io.writers import PartitionWriter
from spcl.screen.kinds import (
    ScreenModelError,
    ScreenOutputs,
    ScreenResult,
    kind_loader,
    load_any,
    register_kind,
    registered_kinds,
)


class KeywordScreen:
    """Toy kind: flags a text containing any of the card's keywords; score = number of keyword
    hits."""

    def __init__(self, card: dict[str, Any]) -> None:
        self.keywords = [str(k) for k in card["keywords"]]
        self.outputs = ScreenOutputs.from_card(card, ScreenOutputs(("kw",), ("kw",)))
        self.version = f"{card['name']}@toy"

    def predict(self, texts: Sequence[str], langs: Sequence[str] | None = None) -> ScreenResult:
        hits = np.array([sum(t.count(k) for k in self.keywords) for t in texts], np.float32)
        flag = hits > 0
        return ScreenResult(flag, {"kw": hits}, {"kw": flag}, {"CRIME": flag.astype(np.float32)})


@register_kind("keyword-toy")
def _load_keyword(root: Path, card: dict[str, Any]) -> KeywordScreen:
    return KeywordScreen(card)


def _records(texts: list[str]) -> pa.RecordBatch:
    n = len(texts)
    return pa.RecordBatch.from_pydict(
        {
            "id": [f"d{i}" for i in range(n)],
            "text": texts,
            "source": ["s"] * n,
            "position": list(range(n)),
            "meta": [None] * n,
            "error": [None] * n,
            "raw": [None] * n,
            "id_note": [None] * n,
        },
        schema=RECORD_SCHEMA,
    )


def _toy_model(tmp_path: Path) -> Path:
    root = tmp_path / "kw-model"
    root.mkdir()
    card = {
        "kind": "keyword-toy",
        "name": "kw-model",
        "keywords": ["fraud", "사기"],
        "outputs": {"scores": ["kw"], "flags": ["kw"]},
    }
    (root / "model_card.json").write_text(json.dumps(card))
    return root


def test_toy_kind_runs_through_the_batch_function(tmp_path: Path) -> None:
    settings = load_settings(overrides={"screen.model": str(_toy_model(tmp_path))})
    ctx = build_context(settings)
    assert isinstance(ctx.screen, KeywordScreen)
    texts = [
        "He was charged with fraud.",
        "A quiet day in the park.",
        "김씨는 사기 혐의로 구속됐다.",
        "Call 010-1234-5678.",
    ]
    out = process_batch(_records(texts), ctx)
    scores = out.schema.field("scores").type
    assert [f.name for f in scores] == ["kw", "kw_flag", "medical", "crime", "disability", "other"]
    assert out.schema.remove(out.schema.get_field_index("scores")) == OUTPUT_SCHEMA.remove(
        OUTPUT_SCHEMA.get_field_index("scores")
    )
    rows = {r["id"]: r for r in out.to_pylist()}
    assert rows["d0"]["decision"] == "flagged" and rows["d0"]["reasons"] == ["screen:kw"]
    assert rows["d0"]["scores"]["kw"] == 1.0 and rows["d0"]["top_category"] == "CRIME"
    assert rows["d1"]["decision"] == "clean" and rows["d1"]["scores"]["kw_flag"] is False
    assert rows["d2"]["reasons"] == ["screen:kw"]
    assert "rule:PHONE" in rows["d3"]["reasons"] and "screen:kw" not in rows["d3"]["reasons"]
    assert all(r["model_version"] == "kw-model@toy" for r in rows.values())
    # the Parquet output takes the kind's struct
    writer = PartitionWriter(str(tmp_path / "out"), "k")
    writer.write(out)
    written = writer.close()
    table = pq.read_table(tmp_path / "out" / next(w.path for w in written if "flagged" in w.path))
    assert table.schema.field("scores").type == scores and table.num_rows == 3


def test_shipped_kind_keeps_its_columns() -> None:
    ctx = build_context(load_settings())
    assert ctx.scores_type == SCORES_TYPE
    out = process_batch(_records(["김모(41)씨는 사기 혐의로 구속됐다.", "Nothing here."]), ctx)
    assert out.schema == OUTPUT_SCHEMA
    assert [f.name for f in SCORES_TYPE] == [
        "lgbm",
        "svc",
        "lgbm_flag",
        "svc_flag",
        "medical",
        "crime",
        "disability",
        "other",
    ]


def test_registry_refuses_unknown_kinds_bad_outputs_and_double_claims(tmp_path: Path) -> None:
    kind_loader("lgbm_svc")
    assert {"keyword-toy", "lgbm_svc"} <= set(registered_kinds())
    root = _toy_model(tmp_path)
    card = json.loads((root / "model_card.json").read_text())
    (root / "model_card.json").write_text(json.dumps({**card, "kind": "no-such-kind"}))
    with pytest.raises(ScreenModelError, match="unknown screen model kind 'no-such-kind'"):
        load_any(root)
    (root / "model_card.json").write_text(
        json.dumps({**card, "outputs": {"scores": ["kw"], "flags": []}})
    )
    with pytest.raises(ScreenModelError, match="at least one flag"):
        load_any(root)
    (root / "model_card.json").write_text(
        json.dumps({**card, "outputs": {"scores": ["kw_flag"], "flags": ["kw"]}})
    )
    with pytest.raises(ScreenModelError, match="distinct"):
        load_any(root)
    with pytest.raises(ValueError, match="already registered"):
        register_kind("keyword-toy")(lambda root, card: KeywordScreen(card))


def test_a_kind_that_returns_too_little_fails_closed(tmp_path: Path) -> None:
    """A kind whose result lacks a score its card names quarantines the batch instead of
    releasing it."""
    ctx = build_context(load_settings(overrides={"screen.model": str(_toy_model(tmp_path))}))
    assert isinstance(ctx.screen, KeywordScreen)
    ctx.screen.outputs = ScreenOutputs(("kw", "extra"), ("kw",))
    out = process_batch(_records(["fraud", "park"]), ctx).to_pylist()
    assert [r["decision"] for r in out] == ["quarantine", "quarantine"]
    assert out[0]["quarantine_reason"] == "screen_model_error:KeyError"
