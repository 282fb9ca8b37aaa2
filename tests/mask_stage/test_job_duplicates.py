"""Rows that share a row key: every input row lands in exactly one output, on every pass (a retry
included)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.mask_stage import MaskJobConfig, run_mask_job
from tests.support.extractors import TimeoutOnce


def _input(tmp: Path) -> None:
    (tmp / "in").mkdir()
    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "text": ["Call 010-1234-5678 now."] * 3,
            "row_key": ["k1", "k1", "k2"],
        }
    )
    pq.write_table(table, tmp / "in" / "part-0.parquet")


def _outputs(tmp: Path) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for sub in ("masked", "failed"):
        for part in sorted((tmp / "out" / sub).glob("*.parquet")):
            rows += [(sub, r["row_key"]) for r in pq.read_table(part).to_pylist()]
    return sorted(rows)


def _cfg(tmp: Path, **kw: object) -> MaskJobConfig:
    return MaskJobConfig(
        input=str(tmp / "in"), output=str(tmp / "out"), vault=str(tmp / "vault"), **kw
    )  # type: ignore[arg-type]


def test_retry_failed_keeps_one_output_per_row_with_a_shared_row_key(tmp_path: Path) -> None:
    _input(tmp_path)
    first = run_mask_job(_cfg(tmp_path))
    assert _outputs(tmp_path) == [("failed", "k1"), ("masked", "k1"), ("masked", "k2")]
    assert first["reconciliation"]["ok"]
    again = run_mask_job(_cfg(tmp_path, retry_failed=True))
    assert _outputs(tmp_path) == [("failed", "k1"), ("masked", "k1"), ("masked", "k2")]
    assert again["reconciliation"]["ok"]


def test_transient_retry_keeps_one_output_per_row_with_a_shared_row_key(tmp_path: Path) -> None:
    _input(tmp_path)
    ex = TimeoutOnce()
    run_mask_job(_cfg(tmp_path), extractor=ex)
    assert _outputs(tmp_path) == [("failed", "k1"), ("failed", "k1"), ("failed", "k2")]
    again = run_mask_job(_cfg(tmp_path), extractor=ex)
    assert _outputs(tmp_path) == [("failed", "k1"), ("masked", "k1"), ("masked", "k2")]
    assert again["reconciliation"]["ok"]
