"""Internal imports at module level, read from the source with ``ast``: the share of spcl's imports
of spcl (``from spcl… import``, ``import spcl…``, relative imports) that sit inside a function stays
under :data:`MAX_FUNCTION_LEVEL_SHARE`, and ``spcl/cli.py`` and ``spcl/commands/`` have none (the
CLI loads a command's module only when that command runs, through the registry in ``spcl.cli``).

A function-level import hides a dependency from the reader and from the import-graph checks' layer
view; it stays only for optional heavy third-party dependencies (torch, vllm, transformers,
pyspark), which this rule does not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPCL = ROOT / "spcl"

MAX_FUNCTION_LEVEL_SHARE = 0.05
"""The ceiling on function-level internal imports / all internal imports in spcl/: 6 of 922 (0.7 %)
once the library's modules moved theirs up and pushed the laziness down into the modules that load a
heavy package (128 of 904, 14.2 %, before; 35.6 % before the CLI's moved). What is left loads an
optional heavy stack on first use: the screen model (LightGBM, SentencePiece, MeCab), pyspark, the
tier's encoders."""

NO_FUNCTION_LEVEL = ("spcl/cli.py", "spcl/commands/")
"""Where no internal import may sit inside a function."""


def _is_internal(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "spcl"
    return any(alias.name.split(".")[0] == "spcl" for alias in node.names)


def internal_imports(source: str) -> tuple[list[int], list[int]]:
    """``(module-level, function-level)`` line numbers of the internal imports in ``source``.

    >>> internal_imports("from spcl.x import a\\nimport os\\n"
    ...                  "def f():\\n    from . import b\\n    import json\\n")
    ([1], [4])
    """
    top: list[int] = []
    inner: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and _is_internal(child):
                (inner if in_function else top).append(child.lineno)
            visit(
                child,
                in_function
                or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda),
            )

    visit(ast.parse(source), False)
    return top, inner


def measure(root: Path) -> tuple[int, int, dict[str, list[int]]]:
    """``(module-level count, function-level count, {file: function-level lines})`` under
    ``root``."""
    top = inner = 0
    where: dict[str, list[int]] = {}
    for path in sorted(root.rglob("*.py")):
        t, i = internal_imports(path.read_text(encoding="utf-8"))
        top += len(t)
        inner += len(i)
        if i:
            where[path.relative_to(root.parent).as_posix()] = i
    return top, inner, where


def test_function_level_share_stays_under_the_ceiling() -> None:
    top, inner, _ = measure(SPCL)
    share = inner / (top + inner)
    assert top + inner > 500  # the scan sees spcl's imports at all
    assert share <= MAX_FUNCTION_LEVEL_SHARE, f"{inner}/{top + inner} = {share:.1%} function-level"


def test_cli_and_commands_import_at_module_level() -> None:
    _, _, where = measure(SPCL)
    assert {f: lines for f, lines in where.items() if f.startswith(NO_FUNCTION_LEVEL)} == {}
