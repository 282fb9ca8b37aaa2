"""The one JSONL reader and writer of spcl: one JSON object a line, UTF-8.

Reading (every module reads JSONL through these; none loops over ``json.loads`` itself):

- :func:`iter_jsonl` gives every non-blank line of a file once, as a :class:`JsonlLine`: the decoded
  ``value``, or an ``error`` reason (``invalid_utf8``, ``malformed_json``, ``too_deep``,
  ``undecodable_value``, ``record_too_large``, ``truncated_or_corrupt_stream``) with the ``raw``
  bytes it stands for. Callers that quarantine (every record lands in one output) use this.
- :func:`read_jsonl_objects` gives the decoded JSON objects of a file and raises :class:`JsonlError`
  at the first line that is not one (the reason, the file and the line's number and byte offset;
  never the line's content). Callers that read their own artefacts (reviews, labels, gold sets) use
  this.
- :func:`decode_line` is the one decoding step both use (and the record readers of
  ``spcl.io.readers``).

Lines longer than ``max_record_bytes`` (``input.max_record_bytes``, default 16 MiB) are never held
whole: they come as ``record_too_large``. Compression is sniffed from the content (gzip, zstd),
whatever the name; a UTF-8 byte order mark at the start is skipped; blank lines are not records;
``\r`` before a newline is dropped.

Writing: records stream to a hidden temporary file beside the target, flushed to disk, then moved
into place: a reader sees the old file or the whole new one. A ``.gz`` or ``.zst`` name is
compressed (gzip without a timestamp, so the same records give the same bytes).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from spcl.errors import UsageError
from spcl.io.atomic import atomic_local_file
from spcl.io.streams import iter_numbered_lines

DEFAULT_MAX_RECORD_BYTES = 16 << 20
"""The default cap on one line (the default of ``input.max_record_bytes``)."""


class JsonlError(UsageError, ValueError):
    """A JSONL line that is not a usable record: names the file, the line and the reason, never
    the value."""

    def __init__(self, source: str, line_no: int, offset: int, reason: str) -> None:
        super().__init__(f"{source}:{line_no}: not a JSON object record ({reason}, byte {offset})")
        self.source = source
        self.line_no = line_no
        self.offset = offset
        self.reason = reason


@dataclass(frozen=True, slots=True)
class JsonlLine:
    """One non-blank line of a JSONL file: ``value`` decoded (``error`` None), or ``error`` with
    ``raw``.

    ``index`` counts non-blank lines from 0; ``line_no`` is the 1-based line number (blank lines
    counted); ``offset`` is the byte offset of the line's first byte in the (decompressed) file.
    """

    index: int
    line_no: int
    offset: int
    value: Any = None
    error: str | None = None
    raw: bytes | None = None


def decode_line(line: bytes | str) -> tuple[Any, str | None]:
    """``(value, None)`` for one JSON text, else ``(None, reason)``: ``invalid_utf8``, ``too_deep``,
    ``malformed_json`` or ``undecodable_value`` (a number Python refuses to convert). Never raises.

    >>> decode_line(b'{"a": 1}'), decode_line(b"{oops")
    (({'a': 1}, None), (None, 'malformed_json'))
    """
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            return None, "invalid_utf8"
    try:
        return json.loads(line), None
    except RecursionError:
        return None, "too_deep"
    except json.JSONDecodeError:
        return None, "malformed_json"
    except ValueError:  # a number Python refuses to convert (over 4,300 digits)
        return None, "undecodable_value"


def iter_jsonl(
    source: str | Path | IO[bytes], *, max_record_bytes: int | None = DEFAULT_MAX_RECORD_BYTES
) -> Iterator[JsonlLine]:
    """Every non-blank line of a JSONL file (a path, or a binary file object), decoded or with its
    error.

    Nothing is dropped: a line that cannot be decoded comes with its ``error`` reason and ``raw``
    bytes (``raw`` is None for ``record_too_large``); a broken gzip/zstd stream ends with one
    ``truncated_or_corrupt_stream`` line holding the compressed rest of the file. A path is opened
    and closed here; a file object is read from its start and left open.
    """
    if isinstance(source, str | Path):
        with open(source, "rb") as fh:
            yield from _iter_jsonl(fh, max_record_bytes)
    else:
        yield from _iter_jsonl(source, max_record_bytes)


def _iter_jsonl(fh: IO[bytes], max_record_bytes: int | None) -> Iterator[JsonlLine]:
    for index, (line_no, offset, line, error) in enumerate(
        iter_numbered_lines(fh, max_record_bytes)
    ):
        if error is not None or line is None:
            yield JsonlLine(index, line_no, offset, error=error or "record_too_large", raw=line)
        else:
            value, problem = decode_line(line)
            yield JsonlLine(
                index, line_no, offset, value=value, error=problem, raw=line if problem else None
            )


def read_jsonl_objects(
    source: str | Path | IO[bytes], *, max_record_bytes: int | None = DEFAULT_MAX_RECORD_BYTES
) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, in order (blank lines skipped; gzip/zstd sniffed).

    Raises :class:`JsonlError` at the first line that is not a JSON object (undecodable, too large,
    a broken stream, or a JSON value that is not an object: ``not_an_object``), naming the file, the
    line's number and byte offset and the reason, never the content. ``OSError`` when the path
    cannot be opened.
    """
    name = str(source) if isinstance(source, str | Path) else getattr(source, "name", "<stream>")
    for item in iter_jsonl(source, max_record_bytes=max_record_bytes):
        if item.error is not None:
            raise JsonlError(str(name), item.line_no, item.offset, item.error)
        if not isinstance(item.value, dict):
            raise JsonlError(str(name), item.line_no, item.offset, "not_an_object")
        yield item.value


def load_jsonl(
    source: str | Path | IO[bytes], *, max_record_bytes: int | None = DEFAULT_MAX_RECORD_BYTES
) -> list[dict[str, Any]]:
    """``list(read_jsonl_objects(source))``: every object of a small JSONL file, or
    :class:`JsonlError`."""
    return list(read_jsonl_objects(source, max_record_bytes=max_record_bytes))


def json_line(record: Mapping[str, Any], *, sort_keys: bool = False) -> str:
    """``record`` as one JSONL line (UTF-8 characters kept, a newline at the end).

    >>> json_line({"b": 1, "a": "서울"}, sort_keys=True)
    '{"a": "서울", "b": 1}\\n'
    """
    return json.dumps(record, ensure_ascii=False, sort_keys=sort_keys) + "\n"


def jsonl_text(records: Iterable[Mapping[str, Any]], *, sort_keys: bool = False) -> str:
    """Every record as a JSONL line, joined (for writers that take text, e.g.
    ``write_private_atomic``)."""
    return "".join(json_line(r, sort_keys=sort_keys) for r in records)


def _opened(raw: IO[bytes], name: str) -> IO[bytes]:
    if name.endswith(".gz"):
        return gzip.GzipFile(  # type: ignore[return-value]  # GzipFile is a binary IO
            filename=name, mode="wb", fileobj=raw, mtime=0
        )
    if name.endswith(".zst"):
        import zstandard

        return zstandard.ZstdCompressor().stream_writer(raw, closefd=False)
    return raw


def write_jsonl(
    path: str | Path,
    records: Iterable[dict[str, Any]],
    *,
    sort_keys: bool = False,
    private: bool = False,
) -> int:
    """Write ``records`` to the local ``path`` as JSONL, atomically (parent folders made;
    ``.gz``/``.zst`` compressed by name; ``private``: mode 0600); returns how many records were
    written. On error the temporary file is removed and an ``OSError`` names ``path``.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "a" / "x.jsonl"
    >>> write_jsonl(out, [{"id": 1, "text": "전화"}, {"id": 2}])
    2
    >>> out.read_text(encoding="utf-8")
    '{"id": 1, "text": "전화"}\\n{"id": 2}\\n'
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with atomic_local_file(target, private=private) as raw:
        fh = _opened(raw, target.name)
        try:
            for record in records:
                fh.write(json_line(record, sort_keys=sort_keys).encode("utf-8"))
                count += 1
        finally:
            if fh is not raw:
                fh.close()
    return count


__all__ = [
    "DEFAULT_MAX_RECORD_BYTES",
    "JsonlError",
    "JsonlLine",
    "decode_line",
    "iter_jsonl",
    "json_line",
    "jsonl_text",
    "load_jsonl",
    "read_jsonl_objects",
    "write_jsonl",
]
