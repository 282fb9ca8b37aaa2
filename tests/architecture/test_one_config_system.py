"""One configuration system, read from the source with ``ast``: a job's settings are a pydantic
model in the registry of job configs (``spcl.job_configs.JOB_CONFIGS``), never a ``@dataclass`` fed
from argparse; a trainer's hyperparameters stored in model cards are pydantic models too
(``spcl.config_models.TrainerSettings``).

A class counts as a config when its name ends in ``Config``, ``Settings`` or ``Section`` (the
spelling of every configuration class spcl has); such a class may not be a dataclass, and every one
that subclasses ``JobConfig`` must be registered.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import BaseModel

from spcl.config_models import JobConfig
from spcl.job_configs import JOB_CONFIGS

ROOT = Path(__file__).resolve().parents[2] / "spcl"
CONFIG_SUFFIXES = ("Config", "Settings", "Section")
TRAINER_SETTINGS: set[str] = set()
"""Dataclass configuration classes still allowed (none: trainers' settings written into model cards
are pydantic models too, :class:`spcl.config_models.TrainerSettings`). The set may only shrink."""


def _is_dataclass_decorator(node: ast.expr) -> bool:
    """``@dataclass``, ``@dataclass(...)``, ``@dataclasses.dataclass(...)``,
    ``@pydantic.dataclasses.dataclass``."""
    target = node.func if isinstance(node, ast.Call) else node
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "dataclass"


def config_classes(root: Path = ROOT) -> list[tuple[str, str, ast.ClassDef]]:
    """``(module path, class name, node)`` of every class whose name says it is a configuration."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith(CONFIG_SUFFIXES):
                out.append((str(path.relative_to(root.parent)), node.name, node))
    return out


def dataclass_configs(root: Path = ROOT) -> list[str]:
    """``path:Class`` of every configuration class declared as a dataclass."""
    return [
        f"{path}:{name}"
        for path, name, node in config_classes(root)
        if any(_is_dataclass_decorator(d) for d in node.decorator_list)
    ]


def test_no_dataclass_configuration_classes() -> None:
    assert set(dataclass_configs()) <= TRAINER_SETTINGS


def test_the_rule_sees_a_dataclass_config(tmp_path: Path) -> None:
    pkg = tmp_path / "spcl"
    pkg.mkdir()
    (pkg / "job.py").write_text(
        "from dataclasses import dataclass\n\n@dataclass(slots=True)\n"
        "class FooJobConfig:\n    input: str\n",
        encoding="utf-8",
    )
    (pkg / "ok.py").write_text("class Row:\n    pass\n", encoding="utf-8")
    assert dataclass_configs(pkg) == ["spcl/job.py:FooJobConfig"]


def test_every_job_config_is_a_registered_pydantic_model() -> None:
    assert set(JOB_CONFIGS) == {"filter", "mask", "generalize", "annotate"}
    for job, model in JOB_CONFIGS.items():
        assert issubclass(model, BaseModel), job
    registered = set(JOB_CONFIGS.values())
    declared = job_config_subclasses()
    assert {"MaskJobConfig", "GeneralizeJobConfig"} <= {name for _, name in declared}, (
        "the rule reads nothing"
    )
    # registered, or a shared base of registered ones (ExtractionJobConfig)
    for path, name in declared:
        assert any(name in {c.__name__ for c in m.__mro__} for m in registered), (
            f"{path}:{name} is not in JOB_CONFIGS"
        )


def job_config_subclasses() -> list[tuple[str, str]]:
    """``(path, class name)`` of every configuration class deriving from ``JobConfig`` directly or
    through another such class (by base names, read with ``ast``)."""
    classes = config_classes()
    names, found = {"JobConfig"}, True
    while found:
        found = False
        for _, name, node in classes:
            if name not in names and any(
                isinstance(b, ast.Name) and b.id in names for b in node.bases
            ):
                names.add(name)
                found = True
    return [(path, name) for path, name, _ in classes if name in names]


def test_job_configs_validate_with_the_key_named_and_no_value() -> None:
    import pytest

    from spcl.config_models import ConfigError

    secret = "s3cr3t-value-9931"
    for model in (m for m in JOB_CONFIGS.values() if issubclass(m, JobConfig)):
        with pytest.raises(ConfigError) as err:
            model(input=secret, output=secret, vault=secret, batch_size=secret, teachers=[])
        assert "batch_size" in str(err.value) and secret not in str(err.value)
