"""No library function takes a long list of positional arguments (read from the source with
``ast``).

A call like ``_output(a, b, c, …)`` with a dozen positional values is easy to get wrong in an order
nobody checks; past :data:`MAX_POSITIONAL` parameters a function bundles them (a dataclass) or makes
the rest keyword-only (after ``*``). ``self``/``cls`` do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_POSITIONAL = 7

ALLOWED: frozenset[str] = frozenset(
    {
        # public entry points whose parameters all have defaults;
        # each goes when its file is next edited (make the tail keyword-only)
        "spcl.bench.filter:run_filter_bench",  # bench filter (gstart)
        "spcl.bench.screen:bench_screen",  # bench screen
    }
)
"""``module:function`` entries left out of the check, each with the reason (the list only
shrinks)."""


def positional_count(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Parameters a caller can pass by position, ``self``/``cls`` not counted.

    >>> positional_count(ast.parse("def f(self, a, b=1, *args, c, **kw): pass").body[0])
    2
    >>> positional_count(ast.parse("def f(a, /, b, *, c): pass").body[0])
    2
    """
    params = [*node.args.posonlyargs, *node.args.args]
    if params and params[0].arg in ("self", "cls"):
        params = params[1:]
    return len(params)


def long_signatures(root: Path = ROOT) -> dict[str, int]:
    """``module:function`` → positional parameters, for every function under ``root/spcl`` above
    the limit."""
    found = {}
    for path in sorted((root / "spcl").rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and positional_count(node) > MAX_POSITIONAL
            ):
                found[f"{module}:{node.name}"] = positional_count(node)
    return found


def test_no_function_takes_a_long_positional_list() -> None:
    """Every function above the limit is on the allow-list (the job functions that were are not)."""
    extra = {name: n for name, n in long_signatures().items() if name not in ALLOWED}
    assert not extra, (
        f"more than {MAX_POSITIONAL} positional parameters (bundle them or use *): {extra}"
    )


def test_the_check_sees_a_long_signature(tmp_path: Path) -> None:
    """The reader is not blind: a function with eight positional parameters is found, one with
    ``*`` is not."""
    (tmp_path / "spcl").mkdir()
    (tmp_path / "spcl" / "toy.py").write_text(
        "def long(a, b, c, d, e, f, g, h):\n    pass\n\n"
        "def fine(a, b, c, *, d, e, f, g, h):\n    pass\n"
    )
    assert long_signatures(tmp_path) == {"spcl.toy:long": 8}


def test_allowed_entries_still_exist() -> None:
    """An allow-list entry that is fixed must be deleted (so the list only shrinks)."""
    assert set(long_signatures()) >= ALLOWED
