"""One JSONL reader: no module outside ``spcl/io`` decodes a file line by line with ``json.loads``.

Read with ``ast``: a ``json.loads`` call inside a ``for`` loop or a comprehension whose iterable is
a file (a name bound by ``with …open(…) as name``, a name assigned from such a file, or a
``.splitlines()``, ``.readlines()``, ``.read_text()`` or ``open(…)`` call) fails. Such modules read
through ``spcl.io.jsonl`` (``iter_jsonl`` / ``read_jsonl_objects``), which keeps the record-size cap
and turns every bad line into a reason instead of a dropped line or a value in a message.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPCL = ROOT / "spcl"

ALLOWED: frozenset[str] = frozenset()
"""Modules outside ``spcl/io`` allowed their own JSON-lines loop, each with its reason (none
today)."""
FILE_CALLS = frozenset({"splitlines", "readlines", "read_text", "open"})


def _is_json_loads(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "loads"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "json"
    )


def _call_name(node: ast.Call) -> str:
    func = node.func
    return (
        func.attr
        if isinstance(func, ast.Attribute)
        else func.id
        if isinstance(func, ast.Name)
        else ""
    )


def _file_like(expr: ast.AST, files: set[str]) -> bool:
    """True when ``expr`` reads a file: a known file name, or a call that opens or splits one."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in files:
            return True
        if isinstance(node, ast.Call) and (
            _call_name(node) in FILE_CALLS or _call_name(node).endswith("open")
        ):
            return True
    return False


def _reads_file(value: ast.AST, files: set[str]) -> bool:
    """True for an opening/splitting call, or a comprehension over a file (``lines = [l for l in
    fh]``)."""
    if isinstance(value, ast.Call):
        name = _call_name(value)
        return name in FILE_CALLS or name.endswith("open")
    if isinstance(value, ast.ListComp | ast.GeneratorExp):
        return any(_file_like(g.iter, files) for g in value.generators)
    return False


def _file_names(scope: ast.AST) -> set[str]:
    """Names in ``scope`` bound to an open file or to values read from one (to a fixed point)."""
    files: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(scope):
            pairs: list[tuple[ast.AST, ast.AST]] = []
            if isinstance(node, ast.With):
                pairs = [(i.optional_vars, i.context_expr) for i in node.items if i.optional_vars]
            elif isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            for target, value in pairs:
                if (
                    isinstance(target, ast.Name)
                    and target.id not in files
                    and _reads_file(value, files)
                ):
                    files.add(target.id)
                    changed = True
    return files


def loops_decoding_files(source: str) -> list[int]:
    """Line numbers of ``json.loads`` calls inside a loop or comprehension over a file.

    >>> loops_decoding_files("import json\\nwith open(p) as fh:\\n"
    ...                      "    for l in fh:\\n        json.loads(l)\\n")
    [4]
    >>> loops_decoding_files("import json\\nfor part in parts:\\n    json.loads(part)\\n")
    []
    >>> loops_decoding_files("import json\\n"
    ...                      "rows = [json.loads(x) for x in p.read_text().splitlines()]\\n")
    [2]
    """
    tree = ast.parse(source)
    found: set[int] = set()
    scopes = [
        tree,
        *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)),
    ]
    for scope in scopes:
        found.update(_in_scope(scope))
    return sorted(found)


def _in_scope(scope: ast.AST) -> set[int]:
    """``json.loads`` lines in loops over files of one scope (file names are looked up in that
    scope)."""
    files = _file_names(scope)
    found: set[int] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.For | ast.AsyncFor) and _file_like(node.iter, files):
            bodies: list[ast.AST] = [*node.body, *node.orelse]
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) and any(
            _file_like(g.iter, files) for g in node.generators
        ):
            bodies = [node]
        else:
            continue
        for body in bodies:
            found.update(n.lineno for n in ast.walk(body) if _is_json_loads(n))
    return found


def _allowed(rel: str) -> bool:
    return rel.startswith("spcl/io/") or any(rel == a or rel.startswith(a + "/") for a in ALLOWED)


def test_no_json_loads_loop_over_a_file_outside_spcl_io() -> None:
    offenders = []
    for path in sorted(SPCL.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if _allowed(rel):
            continue
        offenders += [
            f"{rel}:{line}" for line in loops_decoding_files(path.read_text(encoding="utf-8"))
        ]
    assert not offenders, (
        "read JSONL through spcl.io.jsonl, not json.loads in a loop: " + ", ".join(offenders)
    )
