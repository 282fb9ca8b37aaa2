"""The file-job skeleton (``spcl.executor.filejob``) on a toy job: plan by content, retries,
refusals of foreign or other-settings results (old ``parts_hash`` markers read too), staging
cleanup, fail-closed markers."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from spcl.executor import JobError, run_local
from spcl.executor.filejob import FileJob, marker_hash
from spcl.executor.state import MarkerError
from spcl.executor.unitpass import DUPLICATE, NEW, UnitPass, UnitRun
from spcl.executor.units import file_key, list_unit_files


@dataclass(slots=True)
class ToyConfig:
    input: str
    output: str
    mode: str = "upper"
    run_id: str = ""

    def release_hash(self) -> str:
        return f"h-{self.mode}"

    def to_json(self) -> str:
        return json.dumps(
            {"input": self.input, "output": self.output, "mode": self.mode, "run_id": self.run_id}
        )

    @classmethod
    def from_json(cls, text: str) -> ToyConfig:
        return cls(**json.loads(text))


class ToyWorker:
    def __init__(self, cfg: ToyConfig) -> None:
        self.cfg = cfg
        self.seen: list[tuple[str, bool]] = []

    def close(self) -> None:
        pass


@dataclass(slots=True, kw_only=True)
class ToyRun(UnitRun):
    out: list[str] = field(default_factory=list)


class ToyJob(FileJob):
    """Upper-cases each line of each ``.txt`` file; a line ``FAIL`` is pending until the file
    changes."""

    config_type: ClassVar[Any] = ToyConfig
    name: ClassVar[str] = "toy"
    ref: ClassVar[str] = "tests.executor.test_filejob:JOB"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    error: ClassVar[type[JobError]] = JobError
    vault_field: ClassVar[str | None] = None
    staging_globs: ClassVar[tuple[str, ...]] = ("parts/.*",)

    def list_units(self, cfg: ToyConfig) -> list[tuple[Path, str]]:
        return [
            (p, file_key(p, cfg.input))
            for p in list_unit_files(cfg.input, lambda p: p.suffix == ".txt")
        ]

    def needs_retry(self, cfg: ToyConfig, marker: dict[str, Any]) -> bool:
        return bool(marker["stats"]["pending"])

    def setup(self, cfg: ToyConfig, clients: dict[str, Any]) -> ToyWorker:
        (self.output(cfg) / self.done_folder).mkdir(parents=True, exist_ok=True)
        return ToyWorker(cfg)

    def check(self, worker: ToyWorker) -> None:
        pass

    def begin(self, worker: ToyWorker, unit: UnitPass) -> ToyRun:
        worker.seen.append((unit.key, unit.prior is not None))
        return ToyRun(unit=unit, settled=None, stats={"pending": 0, "duplicates": 0})

    def read_unit(self, worker: ToyWorker, run: ToyRun) -> Iterator[tuple[list[str], list[str]]]:
        lines = run.unit.path.read_text().splitlines()
        for i in range(0, len(lines), 2):  # batches of two lines, each line its own key
            yield lines[i : i + 2], lines[i : i + 2]

    def take(
        self,
        worker: ToyWorker,
        run: ToyRun,
        keys: Sequence[str],
        batch: list[str],
        picked: list[str],
    ) -> None:
        run.stats["duplicates"] += picked.count(DUPLICATE)
        new = [x for x, verdict in zip(batch, picked, strict=True) if verdict == NEW]
        run.out += [x.upper() for x in new]
        run.stats["pending"] += new.count("FAIL")
        run.records += len(batch)

    def commit(self, worker: ToyWorker, run: ToyRun) -> dict[str, object]:
        (self.output(worker.cfg) / "parts").mkdir(parents=True, exist_ok=True)
        (self.output(worker.cfg) / "parts" / f"{run.unit.key}.txt").write_text("\n".join(run.out))
        return {**run.unit.marker, "stats": run.stats}

    def finish(
        self, cfg: ToyConfig, plan: Any, run: Any, worker: ToyWorker | None
    ) -> dict[str, Any]:
        return {
            "processed": run.files_processed,
            "skipped": run.files_skipped,
            "records": run.records,
        }


JOB = ToyJob()


def _setup(tmp_path: Path) -> ToyConfig:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("x\ny\n")
    (tmp_path / "in" / "b.txt").write_text("FAIL\nz\n")
    return ToyConfig(str(tmp_path / "in"), str(tmp_path / "out"))


def test_a_rerun_skips_done_files_retries_pending_and_redoes_changed(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    assert run_local(JOB, cfg, {}) == {"processed": 2, "skipped": 0, "records": 4}
    # b has a pending line
    assert run_local(JOB, cfg, {}) == {"processed": 1, "skipped": 1, "records": 2}
    plan = JOB.plan(cfg)
    start = JOB.start(cfg, Path(plan.todo[0].path), plan.todo[0].key)
    assert (
        start.prior is not None
        and len(start.marker["runs"]) == 3
        and start.marker["release_hash"] == "h-upper"
    )
    (tmp_path / "in" / "b.txt").write_text("ok\n")  # changed content: from scratch, nothing pending
    start = JOB.start(cfg, Path(plan.todo[0].path), plan.todo[0].key)
    assert start.prior is None and len(start.marker["runs"]) == 1
    assert run_local(JOB, cfg, {})["processed"] == 1 and JOB.plan(cfg).todo == []


def test_the_skeletons_loop_reads_picks_routes_and_commits(tmp_path: Path) -> None:
    """The per-unit loop is the skeleton's: the toy job writes only its hooks; a repeated key is
    a duplicate."""
    cfg = _setup(tmp_path)
    (tmp_path / "in" / "c.txt").write_text("q\nr\nq\n")
    assert run_local(JOB, cfg, {})["records"] == 7
    key = file_key(tmp_path / "in" / "c.txt", cfg.input)
    assert (tmp_path / "out" / "parts" / f"{key}.txt").read_text() == "Q\nR"
    assert json.loads(JOB.marker_path(cfg, key).read_text())["stats"] == {
        "pending": 0,
        "duplicates": 1,
    }


def test_other_settings_and_another_input_are_refused(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    run_local(JOB, cfg, {})
    with pytest.raises(JobError, match="other settings"):
        JOB.plan(ToyConfig(cfg.input, cfg.output, mode="lower"))
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("x\n")
    with pytest.raises(JobError, match="another input"):
        JOB.plan(ToyConfig(str(other), cfg.output))


def test_a_marker_written_as_parts_hash_is_still_read(tmp_path: Path) -> None:
    """Markers of older annotate versions hold the hash as ``parts_hash``: still the unit's hash;
    none at all never passes (fail closed)."""
    cfg = _setup(tmp_path)
    run_local(JOB, cfg, {})
    path = JOB.marker_path(cfg, file_key(tmp_path / "in" / "a.txt", cfg.input))
    marker = json.loads(path.read_text())
    marker["parts_hash"] = marker.pop("release_hash")
    path.write_text(json.dumps(marker))
    assert marker_hash(marker) == "h-upper"
    # a is done; b has a pending line
    assert [Path(u.path).name for u in JOB.plan(cfg).todo] == ["b.txt"]
    del marker["parts_hash"]
    path.write_text(json.dumps(marker))
    with pytest.raises(JobError, match="other settings"):
        JOB.plan(cfg)


def test_a_damaged_marker_stops_the_plan(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    run_local(JOB, cfg, {})
    JOB.marker_path(cfg, file_key(tmp_path / "in" / "a.txt", cfg.input)).write_text(
        '{"stats": [1]}'
    )
    with pytest.raises(MarkerError, match="damaged"):
        JOB.plan(cfg)


def test_committed_needs_the_current_content(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    cfg.run_id = "r1"
    run_local(JOB, cfg, {})
    worker = ToyWorker(cfg)
    unit_a = next(
        u
        for u in JOB.plan(ToyConfig(cfg.input, str(tmp_path / "fresh"))).todo
        if u.path.endswith("a.txt")
    )
    assert JOB.committed(worker, unit_a)
    (tmp_path / "in" / "a.txt").write_text("changed\n")
    assert not JOB.committed(worker, unit_a)


def test_staging_is_cleaned_before_a_run(tmp_path: Path) -> None:
    cfg = _setup(tmp_path)
    stale_dir, stale_file = (
        tmp_path / "out" / "_tmp" / "x",
        tmp_path / "out" / "parts" / ".a.txt.tmp",
    )
    stale_dir.mkdir(parents=True)
    stale_file.parent.mkdir(parents=True)
    stale_file.write_text("half")
    run_local(JOB, cfg, {})
    assert not stale_dir.parent.exists() and not stale_file.exists()


def test_an_unreadable_input_is_the_jobs_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, an input the job could not read surfaced as a bare ``PermissionError`` traceback."""
    import spcl.executor.filejob as filejob

    cfg = _setup(tmp_path)

    def denied(path: Path) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(filejob, "sha256_file", denied)
    with pytest.raises(JobError, match=r"cannot read .*a\.txt: PermissionError"):
        JOB.plan(cfg)
