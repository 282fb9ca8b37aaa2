"""No line over 100 columns in spcl/, jobs/, tests/ and tools/: ``ruff format`` (line-length 100)
wraps code, ``tools/wrap_long_lines.py`` comments and docstrings, and ruff's E501 fails a longer
line. This test also counts what E501 lets through (a ``# type:`` pragma, a line that is one long
token).

Columns are counted as ruff counts them (East Asian wide characters take two).
"""

from __future__ import annotations

from pathlib import Path

from tools.wrap_long_lines import width

ROOT = Path(__file__).resolve().parents[2]
TREES = ("spcl", "jobs", "tests", "tools")
LIMIT = 100


def long_lines(root: Path = ROOT) -> list[str]:
    """``path:line`` of every line over :data:`LIMIT` columns in the Python files of
    :data:`TREES`."""
    found = []
    for tree in TREES:
        for path in sorted((root / tree).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if width(line) > LIMIT:
                    found.append(f"{path.relative_to(root).as_posix()}:{number}")
    return found


def test_no_line_is_over_100_columns() -> None:
    assert long_lines() == []


def test_the_count_sees_a_long_line(tmp_path: Path) -> None:
    (tmp_path / "spcl").mkdir()
    (tmp_path / "spcl" / "m.py").write_text("x = 1\n# " + "日" * 50 + "\n", encoding="utf-8")
    assert long_lines(tmp_path) == ["spcl/m.py:2"]
