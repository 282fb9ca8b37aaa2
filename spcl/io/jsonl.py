"""The one JSONL writer of spcl: one JSON object a line, UTF-8 (``ensure_ascii=False``), written atomically.

Records stream to a hidden temporary file beside the target, flushed to disk, then moved into place: a reader
sees the old file or the whole new one. A ``.gz`` or ``.zst`` name is compressed (gzip without a timestamp,
so the same records give the same bytes).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from spcl.io.storage import atomic_local_file


def json_line(record: Mapping[str, Any], *, sort_keys: bool = False) -> str:
    """``record`` as one JSONL line (UTF-8 characters kept, a newline at the end).

    >>> json_line({"b": 1, "a": "서울"}, sort_keys=True)
    '{"a": "서울", "b": 1}\\n'
    """
    return json.dumps(record, ensure_ascii=False, sort_keys=sort_keys) + "\n"


def jsonl_text(records: Iterable[Mapping[str, Any]], *, sort_keys: bool = False) -> str:
    """Every record as a JSONL line, joined (for writers that take text, e.g. ``write_private_atomic``)."""
    return "".join(json_line(r, sort_keys=sort_keys) for r in records)


def _opened(raw: IO[bytes], name: str) -> IO[bytes]:
    if name.endswith(".gz"):
        return gzip.GzipFile(filename=name, mode="wb", fileobj=raw, mtime=0)  # type: ignore[return-value]  # GzipFile is a binary IO
    if name.endswith(".zst"):
        import zstandard

        return zstandard.ZstdCompressor().stream_writer(raw, closefd=False)
    return raw


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]], *, sort_keys: bool = False,
                private: bool = False) -> int:
    """Write ``records`` to the local ``path`` as JSONL, atomically (parent folders made; ``.gz``/``.zst``
    compressed by name; ``private``: mode 0600); returns how many records were written. On error the
    temporary file is removed and an ``OSError`` names ``path``.

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


__all__ = ["json_line", "jsonl_text", "write_jsonl"]
