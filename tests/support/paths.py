"""Where the project's committed data lies, for tests and their helpers."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
SHARED_DATA = ROOT / "data" / "scpi-real-v1" / "labelled.jsonl"
