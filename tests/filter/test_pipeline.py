"""The per-batch screen fails closed: a record or a batch it cannot screen is quarantined, never
clean."""

from __future__ import annotations

import pyarrow as pa

from spcl.config import load_settings
from spcl.filter.batch import FilterContext, build_context, process_batch
from spcl.io.schema import RECORD_SCHEMA


class BrokenScreen:
    """Test double for a screen model whose predict raises (a corrupt model, an OOM)."""

    version = "broken@0"

    def predict(self, texts: list[str], langs: list[str] | None = None) -> None:
        raise MemoryError


class BrokenDetectors:
    """Test double for detectors that fail on one particular text."""

    def find(self, text: str) -> list:
        if "boom" in text:
            raise ValueError("no values in here")
        return []


def _batch(texts: list[str]) -> pa.RecordBatch:
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


def test_a_failing_screen_model_quarantines_the_whole_batch_with_original_bytes() -> None:
    base = build_context(load_settings(overrides={"screen.enabled": False}))
    ctx = FilterContext(base.settings, base.detectors, BrokenScreen(), base.config_hash)
    texts = ["평범한 문장입니다.", "연락처 010-2345-6789"]
    rows = process_batch(_batch(texts), ctx).to_pylist()
    assert [r["decision"] for r in rows] == ["quarantine", "quarantine"]
    assert {r["quarantine_reason"] for r in rows} == {"screen_model_error:MemoryError"}
    assert [r["raw"] for r in rows] == [t.encode() for t in texts]
    assert all(r["model_version"] == "broken@0" for r in rows)


def test_a_record_the_detectors_fail_on_is_quarantined_and_the_rest_screened() -> None:
    base = build_context(load_settings(overrides={"screen.enabled": False}))
    ctx = FilterContext(base.settings, BrokenDetectors(), None, base.config_hash)
    rows = {
        r["id"]: r
        for r in process_batch(_batch(["fine text", "boom text", "also fine"]), ctx).to_pylist()
    }
    assert {k: r["decision"] for k, r in rows.items()} == {
        "d0": "clean",
        "d1": "quarantine",
        "d2": "clean",
    }
    assert (
        rows["d1"]["quarantine_reason"] == "screen_error:ValueError"
        and rows["d1"]["raw"] == b"boom text"
    )
