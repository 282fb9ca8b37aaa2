"""Raw JSONL records and files, written byte for byte (malformed ones included) for reader and
job tests."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def write_lines(path: Path, lines: list[bytes], gz: bool = False) -> Path:
    """Write raw JSONL lines (optionally gzip-compressed)."""
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def doc_line(doc_id: str, text: str, **extra: object) -> bytes:
    """One JSONL record."""
    return json.dumps({"id": doc_id, "text": text, **extra}, ensure_ascii=False).encode()
