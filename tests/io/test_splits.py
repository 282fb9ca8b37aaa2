"""Issue 13: big plain JSONL files split into line-aligned byte ranges; every line read exactly
once."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.config import load_settings
from spcl.filter.job import FilterJob, run_filter
from spcl.io.outputs import output_dataset
from spcl.io.splits import BOM, Split, plan_splits, range_lines
from spcl.manifest import verify_manifest


def whole_lines(data: bytes) -> list[tuple[int, bytes]]:
    """The reference: every non-blank line with its offset (BOM skipped), reading the file in one
    piece."""
    out, offset = [], 0
    body = data
    if body.startswith(BOM):
        body, offset = body[len(BOM) :], len(BOM)
    for raw in body.split(b"\n"):
        if raw.strip():
            out.append((offset, raw.rstrip(b"\r")))
        offset += len(raw) + 1
    return out


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=40),
    bom=st.booleans(),
    crlf=st.booleans(),
    trailing_newline=st.booleans(),
    split_bytes=st.integers(min_value=1, max_value=120),
)
def test_ranges_read_every_line_exactly_once(
    lines: list[bytes], bom: bool, crlf: bool, trailing_newline: bool, split_bytes: int
) -> None:
    sep = b"\r\n" if crlf else b"\n"
    data = (BOM if bom else b"") + sep.join(lines) + (sep if trailing_newline and lines else b"")
    fh = io.BytesIO(data)
    got = []
    for s in plan_splits("/x.jsonl", len(data), True, split_bytes):
        end = s.end if s.end is not None else len(data)
        got += list(range_lines(fh, s.start, end))
    assert got == whole_lines(data)


def test_plan_keeps_small_and_unsplittable_files_whole() -> None:
    assert plan_splits("/a.jsonl", 10, True, 100) == [Split("/a.jsonl")]
    assert plan_splits("/a.jsonl.gz", 10_000, False, 100) == [Split("/a.jsonl.gz")]
    assert plan_splits("/a.jsonl", 10_000, True, 0) == [Split("/a.jsonl")]
    parts = plan_splits("/a.jsonl", 250, True, 100)
    assert [p.index for p in parts] == [0, 1, 2] and len({p.key for p in parts}) == 3
    assert Split("/a.jsonl").key != parts[0].key and parts[0].key.startswith(Split("/a.jsonl").key)


# --- the filter job over a big plain JSONL file read in byte ranges (both engines) ----------------


def _big_jsonl(path: Path) -> int:
    """A plain JSONL file of 300 records with PII, some bad lines, CRLF and blank lines: returns
    the records."""
    lines = []
    for i in range(300):
        if i % 37 == 5:
            lines.append(b'{"id": "bad-' + str(i).encode() + b'", "text": unterminated')
        else:
            text = (
                f"문서 {i}: 연락처 010-{1000 + i:04d}-{2000 + i:04d}, mail u{i}@mailbox.com "
                + "가나다 " * (i % 9)
            )
            lines.append(json.dumps({"id": f"d{i}", "text": text}, ensure_ascii=False).encode())
        if i % 50 == 7:
            lines.append(b"   ")
    path.write_bytes(b"\r\n".join(lines) + b"\r\n")
    return 300


def _rows(out: Path) -> dict[str, tuple[str, str | None, int]]:
    table = output_dataset(out).to_table(columns=["row_key", "decision", "id", "position"])
    return {
        k: (d, i, p)
        for k, d, i, p in zip(
            *(table.column(c).to_pylist() for c in ("row_key", "decision", "id", "position")),
            strict=True,
        )
    }


@pytest.mark.parametrize("engine", ["python", pytest.param("spark", marks=pytest.mark.slow)])
def test_a_big_file_in_ranges_gives_the_same_rows_as_one_task(tmp_path: Path, engine: str) -> None:
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    n = _big_jsonl(crawl / "big.jsonl")
    before = (crawl / "big.jsonl").read_bytes()
    whole = load_settings(overrides={"screen.enabled": False, "input.split_bytes": 0})
    ranged = load_settings(overrides={"screen.enabled": False, "input.split_bytes": 3000})
    master = "local[2]" if engine == "spark" else None
    stats_whole = run_filter(FilterJob((str(crawl),), str(tmp_path / "whole"), whole, "python"))
    stats = run_filter(FilterJob((str(crawl),), str(tmp_path / "ranged"), ranged, engine, master))
    assert (crawl / "big.jsonl").read_bytes() == before
    assert stats["reconciliation"]["ok"] and stats["reconciliation"]["input_records"] == n
    assert stats["counts"] == stats_whole["counts"]
    parts = list((tmp_path / "ranged").glob("decision=flagged/*.parquet"))
    assert len(parts) > 5, "the file was read in several ranges"
    # same ids, row keys, positions, decisions
    assert _rows(tmp_path / "ranged") == _rows(tmp_path / "whole")
    assert verify_manifest(tmp_path / "ranged").ok
