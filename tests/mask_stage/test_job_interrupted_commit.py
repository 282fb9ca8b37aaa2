"""A retry pass killed between its two part moves (failed/ moved, masked/ not) loses no row on the
next run.

``commit_unit`` moves ``failed/`` before ``masked/``; a retry pass killed in between leaves the new
failed part (without the rows it masked) beside the old masked part (without them too) and the old
done-marker. Before, the next run retried only the transient rows *listed in failed/*, so those rows
were in no output, ever (the reconciliation failed on every later run). ``spcl generalize`` already
asked for every unsettled row.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.mask_stage import MaskJobConfig, run_mask_job
from tests.support.extractors import TimeoutOnce


def test_rows_a_killed_retry_left_in_neither_part_are_asked_again(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a", "b"], "text": ["Call 010-1234-5678.", "Mail kim@mailbox.com."]}),
        tmp_path / "in" / "p.parquet",
    )
    cfg = MaskJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
    )
    ex = TimeoutOnce()
    first = run_mask_job(cfg, extractor=ex)
    assert first["failed"] == 2 and first["failed_transient"] == 2
    # the retry pass masked both rows, moved its (now empty, so removed) failed part and was killed
    # before moving masked/ and writing the marker
    failed_part = next((tmp_path / "out" / "failed").glob("*.parquet"))
    failed_part.unlink()
    again = run_mask_job(cfg, extractor=ex)
    assert again["reconciliation"]["ok"], again["reconciliation"]
    masked = (
        pq.read_table(next((tmp_path / "out" / "masked").glob("*.parquet")))
        .column("id")
        .to_pylist()
    )
    assert sorted(masked) == ["a", "b"]
