"""Shared fixtures: small corpora with planted PII and every kind of bad record."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample"
SHARED_DATA = ROOT.parent / "shared" / "data" / "scpi-real-v1" / "labelled.jsonl"


@pytest.fixture(scope="session")
def root() -> Path:
    """The project root."""
    return ROOT


def write_lines(path: Path, lines: list[bytes], gz: bool = False) -> Path:
    """Write raw JSONL lines (optionally gzip-compressed)."""
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def doc_line(doc_id: str, text: str, **extra: object) -> bytes:
    """One JSONL record."""
    return json.dumps({"id": doc_id, "text": text, **extra}, ensure_ascii=False).encode()
