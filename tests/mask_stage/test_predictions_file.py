"""``spcl mask --pred-out``: the predictions file holds values in clear, so only its owner may
read it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.mask_stage import MaskJobConfig, export_predictions, run_mask_job


def test_predictions_file_is_owner_only(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a"], "text": ["Call 010-1234-5678 now."]}), tmp_path / "in" / "p.parquet"
    )
    run_mask_job(
        MaskJobConfig(
            input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
        )
    )
    old = os.umask(0o022)
    try:
        assert export_predictions(tmp_path / "out", tmp_path / "v", tmp_path / "pred.jsonl") == 1
    finally:
        os.umask(old)
    assert "010-1234-5678" in (tmp_path / "pred.jsonl").read_text(encoding="utf-8")
    assert stat.S_IMODE((tmp_path / "pred.jsonl").stat().st_mode) == 0o600
