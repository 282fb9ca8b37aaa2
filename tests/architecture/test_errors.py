"""One error root, read from the source with ``ast``: every exception class in spcl derives from
:class:`spcl.errors.SpclError`, commands decide no exit code with an integer literal, and no parser
offers ``--out`` or ``--in`` (the flags are ``--output/-o`` and ``--input/-i`` everywhere)."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

from spcl import errors

ROOT = Path(__file__).resolve().parents[2]
SPCL = ROOT / "spcl"
BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)


def _base_name(node: ast.expr) -> str:
    """The last name of a base-class expression (``a.b.C`` → ``C``)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def class_bases(root: Path) -> dict[str, set[str]]:
    """Every class defined under ``root`` (at any depth) → the last names of its bases.

    A name defined twice (``filter.driver.JobError`` and ``executor.errors.JobError``) gets the
    union.
    """
    bases: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(_base_name(b) for b in node.bases)
    return bases


def exception_classes(bases: dict[str, set[str]]) -> set[str]:
    """The classes that derive, through spcl's classes, from a built-in exception."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, parents in bases.items():
            if name not in found and parents & (BUILTIN_EXCEPTIONS | found):
                found.add(name)
                changed = True
    return found


def reaches_root(name: str, bases: dict[str, set[str]], seen: frozenset[str] = frozenset()) -> bool:
    """Whether some chain of bases from ``name`` reaches ``SpclError``."""
    if name == "SpclError":
        return True
    return any(reaches_root(b, bases, seen | {name}) for b in bases.get(name, ()) if b not in seen)


def test_every_exception_class_derives_from_the_root() -> None:
    bases = class_bases(SPCL)
    classes = exception_classes(bases)
    assert len(classes) >= 30  # the scan sees the classes at all
    assert sorted(c for c in classes if not reaches_root(c, bases)) == []


def test_scan_catches_a_class_outside_the_root(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "from spcl.errors import RunFailed\n"
        "class Good(RunFailed):\n    pass\n"
        "class Bad(ValueError):\n    pass\n"
        "class AlsoBad(Bad):\n    pass\n"
    )
    bases = class_bases(tmp_path)
    classes = exception_classes(bases)
    assert sorted(c for c in classes if not reaches_root(c, bases)) == ["AlsoBad", "Bad"]


def test_each_family_has_its_own_code_in_the_table() -> None:
    codes = [family.exit_code for family in errors.FAMILIES]
    assert len(set(codes)) == len(codes)
    assert set(errors.EXIT_CODES) == {errors.OK, *codes}
    assert errors.EXIT_CODES.keys() == {0, 1, 2, 3}  # the meanings users and scripts rely on


def literal_exit_returns(source: str) -> list[int]:
    """Line numbers of ``return <int literal other than 0>`` in ``source``.

    >>> literal_exit_returns("def f():\\n    return 0\\ndef g():\\n    return 2\\n")
    [4]
    """
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Return)
        and isinstance(node.value, ast.Constant)
        and type(node.value.value) is int
        and node.value.value != 0
    ]


def test_commands_return_no_literal_exit_code() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in [*sorted((SPCL / "commands").glob("*.py")), SPCL / "cli.py"]
        if (lines := literal_exit_returns(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def option_strings(source: str) -> set[str]:
    """Every string literal starting with ``-`` passed to an ``add_argument`` call.

    >>> sorted(option_strings("p.add_argument('--out', '-o', help='x')"))
    ['--out', '-o']
    """
    return {
        arg.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and _base_name(node.func) == "add_argument"
        for arg in node.args
        if isinstance(arg, ast.Constant)
        and isinstance(arg.value, str)
        and arg.value.startswith("-")
    }


def test_no_out_or_in_flags() -> None:
    paths = [
        *sorted(SPCL.rglob("*.py")),
        *sorted((ROOT / "tools").rglob("*.py")),
        *sorted((ROOT / "jobs").rglob("*.py")),
    ]
    found = {
        str(path.relative_to(ROOT)): sorted(flags)
        for path in paths
        if (flags := option_strings(path.read_text(encoding="utf-8")) & {"--out", "--in"})
    }
    assert found == {}
