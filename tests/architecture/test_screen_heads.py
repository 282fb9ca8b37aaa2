"""Only ``spcl/screen/`` knows the screen's heads by name: no code elsewhere in ``spcl/`` names
``lgbm``, ``svc``, LightGBM or LinearSVC (read with ``ast``: identifiers, attribute names, arguments
and string literals; docstrings may describe the shipped heads). Consumers (report, review,
evaluation, tier, filter, Spark) read a generic result (scores by head, the decision, the reasons)
with the heads listed by the model, so a third head or another kind touches no code outside the
screen package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAD_NAMES = re.compile(r"lgbm|svc|lightgbm|linearsvc", re.IGNORECASE)
OWNER = ROOT / "spcl" / "screen"
ALLOWED: dict[str, str] = {
    "spcl/io/schema.py": (
        "the persisted output schema's default scores struct (the shipped kind's); spcl.io is the"
        " layer below the screen (the screen reads through it), so it cannot import the screen's"
        " head list"
    ),
}
"""Modules outside ``spcl/screen/`` still allowed to name a head, each with the reason."""


def _docstrings(tree: ast.AST) -> set[int]:
    """``id()`` of every docstring constant (module, class, function) and attribute docstring in
    ``tree``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            is_doc = (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            )
            if is_doc and (i == 0 or isinstance(body[i - 1], ast.Assign | ast.AnnAssign)):
                out.add(id(stmt.value))
    return out


def head_names(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every identifier or non-docstring string literal in ``source`` naming a
    screen head.

    >>> head_names('x = scores["lgbm"]\\ndef f(svc_flag):\\n'
    ...            '    "LinearSVC only in a docstring."\\n')
    [(1, 'lgbm'), (2, 'svc_flag')]
    >>> head_names('y = res.lgbm_score\\nfrom m import LGBM_EDGES as E')
    [(1, 'lgbm_score'), (2, 'LGBM_EDGES')]
    """
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            names.append(node.value)
        elif isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.Attribute):
            names.append(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
            names.append(node.arg)
        elif isinstance(node, ast.alias):
            names += [node.name, node.asname or ""]
        found += [(getattr(node, "lineno", 0), n) for n in names if HEAD_NAMES.search(n)]
    return sorted(set(found))


def test_screen_heads_are_named_only_in_the_screen_package() -> None:
    """Outside ``spcl/screen/``, no module of ``spcl/`` names a screen head."""
    leaks = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in sorted((ROOT / "spcl").rglob("*.py"))
        if OWNER not in path.parents and path.relative_to(ROOT).as_posix() not in ALLOWED
        for line, text in head_names(path.read_text(encoding="utf-8"))
    ]
    assert not leaks, "screen head names outside spcl/screen/:\n" + "\n".join(leaks)


def test_the_rule_sees_a_leak() -> None:
    """The check finds a head named by a string, an attribute and a keyword, and skips
    docstrings."""
    src = (
        'def f(r):\n    """lgbm here is prose."""\n    return r.svc_flag, g(lgbm=1),'
        ' r.scores["lgbm"]\n'
    )
    assert head_names(src) == [(3, "lgbm"), (3, "svc_flag")]
