"""The library's layers, read from the source with ``ast``: no import cycle between spcl's packages,
and no library module importing a dataset builder (``tools``), a benchmark (``spcl.bench``) or the
CLI.

Every ``import``/``from … import`` counts, at module level and inside functions (a lazy import is
still a dependency), with relative imports resolved. A package is ``spcl.<first name>``
(``spcl.detect``, ``spcl.config``); imports inside one package are not edges.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from tests.support.import_graph import library_imports, package_of

ALLOWED_EDGES: frozenset[tuple[str, str]] = frozenset()
"""Package edges left out of the cycle check, each with the reason and when it goes."""

ENTRY_PACKAGES = ("spcl.cli", "spcl.commands")
"""The CLI: the only place that may import the commands and the benchmarks."""
FORBIDDEN_FOR_LIBRARY = ("tools", "spcl.bench", "spcl.commands", "spcl.cli")


def package_edges(imports: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """``(package, imported package)`` → the ``module imports module`` lines behind it (spcl
    packages only)."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, targets in imports.items():
        for target in sorted(targets):
            if target.split(".")[0] != "spcl":
                continue
            a, b = package_of(module), package_of(target)
            if a != b:
                edges[(a, b)].append(f"{module} imports {target}")
    return edges


def cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan), each sorted; sorted by first
    name.

    >>> cycles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")})
    [['a', 'b', 'c']]
    >>> cycles({("a", "b"), ("b", "c")})
    []
    """
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups)


@pytest.fixture(scope="module")
def imports() -> dict[str, set[str]]:
    return library_imports()


def test_the_reader_sees_lazy_and_relative_imports(imports: dict[str, set[str]]) -> None:
    """The graph is not empty by accident: known lazy imports of the library are in it."""
    assert "spcl.spark.progress" in imports["spcl.executor.spark"]  # inside a function
    # inside a function
    assert any(t.startswith("spcl.bench.") for t in imports["spcl.commands.bench"])
    assert len(imports) > 100


def test_no_cycle_between_spcl_packages(imports: dict[str, set[str]]) -> None:
    """Packages form layers: following imports from a package never leads back to it."""
    edges = package_edges(imports)
    found = cycles(set(edges) - ALLOWED_EDGES)
    detail = [
        f"{a} -> {b}: {line}"
        for group in found
        for (a, b), lines in sorted(edges.items())
        if a in group and b in group and (a, b) not in ALLOWED_EDGES
        for line in lines
    ]
    assert not found, "import cycles between packages:\n" + "\n".join(detail)


def test_allowed_edges_still_exist(imports: dict[str, set[str]]) -> None:
    """An allow-list entry whose edge is gone must be deleted (so the list only shrinks)."""
    assert set(package_edges(imports)) >= ALLOWED_EDGES


def test_library_never_imports_builders_benchmarks_or_the_cli(imports: dict[str, set[str]]) -> None:
    """Only ``spcl.cli``/``spcl.commands`` import ``spcl.bench``/``spcl.commands``; nothing
    imports ``tools``."""
    bad = []
    for module, targets in imports.items():
        entry = package_of(module) in ENTRY_PACKAGES
        bench = package_of(module) == "spcl.bench"
        for target in sorted(targets):
            for forbidden in FORBIDDEN_FOR_LIBRARY:
                if target != forbidden and not target.startswith(forbidden + "."):
                    continue
                if forbidden == "tools" or not (entry or (bench and forbidden == "spcl.bench")):
                    bad.append(f"{module} imports {target}")
    assert not bad, "\n".join(bad)


def test_the_helpers_examples() -> None:
    """The examples in this module's docstrings (the reader resolves relative imports, the cycle
    finder)."""
    import doctest
    import sys

    import tests.support.import_graph as reader

    result = doctest.testmod(sys.modules[__name__])
    read = doctest.testmod(reader)
    assert result.attempted + read.attempted >= 4 and result.failed == read.failed == 0


CHAT_SIDE = tuple(
    f"spcl.extract.backends.{m}"
    for m in ("chat", "openai_chat", "transformers_chat", "vllm_chat", "engines")
)
"""The shared chat interface, its clients and the model loaders they use (every stage that talks to
an LLM goes through them)."""
CHAT_MAY_IMPORT = frozenset(
    {f"spcl.extract.backends.{m}" for m in ("chat", "errors", "engines", "transient", "deadline")}
)


def test_the_chat_client_imports_no_extractor_module(imports: dict[str, set[str]]) -> None:
    """``spcl annotate`` and ``spcl generalize`` use the chat clients without the extractor side:
    the chat and engine modules import (anywhere in them) only the chat interface, the shared error,
    the loaders, the transient-failure rules and the request deadline, never the extractor
    interface, an extractor backend, the extract contract or the factory (which builds them:
    ``spcl.extract.backends.registry``)."""
    for module in CHAT_SIDE:
        spcl_imports = {t for t in imports[module] if t.startswith("spcl.")}
        assert spcl_imports <= CHAT_MAY_IMPORT, (
            f"{module} imports {sorted(spcl_imports - CHAT_MAY_IMPORT)}"
        )


def module_edges(imports: dict[str, set[str]]) -> set[tuple[str, str]]:
    """``(module, imported module)`` between spcl modules; a module importing its own package's
    ``__init__`` is left out (a package re-exports its modules: that is not a loop of ideas).

    >>> imports = {"spcl.a": {"spcl.a.b"}, "spcl.a.b": {"spcl.a", "spcl.c"}, "spcl.c": {"json"}}
    >>> sorted(module_edges(imports))
    [('spcl.a', 'spcl.a.b'), ('spcl.a.b', 'spcl.c')]
    """
    modules = set(imports)
    return {
        (m, t)
        for m, targets in imports.items()
        for t in targets
        if t in modules and t != m and not m.startswith(t + ".")
    }


def test_no_cycle_between_spcl_modules(imports: dict[str, set[str]]) -> None:
    """Inside a package too, modules form layers (e.g. ``annotate.job`` and ``annotate.finalize``
    imported each other; the chat client imported the factory that builds it)."""
    found = cycles(module_edges(imports))
    assert not found, f"import cycles between modules: {found}"
