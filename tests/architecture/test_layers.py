"""spcl's packages sit in seven layers (drawn in ``docs/architecture.md``); an import only goes
sideways or down.

Every package of ``spcl`` must be named in :data:`LAYERS`, so a new package is placed on purpose.
Imports inside functions count too (a lazy import is still a dependency);
``tests/architecture/test_import_graph.py`` adds that packages of one layer import each other
without a cycle.
"""

from __future__ import annotations

from tests.support.import_graph import library_imports, package_of

LAYERS: dict[int, tuple[str, ...]] = {
    0: (
        "spcl",
        "spcl.errors",
        "spcl.artifacts",
        "spcl.cache",
        "spcl.labels",
        "spcl.messages",
        "spcl.operator_types",
        "spcl.progress",
        "spcl.resources",
        "spcl.rule_types",
        "spcl.text",
        "spcl.entity_types",
        "spcl.config",
        "spcl.config_models",
    ),
    1: ("spcl.io", "spcl.manifest"),
    2: ("spcl.detect", "spcl.mask", "spcl.extract", "spcl.synth", "spcl.screen", "spcl.tier"),
    3: ("spcl.evaluate", "spcl.review", "spcl.report", "spcl.finetune"),
    4: ("spcl.spark", "spcl.executor"),
    5: (
        "spcl.filter",
        "spcl.mask_stage",
        "spcl.generalize",
        "spcl.annotate",
        "spcl.integrations",
        "spcl.job_configs",
    ),
    6: ("spcl.bench", "spcl.cli", "spcl.commands"),
}
"""0 foundation, 1 data, 2 detectors and models, 3 quality tools, 4 execution, 5 jobs, 6 entry
points."""

LAYER_OF = {package: layer for layer, packages in LAYERS.items() for package in packages}


def upward_imports(graph: dict[str, set[str]] | None = None) -> list[str]:
    """``module -> imported`` for every import from a lower layer into a higher one (of spcl's
    source, or of ``graph``: module -> the modules it imports)."""
    found = []
    for module, imported in sorted((library_imports() if graph is None else graph).items()):
        mine = LAYER_OF.get(package_of(module), -1)
        for target in sorted(imported):
            if target.startswith("spcl") and LAYER_OF.get(package_of(target), -1) > mine:
                found.append(f"{module} -> {target}")
    return found


def test_every_package_has_a_layer() -> None:
    packages = {package_of(m) for m in library_imports()}
    assert sorted(packages - set(LAYER_OF)) == []


def test_no_import_goes_up_a_layer() -> None:
    assert upward_imports() == []


def test_the_rule_sees_an_upward_import() -> None:
    """The check is not vacuous: the executor (4) importing a job (5) is reported, sideways and
    down are not."""
    graph = {"spcl.executor.stage": {"spcl.mask_stage.run", "spcl.io.jsonl", "spcl.spark.session"}}
    assert upward_imports(graph) == ["spcl.executor.stage -> spcl.mask_stage.run"]
    assert len(library_imports()) > 200
