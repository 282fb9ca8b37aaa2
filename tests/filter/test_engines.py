"""Issue 22 (filter driver) and 26 (start-up): the filter as a stage of the executor layer, typed
reports, one model load, the layers ``spcl.spark`` → nothing of the jobs, and a Python worker's
import path free of scikit-learn and pandas."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spcl.cli import main as cli_main
from spcl.filter.job import ENGINES, STAGE, FilterJob, UsageError, run_filter
from spcl.filter.task import DEFAULT_BATCH_ROWS, TaskReport, WorkerTiming
from spcl.io.writers import WrittenFile
from tests.support.paths import ROOT
from tests.support.records import doc_line, write_lines

JOB_PACKAGES = (
    "spcl.filter",
    "spcl.integrations",
    "spcl.mask_stage",
    "spcl.generalize",
    "spcl.annotate",
)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_spark_package_imports_no_job() -> None:
    """``spcl.spark`` is infrastructure: no module of it imports a job package, also inside a
    function."""
    for path in sorted((ROOT / "spcl" / "spark").glob("*.py")):
        bad = {m for m in _imports(path) if m.startswith(JOB_PACKAGES)}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_a_python_worker_imports_neither_scikit_learn_nor_pandas() -> None:
    """What a Spark task imports and builds (the task bodies, detectors, the screen model) leaves
    out lightgbm's optional scikit-learn and pandas layers (≈ 4 s of each worker's start-up) — and
    the model still predicts."""
    code = (
        "import sys; import spcl.filter.spark_tasks; from spcl.filter.batch import context_for;"
        " from spcl.config import load_settings; ctx ="
        " context_for(load_settings(None).model_dump_json()); r = ctx.screen.predict(['연락처는"
        " 010-2345-6789입니다.', 'The library opens at nine.']); print(len(r.lgbm_score), sorted(m"
        " for m in ('sklearn', 'pandas') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["2", "[]"]


def test_lightgbm_hidden_packages_come_back_for_later_imports() -> None:
    code = (
        "import sys; from spcl.screen.lgbm_import import import_lightgbm; lgb = import_lightgbm(); "
        "assert 'sklearn' not in sys.modules; import sklearn; print(type(lgb.Booster).__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr[-2000:]


def _crawl(tmp: Path) -> Path:
    folder = tmp / "crawl"
    folder.mkdir()
    write_lines(
        folder / "a.jsonl",
        [doc_line(f"d{i}", f"연락처는 010-2345-67{i:02d}입니다.") for i in range(5)],
    )
    return folder


def test_the_python_engine_loads_the_model_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The driver checks the artifact (card, format, digests) without building it; the engine
    builds it once."""
    import spcl.screen.model as model

    built: list[int] = []
    real = model.Screen.__init__

    def counting(self, *args, **kw):  # type: ignore[no-untyped-def]
        built.append(1)
        real(self, *args, **kw)

    monkeypatch.setattr(model.Screen, "__init__", counting)
    folder = _crawl(tmp_path)
    assert (
        cli_main(["filter", "-i", str(folder), "-o", str(tmp_path / "o"), "--engine", "python"])
        == 0
    )
    assert len(built) == 1


def test_a_broken_model_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    model = tmp_path / "model"
    shutil.copytree(ROOT / "models" / "screen-default", model)
    (model / "lgbm.txt").write_text("altered")
    folder = _crawl(tmp_path)
    assert (
        cli_main(["filter", "-i", str(folder), "-o", str(tmp_path / "o"), "--model", str(model)])
        == 2
    )
    assert "SHA-256" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_filter_is_a_stage_of_the_executor_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both engines are the executor layer's (``run_local`` / ``run_spark`` with the filter stage):
    no engine classes or driver loop of the filter's own; the stage is a Spark reader (mapInArrow
    over the input)."""
    import spcl.filter.job as job_module
    from spcl.config import load_settings
    from spcl.executor.stage import SparkReader

    assert isinstance(STAGE, SparkReader) and STAGE.ref == "spcl.filter.job:STAGE"
    assert not (ROOT / "spcl" / "filter" / "local.py").exists()
    assert {"PythonEngine", "SparkEngine", "Engine", "engine_for"}.isdisjoint(vars(job_module))
    ran: list[tuple[str, object, object]] = []
    monkeypatch.setattr(
        job_module, "run_local", lambda stage, job: ran.append(("local", stage, job)) or {}
    )
    monkeypatch.setattr(
        job_module,
        "run_spark",
        lambda stage, job, master, submitted: (
            ran.append(("spark", stage, (master, submitted))) or {}
        ),
    )
    settings = load_settings(overrides={"screen.enabled": False})
    job = FilterJob((str(tmp_path),), str(tmp_path / "o"), settings, "python")
    run_filter(job)
    run_filter(
        FilterJob(job.inputs, job.output, settings, "spark", "local[1]", submitted_master=True)
    )
    assert ran == [("local", STAGE, job), ("spark", STAGE, ("local[1]", True))]
    assert set(ENGINES) == {"python", "spark"}
    with pytest.raises(UsageError, match="unknown engine 'dask'"):
        run_filter(FilterJob(job.inputs, job.output, settings, "dask"))


def test_the_python_engine_reads_its_own_batch_size_not_sparks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import spcl.filter.driver as driver
    from spcl.config import load_settings

    sizes: list[int] = []
    real = driver.screen_split

    def recording(*args, batch_rows, **kw):  # type: ignore[no-untyped-def]
        sizes.append(batch_rows)
        return real(*args, batch_rows=batch_rows, **kw)

    monkeypatch.setattr(driver, "screen_split", recording)
    settings = load_settings(overrides={"screen.enabled": False, "spark.batch_rows": 7})
    stats = run_filter(FilterJob((str(_crawl(tmp_path)),), str(tmp_path / "o"), settings, "python"))
    assert stats["reconciliation"]["ok"] and sizes == [DEFAULT_BATCH_ROWS]


def test_a_task_report_travels_as_json_and_back() -> None:
    report = TaskReport(
        "/d/a.jsonl",
        3,
        10,
        0.5,
        {"decision": {"clean": 10}},
        (WrittenFile("decision=clean/part-x.parquet", 10, "ab" * 32, 123),),
        WorkerTiming(42, 1.0, 2.0, 0.5, 3.0, 0.25),
    )
    assert TaskReport.from_json(report.to_json()) == report
    bare = TaskReport("/d/b.jsonl", None, 1, 0.1, {}, ())
    assert TaskReport.from_json(bare.to_json()) == bare


def test_spark_submit_passes_the_master_as_a_flag_not_through_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        import jobs.filter as job_script
    finally:
        sys.path.remove(str(ROOT))
    seen: list[list[str]] = []
    monkeypatch.setattr(job_script, "cli_main", lambda argv: seen.append(argv) or 0)
    monkeypatch.delenv("SPARK_MASTER_SUBMITTED", raising=False)
    assert job_script.main(["--input", "in", "--output", "out"]) == 0
    assert seen == [["filter", "--submitted", "--input", "in", "--output", "out"]]
    assert "SPARK_MASTER_SUBMITTED" not in os.environ
