"""Untyped JSON-shaped dicts stay on the way out: at most ``MAX_DICT_ANY`` lines of spcl/ name
``dict[str, Any]``.

A ``dict[str, Any]`` tells the type checker nothing about the keys a reader relies on, so a renamed
or missing key only shows when the code runs. Where such data crosses a module boundary (a report
one module builds and another draws, a JSON file one stage writes and another reads) it gets a typed
record instead: a ``TypedDict`` where the JSON form must stay a plain dict, byte for byte
(``report/facts.json``, ``report.json``, ``estimates.json``...), a dataclass where it is an object
in memory; a narrower exact type (``dict[str, int]``) where the values really are all of one kind.
What is left is mostly outside input not yet validated (parsed JSON, model cards, backend options),
row bags read back from Parquet or JSONL, and the clients a caller hands a stage by name.

The ceiling only goes down: when a change removes some, lower ``MAX_DICT_ANY`` to the new count (the
failure message prints it); a new ``dict[str, Any]`` needs one removed elsewhere. The count is
``grep -rc "dict\\[str, Any\\]" spcl --include=*.py``, summed (lines, not
occurrences).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_DICT_ANY = 172
"""Lines of spcl/*.py naming ``dict[str, Any]``: 362 before the typed records of the reports,
evaluations, annotate, the jobs' metrics, markers and stats, and the benchmarks; 172 after them."""


def dict_any_lines(root: Path = ROOT) -> list[str]:
    """``path:line`` of every line of ``root/spcl/**/*.py`` that names ``dict[str, Any]``."""
    return [
        f"{path.relative_to(root).as_posix()}:{n}"
        for path in sorted((root / "spcl").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "dict[str, Any]" in line
    ]


def test_dict_any_stays_under_its_ceiling() -> None:
    found = dict_any_lines()
    assert len(found) <= MAX_DICT_ANY, (
        f"{len(found)} lines name dict[str, Any] (ceiling {MAX_DICT_ANY}): give the new data a"
        " typed record (TypedDict or dataclass) or an exact value type instead"
    )


def test_the_count_sees_a_dict_any(tmp_path: Path) -> None:
    """The check is not vacuous: a module naming it is counted, one line each however often it is
    named."""
    (tmp_path / "spcl").mkdir()
    (tmp_path / "spcl" / "m.py").write_text(
        "def f(a: dict[str, Any]) -> dict[str, Any]: ...\nx: dict[str, int]\n"
    )
    assert dict_any_lines(tmp_path) == ["spcl/m.py:1"]
