"""One file-job skeleton: the resumable file jobs (mask, generalize, annotate) run on
``spcl.executor.filejob.FileJob`` and keep only their hooks, read from the source with ``ast``.

No job module writes its own per-file loop, plan or staging cleanup again (``process_file``,
``pending_files``, ``plan_files``, ``clean_staging``, ``_prior``, ``needs_work``), and each job's stage class
subclasses ``FileJob``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JOB_PACKAGES = ("spcl/mask_stage", "spcl/generalize", "spcl/annotate")
STAGES = {"spcl/mask_stage/run.py": "MaskStage", "spcl/generalize/job.py": "GeneralizeStage",
          "spcl/annotate/job.py": "AnnotateStage"}
SKELETON_ONLY = frozenset({"process_file", "pending_files", "plan_files", "clean_staging", "_clean_staging",
                           "_prior", "needs_work"})
"""What the skeleton does once: no job module defines a function or method of these names."""


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


@pytest.mark.parametrize(("module", "cls"), sorted(STAGES.items()))
def test_each_job_stage_runs_on_the_skeleton(module: str, cls: str) -> None:
    assert base_names(ROOT / module, cls) == ["FileJob"]


def test_the_rule_catches_a_job_that_writes_its_own_loop(tmp_path: Path) -> None:
    rogue = tmp_path / "job.py"
    rogue.write_text("class Runner:\n    def process_file(self, path, key):\n        return 0\n"
                     "def pending_files(cfg):\n    return []\n", encoding="utf-8")
    assert defined_functions(rogue) & SKELETON_ONLY == {"process_file", "pending_files"}
    assert base_names(rogue, "Runner") == []
