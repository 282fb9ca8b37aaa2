"""How many of spcl's internal imports sit inside functions: the counter of the house rule "imports
at module level" (the architecture test of the CLI's imports counts the same way).

An internal import is an ``import spcl…`` / ``from spcl… import …`` statement or a relative one,
anywhere in a module under ``spcl/``; it is *function-level* when it sits inside a function or
method body (at any depth). One statement counts once, however many names it imports.

    python -m tools.import_stats            # all of spcl/
    python -m tools.import_stats --exclude spcl/commands spcl/cli.py --list
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _is_internal(node: ast.Import | ast.ImportFrom) -> bool:
    """True for an import of spcl itself (absolute ``spcl``/``spcl.…`` or any relative import)."""
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] == "spcl"
    return any(alias.name.split(".")[0] == "spcl" for alias in node.names)


def internal_imports(source: str) -> Iterator[tuple[int, bool]]:
    """``(line, inside_function)`` for each internal import statement of ``source``.

    >>> list(internal_imports("import spcl.a\\nimport os\\ndef f():\\n    from .b import c\\n"))
    [(1, False), (4, True)]
    """

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[int, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and _is_internal(child):
                yield child.lineno, in_function
            inner = in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            yield from walk(child, inner)

    yield from walk(ast.parse(source), False)


def count(root: Path = ROOT, exclude: tuple[str, ...] = ()) -> tuple[int, int, list[str]]:
    """``(function_level, total, where)`` over ``spcl/`` under ``root``, leaving out paths under
    ``exclude``."""
    inside = total = 0
    where: list[str] = []
    for path in sorted((root / "spcl").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if any(rel == ex.rstrip("/") or rel.startswith(ex.rstrip("/") + "/") for ex in exclude):
            continue
        for line, in_function in internal_imports(path.read_text(encoding="utf-8")):
            total += 1
            if in_function:
                inside += 1
                where.append(f"{rel}:{line}")
    return inside, total, where


def main(argv: list[str] | None = None) -> int:
    """Print the ratio of function-level internal imports (and with ``--list``, where they are)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exclude", nargs="*", default=[], help="paths under spcl/ to leave out")
    parser.add_argument("--list", action="store_true", help="print each function-level import")
    args = parser.parse_args(argv)
    inside, total, where = count(ROOT, tuple(args.exclude))
    if args.list:
        print("\n".join(where))
    print(
        f"function-level internal imports: {inside} of {total} ="
        f" {100 * inside / max(total, 1):.1f} %"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
