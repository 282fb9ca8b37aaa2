"""No module of spcl over 450 lines: a module that grows past that holds more than one idea and
is split."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 450

ALLOWED: frozenset[str] = frozenset()
"""Modules allowed over the limit, each with its reason (none today)."""


def line_count(path: Path) -> int:
    """Lines of ``path`` as ``wc -l`` counts them (newline characters)."""
    return path.read_bytes().count(b"\n")


def test_every_module_has_at_most_450_lines() -> None:
    over = {
        p.relative_to(ROOT).as_posix(): n
        for p in sorted((ROOT / "spcl").rglob("*.py"))
        if (n := line_count(p)) > MAX_LINES
    }
    unexpected = {rel: n for rel, n in over.items() if rel not in ALLOWED}
    assert not unexpected, f"modules over {MAX_LINES} lines (split them by idea): {unexpected}"
