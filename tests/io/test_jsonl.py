"""The one JSONL writer (``spcl.io.jsonl``): atomic, UTF-8, compressed by name, the same bytes
for the same records."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.io.jsonl import write_jsonl


def test_a_failing_writer_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    write_jsonl(out, [{"id": 1}])

    def broken() -> Iterator[dict[str, object]]:
        yield {"id": 2}
        raise RuntimeError("generator failed")

    with pytest.raises(RuntimeError):
        write_jsonl(out, broken())
    assert out.read_text(encoding="utf-8") == '{"id": 1}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["x.jsonl"]


def test_compressed_by_name_and_deterministic(tmp_path: Path) -> None:
    rows = [{"id": i, "text": f"연락처 {i}"} for i in range(50)]
    assert write_jsonl(tmp_path / "a.jsonl.gz", rows) == 50
    write_jsonl(tmp_path / "b" / "a.jsonl.gz", rows)
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b" / "a.jsonl.gz").read_bytes()
    assert [
        json.loads(line)
        for line in gzip.decompress((tmp_path / "a.jsonl.gz").read_bytes()).splitlines()
    ] == rows
    write_jsonl(tmp_path / "a.jsonl.zst", rows)
    with zstandard.ZstdDecompressor().stream_reader((tmp_path / "a.jsonl.zst").open("rb")) as fh:
        assert [json.loads(line) for line in fh.read().splitlines()] == rows


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.text(max_size=5), st.text(max_size=20) | st.integers(), max_size=4),
        max_size=8,
    )
)
def test_any_records_come_back_line_by_line(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, object]]
) -> None:
    out = tmp_path_factory.mktemp("j") / "r.jsonl"
    assert write_jsonl(out, rows) == len(rows)
    raw = out.read_bytes()
    assert raw.count(b"\n") == len(rows)  # a newline inside a value is escaped: one record a line
    assert [json.loads(line) for line in raw.decode("utf-8").split("\n")[:-1]] == rows
