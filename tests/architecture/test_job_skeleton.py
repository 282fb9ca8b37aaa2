"""One file-job skeleton: the resumable file jobs (mask, generalize, annotate) run on
``spcl.executor.filejob.FileJob`` and keep only their hooks, read from the source with ``ast``.

No job module writes its own per-file loop, plan or staging cleanup again (``run_unit``,
``process_file``, ``pending_files``, ``plan_files``, ``clean_staging``, ``_prior``, ``needs_work``,
the old per-file loops), nor stages, keeps or commits a unit's outputs itself (``staging_area``,
``keep_settled``, ``commit_unit``); a unit's records are read only in a ``read_unit`` hook (the
per-record loop is the skeleton's); and each job's stage class subclasses ``FileJob``.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from spcl.executor.filejob import FileJob

ROOT = Path(__file__).resolve().parents[2]
JOB_PACKAGES = ("spcl/mask_stage", "spcl/generalize", "spcl/annotate")
STAGES = {
    "spcl/mask_stage/run.py": "MaskStage",
    "spcl/generalize/job.py": "GeneralizeStage",
    "spcl/annotate/job.py": "AnnotateStage",
}
SKELETON_ONLY = frozenset(
    {
        "run_unit",
        "process_file",
        "pending_files",
        "plan_files",
        "clean_staging",
        "_clean_staging",
        "_prior",
        "needs_work",
        "mask_file",
        "generalize_file",
        "annotate_file",
    }
)
"""What the skeleton does once: no job module defines a function or method of these names."""
SKELETON_CALLS = frozenset({"staging_area", "keep_settled", "commit_unit"})
"""How the skeleton stages, keeps and commits a unit's outputs: no job module names them."""
READERS = frozenset({"read_rows", "read_records", "iter_batches"})
"""Calls that read a unit's records: in a job module only inside a ``read_unit`` hook."""
READER_MODULES = frozenset({"spcl/mask_stage/inputs.py"})
"""Modules that are readers themselves (``read_rows`` is the mask job's reader)."""


def job_modules() -> list[Path]:
    """Every module of the job packages."""
    return sorted(p for pkg in JOB_PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def defined_functions(path: Path) -> set[str]:
    """Names of every function and method ``path`` defines, at any depth.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = f.write_text("class A:\\n    def process_file(self): ...\\ndef g(): ...\\n")
    >>> sorted(defined_functions(f))
    ['g', 'process_file']
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def names_used(path: Path) -> set[str]:
    """Every name ``path`` refers to or imports (``x``, ``m.x``, ``from m import x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    found |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return found | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
    }


def reads_outside_read_unit(path: Path) -> list[str]:
    """``function: reader`` for each call of a :data:`READERS` function outside a ``read_unit``
    hook.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = f.write_text("def read_unit(s):\\n    yield from read_rows(1)\\n"
    ...                  "def run(p):\\n    pf.iter_batches()\\n")
    >>> reads_outside_read_unit(f)
    ['run: iter_batches']
    """
    found = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(fn, ast.FunctionDef) or fn.name == "read_unit":
            continue
        for call in ast.walk(fn):
            if isinstance(call, ast.Call):
                name = (
                    call.func.id
                    if isinstance(call.func, ast.Name)
                    else getattr(call.func, "attr", "")
                )
                if name in READERS:
                    found.append(f"{fn.name}: {name}")
    return found


def base_names(path: Path, cls: str) -> list[str]:
    """The base class names of class ``cls`` in ``path`` (empty when absent)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return [b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases]
    return []


def test_the_job_packages_are_found() -> None:
    assert len(job_modules()) > 10 and all((ROOT / p).is_file() for p in STAGES)


@pytest.mark.parametrize("path", job_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_job_module_writes_the_skeleton_again(path: Path) -> None:
    assert not defined_functions(path) & SKELETON_ONLY


@pytest.mark.parametrize("path", job_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_job_module_stages_keeps_or_commits_a_unit_itself(path: Path) -> None:
    assert not names_used(path) & SKELETON_CALLS


@pytest.mark.parametrize("path", job_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_job_reads_a_units_records_only_in_its_read_unit_hook(path: Path) -> None:
    if path.relative_to(ROOT).as_posix() not in READER_MODULES:
        assert reads_outside_read_unit(path) == []


@pytest.mark.parametrize(("module", "cls"), sorted(STAGES.items()))
def test_each_job_stage_runs_on_the_skeleton(module: str, cls: str) -> None:
    stage = getattr(importlib.import_module(module.removesuffix(".py").replace("/", ".")), cls)
    assert issubclass(stage, FileJob) and stage.run_unit is FileJob.run_unit
    assert base_names(ROOT / module, cls) in (["FileJob"], ["VaultJob"])


def test_the_rule_catches_a_job_that_writes_its_own_loop(tmp_path: Path) -> None:
    rogue = tmp_path / "job.py"
    rogue.write_text(
        "class Runner:\n    def process_file(self, path, key):\n        return 0\n"
        "def pending_files(cfg):\n    return []\n",
        encoding="utf-8",
    )
    assert defined_functions(rogue) & SKELETON_ONLY == {"process_file", "pending_files"}
    assert base_names(rogue, "Runner") == []
    rogue.write_text(
        "from spcl.executor.state import commit_unit\nclass Runner:\n    def run(self, path):\n"
        "        for rows in read_rows(path, 'k', 8):\n            commit_unit(rows)\n",
        encoding="utf-8",
    )
    assert names_used(rogue) & SKELETON_CALLS == {"commit_unit"}
    assert reads_outside_read_unit(rogue) == ["run: read_rows"]
