"""One record can never stop a job: an undecodable value or an oversized record goes to quarantine
with its reason and every other record is read, in both engines, whole-file and byte-range reads
alike."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from spcl.config import load_settings
from spcl.filter.job import FilterJob, run_filter
from spcl.io.outputs import output_dataset
from tests.support.records import doc_line, write_lines


@pytest.mark.parametrize("engine", ["python", pytest.param("spark", marks=pytest.mark.slow)])
def test_hostile_records_are_quarantined_and_the_job_runs(tmp_path: Path, engine: str) -> None:
    src = tmp_path / "in"
    src.mkdir()
    huge_int = b'{"id": "int", "text": "x", "n": ' + b"9" * 5000 + b"}"
    long_line = b'{"id": "long", "text": "' + b"a" * (3 << 20) + b'"}'
    good = [doc_line(f"g{i}", f"평범한 문장 {i} 입니다.") for i in range(20)]
    # split in ranges
    write_lines(src / "plain.jsonl", [*good[:10], huge_int, long_line, *good[10:]])
    (src / "bomb.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress(
            doc_line("z1", "앞")
            + b"\n"
            + b'{"text": "'
            + b"0" * (64 << 20)
            + b'"}\n'
            + doc_line("z2", "後")
            + b"\n"
        )
    )
    settings = load_settings(
        overrides={
            "screen.enabled": False,
            "input.max_record_bytes": 1 << 20,
            "input.split_bytes": 1 << 20,
        }
    )
    out = tmp_path / "out"
    master = "local[2]" if engine == "spark" else None
    stats = run_filter(FilterJob((str(src),), str(out), settings, engine, master))
    rows = output_dataset(out).to_table().to_pylist()
    assert stats["reconciliation"]["ok"] and len(rows) == 20 + 2 + 3
    reasons = sorted(r["quarantine_reason"] for r in rows if r["decision"] == "quarantine")
    assert reasons == ["record_too_large", "record_too_large", "undecodable_value"]
    assert {r["id"] for r in rows if r["decision"] != "quarantine"} == {
        f"g{i}" for i in range(20)
    } | {"z1", "z2"}


def test_annotate_quarantines_an_undecodable_record_and_runs_the_rest(tmp_path: Path) -> None:
    from tests.support.annotate_teachers import (
        EXPECTED_LABELLED,
        ScriptedTeachers,
        annotate,
        read,
        script,
        write_input,
    )

    inp = write_input(tmp_path / "in")
    with (inp / "a.jsonl").open("ab") as fh:
        fh.write(b'{"id": "huge", "text": "x", "n": ' + b"9" * 5000 + b"}\n")
    with ScriptedTeachers(script) as teachers:
        assert annotate(inp, tmp_path / "out", teachers) == 0
    dropped = [r["reason"] for r in read(tmp_path / "out" / "dropped.jsonl")]
    assert dropped.count("unreadable:undecodable_value") == 1
    labelled = {r["id"] for r in read(tmp_path / "out" / "labelled.jsonl")}
    assert labelled == set(EXPECTED_LABELLED)
