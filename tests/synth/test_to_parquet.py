from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from spcl.cli import main as cli_main


def test_pii_split_to_parquet_feeds_the_mask_job(tmp_path: Path) -> None:
    assert cli_main(["synth", "pii", "--seed", "7", "--output", str(tmp_path / "s")]) == 0
    out = tmp_path / "test.parquet"
    assert (
        cli_main(
            [
                "synth",
                "to-parquet",
                "--input",
                str(tmp_path / "s" / "test.jsonl"),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    gold = [json.loads(line) for line in (tmp_path / "s" / "test.jsonl").read_text().splitlines()]
    table = pq.read_table(out)
    assert table.column_names == ["id", "text", "lang"]
    assert table.column("id").to_pylist() == [g["id"] for g in gold]
    assert table.column("text").to_pylist() == [g["source_text"] for g in gold]


def test_to_parquet_reports_bad_input_without_values(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "lang": "ko"}\n')  # no source_text
    assert (
        cli_main(
            ["synth", "to-parquet", "--input", str(bad), "--output", str(tmp_path / "o.parquet")]
        )
        == 1
    )
    assert "KeyError" in capsys.readouterr().err
