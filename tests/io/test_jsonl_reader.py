"""The one JSONL reader (``spcl.io.jsonl``): every non-blank line once, decoded or with its
reason."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.config import InputSettings
from spcl.evaluate.screen import ScreenEvalError, read_eval_records
from spcl.io.jsonl import (
    DEFAULT_MAX_RECORD_BYTES,
    JsonlError,
    iter_jsonl,
    load_jsonl,
    read_jsonl_objects,
    write_jsonl,
)

SECRET = "010-9876-5432"


def test_the_default_cap_is_the_input_setting_default() -> None:
    assert InputSettings().max_record_bytes == DEFAULT_MAX_RECORD_BYTES


def test_bad_lines_come_with_their_reason_and_bytes_never_dropped() -> None:
    data = (
        b'\xef\xbb\xbf{"a": 1}\n\n{"b": "'
        + SECRET.encode()
        + b'"\n\xff\xfe\n'
        + b"[" * 100_000
        + b"\n"
        + b"1" * 5000
        + b"\n[2]\n"
    )
    got = list(iter_jsonl(io.BytesIO(data)))
    assert [(g.line_no, g.error) for g in got] == [
        (1, None),
        (3, "malformed_json"),
        (4, "invalid_utf8"),
        (5, "too_deep"),
        (6, "undecodable_value"),
        (7, None),
    ]
    assert got[1].raw is not None and SECRET.encode() in got[1].raw  # kept for quarantine
    assert (
        [g.index for g in got] == list(range(6))
        and got[0].value == {"a": 1}
        and got[-1].value == [2]
    )


def test_a_line_over_the_cap_is_reported_not_held() -> None:
    data = b'{"a": "' + b"x" * 5000 + b'"}\n{"b": 2}\n'
    got = list(iter_jsonl(io.BytesIO(data), max_record_bytes=1024))
    assert [(g.error, g.raw, g.value) for g in got] == [
        ("record_too_large", None, None),
        (None, None, {"b": 2}),
    ]
    assert got[1].line_no == 2


@pytest.mark.parametrize(
    "pack", [lambda b: gzip.compress(b, mtime=0), lambda b: zstandard.compress(b)]
)
def test_compression_is_sniffed_from_the_content(tmp_path: Path, pack: object) -> None:
    path = tmp_path / "plain-name.jsonl"
    path.write_bytes(pack(b'{"a": 1}\n{"a": 2}\n'))  # type: ignore[operator]
    assert load_jsonl(path) == [{"a": 1}, {"a": 2}]


def test_a_truncated_stream_ends_with_one_reason_line() -> None:
    packed = gzip.compress(b"".join(b'{"i": %d}\n' % i for i in range(2000)), mtime=0)
    got = list(iter_jsonl(io.BytesIO(packed[: len(packed) // 2])))
    assert got[-1].error == "truncated_or_corrupt_stream" and got[-1].raw
    assert all(g.error is None for g in got[:-1]) and [g.value["i"] for g in got[:-1]] == list(
        range(len(got) - 1)
    )


def test_the_strict_reader_names_file_line_and_reason_never_the_value(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"id": "a"}\n\n["' + SECRET + '"]\n', encoding="utf-8")
    with pytest.raises(JsonlError) as err:
        list(read_jsonl_objects(path))
    assert err.value.line_no == 3 and err.value.reason == "not_an_object"
    assert str(path) in str(err.value) and ":3:" in str(err.value) and SECRET not in str(err.value)
    path.write_text('{"id": "a"}\n{"id": "' + SECRET + '",\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"labels.jsonl:2: .*malformed_json") as err2:
        load_jsonl(path)
    assert SECRET not in str(err2.value)


def test_a_ported_reader_keeps_file_and_line_and_hides_the_value(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    path.write_text('{"text": "ok", "label": ""}\n{"text": "' + SECRET + '"\n', encoding="utf-8")
    with pytest.raises(ScreenEvalError, match=r"eval.jsonl:2: not valid JSON") as err:
        list(read_eval_records(path))
    assert SECRET not in str(err.value)
    path.write_bytes(gzip.compress(b'{"text": "ok"}\n', mtime=0))
    assert [r["text"] for r in read_eval_records(path)] == ["ok"]


records = st.lists(
    st.dictionaries(
        st.text(max_size=8),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.text(max_size=20),
            st.lists(st.integers(), max_size=3),
        ),
        max_size=4,
    ),
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(records, st.sampled_from(["x.jsonl", "x.jsonl.gz", "x.jsonl.zst"]))
def test_what_the_writer_writes_the_reader_reads(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, object]], name: str
) -> None:
    path = tmp_path_factory.mktemp("rt") / name
    write_jsonl(path, rows)
    assert load_jsonl(path) == json.loads(json.dumps(rows))
