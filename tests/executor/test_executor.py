"""The executor layer: a toy stage shows the protocol's promises (set up once per worker, every unit
to do processed in plan order into a typed report, teardown even on failure, a committed unit
skipped by a retried Spark task, a stopped Spark job a one-line error of the stage), and the jobs
share its pieces."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from spcl.executor import JobError, Plan, RunInfo, Unit, UnitReport, run_local, run_spark
from spcl.executor import spark as spark_executor
from spcl.progress import Progress

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class ToyConfig:
    """A toy job: ``units`` to do, ``done`` already; ``fail_on`` makes that unit raise."""

    units: list[str]
    done: int = 0
    fail_on: str = ""
    run_id: str = ""
    input: str = "in"

    def to_json(self) -> str:
        return json.dumps(self.__dict__)


class ToyWorker:
    def __init__(self) -> None:
        self.processed: list[str] = []
        self.closed = False


class ToyStage:
    """Records what the executor asked it (a stand-in job: its units are names, its work counts
    letters)."""

    name: ClassVar[str] = "toy"
    ref: ClassVar[str] = "tests.executor.test_executor:TOY"
    path_fields: ClassVar[tuple[str, ...]] = ("input",)
    error: ClassVar[type[JobError]] = JobError
    setup_when_idle: ClassVar[bool] = False

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.workers: list[ToyWorker] = []
        self.committed_keys: set[str] = set()

    def config_from_json(self, text: str) -> ToyConfig:
        return ToyConfig(**json.loads(text))

    def prepare(self, cfg: ToyConfig) -> ToyConfig:
        return (
            cfg if cfg.run_id else ToyConfig(cfg.units, cfg.done, cfg.fail_on, "run-1", cfg.input)
        )

    def plan(self, cfg: ToyConfig) -> Plan:
        self.calls.append("plan")
        return Plan([Unit(f"/in/{u}", u) for u in cfg.units], cfg.done, context="ctx")

    def before(self, cfg: ToyConfig, plan: Plan, engine: str) -> None:
        self.calls.append(f"before:{engine}")

    def setup(self, cfg: ToyConfig, clients: dict[str, Any]) -> ToyWorker:
        self.calls.append("setup")
        self.workers.append(ToyWorker())
        self.fail_on = cfg.fail_on
        return self.workers[-1]

    def check(self, worker: ToyWorker) -> None:
        self.calls.append("check")

    def committed(self, worker: ToyWorker, unit: Unit) -> bool:
        return unit.key in self.committed_keys

    def progress_total(self, plan: Plan) -> int | None:
        return None

    def progress_work(self, plan: Plan) -> int | None:
        return None

    def process(
        self, worker: ToyWorker, unit: Unit, progress: Progress | None = None
    ) -> UnitReport:
        if unit.key == self.fail_on:
            raise RuntimeError("unit failed")
        worker.processed.append(unit.key)
        return UnitReport(unit.key, len(unit.key))

    def teardown(self, worker: ToyWorker) -> None:
        worker.closed = True
        self.calls.append("teardown")

    def finish(
        self, cfg: ToyConfig, plan: Plan, run: RunInfo, worker: ToyWorker | None
    ) -> dict[str, Any]:
        self.calls.append("finish")
        return {
            "run_id": cfg.run_id,
            "context": plan.context,
            "engine": run.engine,
            "processed": run.files_processed,
            "skipped": run.files_skipped,
            "records": run.records,
            "reports": run.reports,
            "worker": worker is not None,
        }


TOY = ToyStage()


@pytest.fixture()
def toy(monkeypatch: pytest.MonkeyPatch) -> ToyStage:
    stage = ToyStage()
    monkeypatch.setattr(f"{__name__}.TOY", stage)
    monkeypatch.setattr(spark_executor, "_WORKERS", {})
    return stage


def test_local_executor_sets_up_once_processes_in_order_and_finishes(toy: ToyStage) -> None:
    out = run_local(toy, ToyConfig(["bb", "a", "ccc"], done=2))
    assert toy.calls == ["plan", "before:python", "setup", "check", "finish", "teardown"]
    assert (
        len(toy.workers) == 1
        and toy.workers[0].processed == ["bb", "a", "ccc"]
        and toy.workers[0].closed
    )
    assert out["run_id"] == "run-1" and out["context"] == "ctx" and out["engine"] == "python"
    assert (out["processed"], out["skipped"], out["records"]) == (3, 2, 6)
    assert out["reports"] == [UnitReport("bb", 2), UnitReport("a", 1), UnitReport("ccc", 3)]


def test_nothing_to_do_sets_up_no_worker_unless_the_stage_asks(toy: ToyStage, monkeypatch) -> None:
    assert run_local(toy, ToyConfig([], done=4))["worker"] is False and "setup" not in toy.calls
    monkeypatch.setattr(ToyStage, "setup_when_idle", True)
    assert run_local(toy, ToyConfig([]))["worker"] is True and "check" not in toy.calls


def test_a_failing_unit_still_tears_the_worker_down(toy: ToyStage) -> None:
    with pytest.raises(RuntimeError, match="unit failed"):
        run_local(toy, ToyConfig(["a", "b", "c"], fail_on="b"))
    assert toy.workers[0].processed == ["a"] and toy.workers[0].closed and "finish" not in toy.calls


def test_spark_body_sets_up_once_per_process_and_skips_committed_units(toy: ToyStage) -> None:
    cfg_json = ToyConfig(["a"], run_id="r").to_json()
    first = list(spark_executor.process_partition(TOY.ref, cfg_json, [("/in/a", "a")]))
    toy.committed_keys = {"b"}  # a retried task: this run committed b already
    second = list(
        spark_executor.process_partition(TOY.ref, cfg_json, [("/in/b", "b"), ("/in/cc", "cc")])
    )
    assert toy.calls.count("setup") == 1
    assert [UnitReport.from_dict(json.loads(line)) for line in first + second] == [
        UnitReport("a", 1),
        UnitReport("cc", 2),
    ]


def test_a_stopped_spark_job_is_the_stages_one_line_error(toy: ToyStage, monkeypatch) -> None:
    class TaskFailed(Exception):
        pass

    def fail(*args: object) -> list[str]:
        raise TaskFailed("Py4J trace with document text 010-1234-5678")

    monkeypatch.setattr(spark_executor, "build_session", lambda *a, **k: object())
    monkeypatch.setattr(spark_executor, "run_per_file", fail)
    with pytest.raises(JobError) as err:
        run_spark(toy, ToyConfig(["a"]))
    assert (
        "TaskFailed" in str(err.value)
        and "010" not in str(err.value)
        and err.value.__cause__ is None
    )
    assert toy.calls == ["plan", "before:spark"]


def test_run_spark_hands_the_submitted_flag_to_the_session(toy: ToyStage, monkeypatch) -> None:
    seen: list[tuple[object, object, object]] = []

    def session(
        settings: object,
        master: object = None,
        app_name: object = None,
        submitted: bool = False,
        preload: tuple[str, ...] = (),
    ) -> object:
        seen.append((master, submitted, preload))
        return object()

    monkeypatch.setattr(spark_executor, "build_session", session)
    monkeypatch.setattr(spark_executor, "run_per_file", lambda *a: [])
    run_spark(toy, ToyConfig(["a"]))
    run_spark(toy, ToyConfig(["a"]), "local[1]", submitted=True)
    assert seen == [(None, False, ()), ("local[1]", True, ())]  # a per-unit stage preloads nothing


JOB_ARGS = {
    "mask": ["--input", "in", "--output", "out", "--vault", "v"],
    "generalize": ["--input", "in", "--output", "out", "--vault", "v"],
    "annotate": [
        "--input",
        "in",
        "--output",
        "out",
        "--teacher",
        "openai:m@http://127.0.0.1:9/v1",
        "--teacher",
        "openai:n@http://127.0.0.1:9/v1",
    ],
}
JOB_RUNNERS = {
    "mask": ("spcl.mask_stage", "run_mask_job_spark"),
    "generalize": ("spcl.generalize.job", "run_generalize_job_spark"),
    "annotate": ("spcl.annotate.job", "run_annotate_spark"),
}


@pytest.mark.parametrize("job", sorted(JOB_ARGS))
def test_the_jobs_scripts_say_submitted_with_a_flag_not_the_environment(
    job: str, monkeypatch, tmp_path: Path
) -> None:
    """jobs/{mask,generalize,annotate}.py pass ``--submitted`` down to the job's Spark runner (the
    filter's script does the same); nothing is put in the environment."""
    import importlib
    import os
    import sys

    from spcl.spark import JavaMissing

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    try:
        script = importlib.import_module(f"jobs.{job}")
    finally:
        sys.path.pop(0)
    seen: list[tuple[object, object]] = []

    def runner(cfg: object, master: object = None, submitted: bool = False) -> dict[str, Any]:
        seen.append((master, submitted))
        raise JavaMissing("no Java in this test")

    module, name = JOB_RUNNERS[job]
    monkeypatch.setattr(importlib.import_module(module), name, runner)
    monkeypatch.delenv("SPARK_MASTER_SUBMITTED", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPCL_VAULT_KEY", bytes(range(32)).hex())
    (tmp_path / "in").mkdir()
    assert script.main(JOB_ARGS[job]) == 1
    assert script.main([*JOB_ARGS[job], "--master", "local[1]"]) == 1
    assert seen == [(None, True), ("local[1]", True)]
    assert "SPARK_MASTER_SUBMITTED" not in os.environ


def test_the_jobs_share_one_error_and_run_on_the_executor() -> None:
    from spcl.annotate.job import STAGE as ANNOTATE
    from spcl.annotate.job import AnnotateError
    from spcl.generalize.job import STAGE as GENERALIZE
    from spcl.mask_stage import MaskJobError
    from spcl.mask_stage.run import STAGE as MASK

    assert (
        MaskJobError is JobError
        and issubclass(AnnotateError, JobError)
        and GENERALIZE.error is JobError
    )
    assert [s.ref for s in (MASK, GENERALIZE, ANNOTATE)] == [
        "spcl.mask_stage.run:STAGE",
        "spcl.generalize.job:STAGE",
        "spcl.annotate.job:STAGE",
    ]
    for stage in (MASK, GENERALIZE, ANNOTATE):
        assert spark_executor.resolve_stage(stage.ref) is stage


def _spcl_imports(path: Path) -> set[str]:
    """Every ``spcl.*`` module a file imports, at the top or inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("spcl"):
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("spcl")}
    return names


def test_job_packages_keep_only_their_own() -> None:
    """annotate's job and finalize do not import each other in a loop; generalize takes nothing of
    the mask job's plumbing (inputs, state, config, run); no job keeps a Spark body of its own."""
    assert "spcl.annotate.job" not in _spcl_imports(ROOT / "spcl/annotate/finalize.py")
    plumbing = {
        "spcl.mask_stage",
        "spcl.mask_stage.inputs",
        "spcl.mask_stage.state",
        "spcl.mask_stage.config",
        "spcl.mask_stage.run",
        "spcl.mask_stage.metrics",
    }
    assert not _spcl_imports(ROOT / "spcl/generalize/job.py") & plumbing
    for job in ("spcl/annotate/job.py", "spcl/generalize/job.py", "spcl/mask_stage/run.py"):
        text = (ROOT / job).read_text(encoding="utf-8")
        assert (
            "def process_partition" not in text
            and "_RUNNERS" not in text
            and "build_session" not in text
        )


def test_annotate_refuses_an_out_folder_inside_its_input(tmp_path: Path, capsys) -> None:
    """Before, ``--output`` inside ``--input`` was accepted: a rerun would read its own
    labelled.jsonl as input."""
    from spcl.cli import main

    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "a.jsonl").write_text(
        json.dumps({"id": "1", "text": "김가상 씨는 병원에 갔다."}, ensure_ascii=False) + "\n"
    )
    rc = main(
        [
            "annotate",
            "--input",
            str(inp),
            "--output",
            str(inp / "ann"),
            "--teacher",
            "openai:a@http://127.0.0.1:9/v1",
            "--teacher",
            "openai:b@http://127.0.0.1:9/v1",
            "--retries",
            "0",
        ]
    )
    assert rc == 2 and "lies inside input" in capsys.readouterr().err
    assert not (inp / "ann").exists()


def test_commit_unit_moves_the_vault_first_refuses_to_replace_one_and_removes_empty_parts(
    tmp_path: Path,
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spcl.executor.state import commit_unit

    tmp, vault = tmp_path / "tmp", tmp_path / "vault"
    for d in (tmp, vault, tmp_path / "failed", tmp_path / "masked"):
        d.mkdir()
    failed, masked = tmp_path / "failed" / "part-k.parquet", tmp_path / "masked" / "part-k.parquet"
    failed.write_text("a killed run's leftover")
    staged = tmp / "w.jsonl"
    staged.write_text("mapping\n")
    rows = pa.table({"id": ["1", "2"]})
    commit_unit(staged, vault / "w.jsonl", [(failed, rows.slice(0, 0)), (masked, rows)], tmp)
    assert (vault / "w.jsonl").read_text() == "mapping\n" and not staged.exists()
    assert not failed.exists() and pq.read_table(masked).column("id").to_pylist() == ["1", "2"]
    # the same writer name again: never replace a mapping, move no part
    staged.write_text("other mapping\n")
    with pytest.raises(JobError, match=r"vault file w\.jsonl already exists"):
        commit_unit(staged, vault / "w.jsonl", [(masked, rows.slice(0, 1))], tmp)
    assert (vault / "w.jsonl").read_text() == "mapping\n" and pq.read_table(masked).num_rows == 2
