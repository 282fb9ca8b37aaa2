from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from spcl.config import InputSettings
from spcl.io.readers import count_records, iter_lines, read_records
from spcl.io.record_rows import derive_id
from spcl.synth.corpus import BAD_LINES
from tests.support.records import doc_line

SETTINGS = InputSettings()


def _rows(data: bytes, name: str, settings: InputSettings = SETTINGS) -> list[dict]:
    batches = list(read_records(io.BytesIO(data), name, settings, batch_rows=3))
    return pa.Table.from_batches(batches).to_pylist() if batches else []


def test_each_bad_record_is_quarantined_with_its_reason_and_bytes() -> None:
    rows = _rows(b"\n".join(BAD_LINES), "bad.jsonl")
    assert [r["error"] for r in rows] == [
        "malformed_json",
        "invalid_utf8",
        "missing_text_field",
        "text_not_string",
        "empty_text",
        "text_contains_nul",
        "not_an_object",
        "invalid_unicode_surrogate",
    ]
    assert [r["raw"] for r in rows] == list(BAD_LINES)
    assert all(r["text"] is None for r in rows)


def test_good_records_keep_id_text_meta_and_byte_offset() -> None:
    lines = [doc_line("a", "첫 문서", url="u1"), b"", doc_line("b", "二つ目")]
    rows = _rows(b"\n".join(lines) + b"\n", "x.jsonl")
    assert [(r["id"], r["text"], r["error"]) for r in rows] == [
        ("a", "첫 문서", None),
        ("b", "二つ目", None),
    ]
    assert json.loads(rows[0]["meta"]) == {"url": "u1"}
    assert rows[1]["position"] == len(lines[0]) + 2  # blank line skipped, offset counts it


def test_missing_ids_are_derived_stably_from_source_and_offset() -> None:
    data = b'{"text": "one"}\n{"text": "two"}\n'
    rows = _rows(data, "s3a://bucket/crawl.jsonl")
    assert rows[0]["id"] == derive_id("s3a://bucket/crawl.jsonl", 0)
    assert rows[1]["id"] == derive_id("s3a://bucket/crawl.jsonl", 16)
    assert rows[0]["id"] != rows[1]["id"]


def test_configurable_fields_and_size_limit() -> None:
    settings = InputSettings(text_field="body", id_field="doc", max_text_chars=10)
    data = b'{"doc": 7, "body": "short"}\n{"doc": 8, "body": "much too long here"}\n'
    rows = _rows(data, "x.jsonl", settings)
    assert [(r["id"], r["error"]) for r in rows] == [("7", None), ("8", "text_too_long")]


def test_truncated_gzip_keeps_every_complete_record_before_the_break() -> None:
    lines = [doc_line(f"d{i}", "x" * 200) for i in range(200)]
    packed = gzip.compress(b"\n".join(lines) + b"\n")
    rows = _rows(packed[: len(packed) * 2 // 3], "t.jsonl.gz")
    good = [r for r in rows if r["error"] is None]
    assert rows[-1]["error"] == "truncated_or_corrupt_stream"
    assert [r["id"] for r in good] == [f"d{i}" for i in range(len(good))]
    assert len(good) > 50
    assert count_records(io.BytesIO(packed[: len(packed) * 2 // 3]), "t.jsonl.gz", SETTINGS) == len(
        rows
    )


def test_zstd_and_multi_member_gzip() -> None:
    a, b = doc_line("a", "alpha"), doc_line("b", "beta")
    multi = gzip.compress(a + b"\n") + gzip.compress(b + b"\n")
    assert [r["id"] for r in _rows(multi, "m.jsonl.gz")] == ["a", "b"]
    zst = zstandard.ZstdCompressor().compress(a + b"\n" + b + b"\n")
    assert [r["id"] for r in _rows(zst, "m.jsonl.zst")] == ["a", "b"]


def test_corrupt_gzip_is_one_quarantine_row() -> None:
    rows = _rows(b"\x1f\x8b\x08\x00garbage-garbage-garbage", "c.jsonl.gz")
    assert [r["error"] for r in rows] == ["truncated_or_corrupt_stream"]


def test_parquet_rows_and_bad_parquet(tmp_path: Path) -> None:
    table = pa.table(
        {"id": ["p1", "p2", "p3"], "text": ["ok", None, ""], "lang": ["en", "en", "en"]}
    )
    path = tmp_path / "x.parquet"
    pq.write_table(table, path)
    rows = _rows(path.read_bytes(), str(path))
    assert [(r["id"], r["error"]) for r in rows] == [
        ("p1", None),
        ("p2", "missing_text_field"),
        ("p3", "empty_text"),
    ]
    assert json.loads(rows[1]["raw"]) == {"id": "p2", "text": None, "lang": "en"}
    broken = _rows(b"PAR1 this is not parquet", "broken.parquet")
    assert [(r["error"], r["raw"]) for r in broken] == [
        ("unreadable_parquet_file", b"PAR1 this is not parquet")
    ]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_iter_lines_offsets(newline: bytes) -> None:
    data = b"ab" + newline + newline + b"cd"
    assert [(o, line) for o, line, _ in iter_lines(io.BytesIO(data), "x.jsonl")] == [
        (0, b"ab"),
        (2 * len(newline) + 2, b"cd"),
    ]


def test_twenty_megabyte_document_is_processed_or_quarantined_not_crashed() -> None:
    big = doc_line("big", "가" * (20 << 20))
    # 60 MB of UTF-8
    assert _rows(big, "x.jsonl", InputSettings())[0]["error"] == "record_too_large"
    assert (
        _rows(big, "x.jsonl", InputSettings(max_record_bytes=64 << 20))[0]["error"]
        == "text_too_long"
    )
    rows = _rows(big, "x.jsonl", InputSettings(max_text_chars=30 << 20, max_record_bytes=64 << 20))
    assert rows[0]["error"] is None and len(rows[0]["text"]) == 20 << 20


def test_corrupt_row_group_quarantines_each_declared_row(tmp_path: Path) -> None:
    table = pa.table(
        {"id": [f"r{i}" for i in range(40)], "text": [f"문서 {i} " * 30 for i in range(40)]}
    )
    path = tmp_path / "two-groups.parquet"
    pq.write_table(table, path, row_group_size=20, compression="zstd")
    data = bytearray(path.read_bytes())
    meta = pq.ParquetFile(path).metadata.row_group(1).column(1)
    start = meta.data_page_offset
    data[start + 20 : start + 60] = b"\xff" * 40  # damage the second row group's text page
    rows = _rows(bytes(data), str(path))
    assert len(rows) == 40 == count_records(io.BytesIO(bytes(data)), str(path), SETTINGS)
    assert [r["id"] for r in rows[:20]] == [f"r{i}" for i in range(20)]
    assert all(r["error"] is None for r in rows[:20])
    assert {r["error"] for r in rows[20:]} == {"corrupt_parquet_row_group"}
    assert [r["position"] for r in rows] == list(range(40))


@pytest.mark.parametrize("where", ["text", "meta", "id", "nested"])
@pytest.mark.parametrize("name", ["x.jsonl", "x.json"])
def test_an_integer_python_cannot_convert_is_quarantined_and_the_rest_read(
    where: str, name: str
) -> None:
    huge = "7" * 5000  # over Python's 4,300-digit int-to-string limit
    bad = {
        "text": f'{{"id": "b", "text": {huge}}}',
        "meta": f'{{"id": "b", "text": "x", "n": {huge}}}',
        "id": f'{{"id": {huge}, "text": "x"}}',
        "nested": f'{{"id": "b", "text": "x", "m": [{{"n": {huge}}}]}}',
    }
    lines = [doc_line("a", "첫 문서"), bad[where].encode(), doc_line("c", "三つ目")]
    data = b"\n".join(lines) + b"\n"
    if name.endswith(".json"):  # one JSON array is read whole or quarantined whole
        data = b"[" + b",".join(lines) + b"]"
        rows = _rows(data, name)
        assert [(r["error"], r["raw"]) for r in rows] == [("undecodable_value", data)]
        assert count_records(io.BytesIO(data), name, SETTINGS) == 1
        return
    rows = _rows(data, name)
    assert len(rows) == 3 == count_records(io.BytesIO(data), name, SETTINGS)
    assert [r["text"] for r in rows[::2]] == ["첫 문서", "三つ目"]
    assert rows[1]["text"] is None and rows[1]["error"] in ("undecodable_value", "text_not_string")


def _bomb(kind: str, size: int) -> bytes:
    """One JSONL line of ``size`` bytes between two good records, compressed by ``kind``."""
    line = b'{"id": "big", "text": "' + b"0" * size + b'"}'
    data = doc_line("a", "앞") + b"\n" + line + b"\n" + doc_line("c", "後ろ") + b"\n"
    if kind == "gz":
        return gzip.compress(data)
    return zstandard.ZstdCompressor().compress(data) if kind == "zst" else data


@pytest.mark.parametrize("kind", ["gz", "zst", "plain"])
def test_a_record_over_the_size_cap_is_quarantined_while_reading(kind: str) -> None:
    settings = InputSettings(max_record_bytes=1 << 20)
    data = _bomb(kind, 40 << 20)
    rows = _rows(data, f"x.jsonl.{kind}", settings)
    assert [(r["id"] if r["error"] is None else None, r["error"]) for r in rows] == [
        ("a", None),
        (None, "record_too_large"),
        ("c", None),
    ]
    assert rows[1]["raw"] is None and rows[1]["position"] == len(doc_line("a", "앞")) + 1
    assert count_records(io.BytesIO(data), "x.jsonl", settings) == 3


def test_a_decompression_bomb_is_read_in_bounded_memory() -> None:
    """A 1 GiB line compressed to a few dozen KB: read with the default cap, memory stays
    bounded."""
    import tracemalloc

    data = _bomb("zst", 1 << 30)
    assert len(data) < 1 << 20
    tracemalloc.start()
    rows = _rows(data, "x.jsonl.zst", InputSettings())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [r["error"] for r in rows] == [None, "record_too_large", None]
    assert peak < 200 << 20


def test_line_splitter_matches_a_plain_split_on_any_chunking() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from spcl.io.splits import LineSplitter

    @settings(max_examples=300, deadline=None)
    @given(
        st.lists(st.sampled_from([b"a", b"bb", b"\n", b"\r\n", b" ", b"xyz" * 3]), max_size=40),
        st.lists(st.integers(1, 7), min_size=1, max_size=10),
        st.integers(1, 12),
    )
    def check(parts: list[bytes], cuts: list[int], limit: int) -> None:
        data = b"".join(parts)
        chunks, i, k = [], 0, 0
        while i < len(data):
            chunks.append(data[i : i + cuts[k % len(cuts)]])
            i += cuts[k % len(cuts)]
            k += 1
        want, offset = [], 0
        for line in data.split(b"\n"):
            if len(line) > limit:
                want.append((offset, None))
            elif line.strip():
                want.append((offset, line.rstrip(b"\r")))
            offset += len(line) + 1
        assert list(LineSplitter(max_bytes=limit).lines(iter(chunks))) == want

    check()


def test_a_json_array_over_its_cap_is_quarantined_whole_in_bounded_memory() -> None:
    from spcl.io.readers import JSON_ARRAY_RECORDS

    settings = InputSettings(max_record_bytes=1 << 20)
    element = b'{"id": "x", "text": "' + b"a" * 1000 + b'"}'
    body = b"[" + b",".join([element] * (JSON_ARRAY_RECORDS * 1100)) + b"]"  # > 16 MiB decompressed
    data = zstandard.ZstdCompressor().compress(body)
    rows = _rows(data, "x.json.zst", settings)
    assert [(r["error"], r["raw"]) for r in rows] == [("json_array_too_large", data)]
    assert count_records(io.BytesIO(data), "x.json.zst", settings) == 1
    small = b"[" + b",".join([element] * 3) + b"]"
    assert [r["error"] for r in _rows(small, "x.json", settings)] == [None] * 3
