"""One run at a time per output folder: a second mask (or generalize) run on the same output is
refused in one line while the first runs; a lock left by a process that is gone is taken over."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.executor.lock import LOCK_NAME, output_lock
from spcl.extract.backends import Extraction, Extractor
from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job
from spcl.mask_stage import MaskJobConfig, MaskJobError, run_mask_job

pytestmark = pytest.mark.usefixtures("vault_key")


class Gate(Extractor):
    """Test double (not a model): finds nothing, but waits on ``release`` before answering its
    first call."""

    name = "scripted"
    model = "scripted-v0"

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def run(self, texts: list[str]) -> list[Extraction]:
        self.entered.set()
        assert self.release.wait(60)
        return [Extraction(raw="") for _ in texts]


def _config(tmp_path: Path) -> MaskJobConfig:
    (tmp_path / "in").mkdir(exist_ok=True)
    pq.write_table(
        pa.table({"id": ["a", "b"], "text": ["Call 010-1234-5678.", "Mail x@example.com"]}),
        tmp_path / "in" / "p.parquet",
    )
    return MaskJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
    )


def test_a_second_mask_run_on_the_same_output_is_refused(tmp_path: Path) -> None:
    # before, both runs went ahead: the second cleaned the first's staging and both committed the
    # same file
    cfg = _config(tmp_path)
    gate = Gate()
    result: dict[str, object] = {}
    first = threading.Thread(target=lambda: result.update(run_mask_job(cfg, gate)))
    first.start()
    try:
        assert gate.entered.wait(60)
        staging = list((tmp_path / "out" / "_tmp").iterdir())
        with pytest.raises(MaskJobError, match="in use by another run") as err:
            run_mask_job(cfg, Gate())
        assert len(str(err.value).splitlines()) == 1 and f"pid {__import__('os').getpid()}" in str(
            err.value
        )
        # the first run's staging untouched
        assert list((tmp_path / "out" / "_tmp").iterdir()) == staging
    finally:
        gate.release.set()
        first.join(60)
    assert result["reconciliation"]["ok"] and result["masked"] == 2  # type: ignore[index]
    assert not (tmp_path / "out" / LOCK_NAME).exists()
    # the lock is gone: the next run runs
    assert run_mask_job(cfg, Gate())["run"]["files_skipped"] == 1


def _lock(folder: Path, pid: int, host: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / LOCK_NAME).write_text(
        json.dumps({"pid": pid, "host": host, "run_id": "r", "started": "2026-01-01T00:00:00Z"})
    )


def test_a_lock_of_a_live_process_refuses_the_cli_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spcl.cli import main

    cfg = _config(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _lock(tmp_path / "out", holder.pid, socket.gethostname())
        code = main(
            [
                "mask",
                "--input",
                cfg.input,
                "--output",
                cfg.output,
                "--vault",
                cfg.vault,
                "--backend",
                "rules",
            ]
        )
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 1 and len(err) == 1 and f"pid {holder.pid}" in err[0] and LOCK_NAME in err[0]
        assert not (tmp_path / "out" / "_done").exists()  # nothing was planned or written
    finally:
        holder.kill()
        holder.wait()
    # the holder is gone: its lock is stale and taken over
    assert (
        main(
            [
                "mask",
                "--input",
                cfg.input,
                "--output",
                cfg.output,
                "--vault",
                cfg.vault,
                "--backend",
                "rules",
            ]
        )
        == 0
    )
    assert not (tmp_path / "out" / LOCK_NAME).exists()


def test_a_lock_of_another_host_is_never_taken_as_stale(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    _lock(tmp_path / "out", 999_999_999, "some-other-host")
    with pytest.raises(MaskJobError, match="host some-other-host"):
        run_mask_job(cfg, Gate())
    assert (tmp_path / "out" / LOCK_NAME).exists()


def test_generalize_takes_the_same_lock(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _lock(tmp_path / "out", holder.pid, socket.gethostname())
        (tmp_path / "in").mkdir()
        pq.write_table(
            pa.table({"id": ["a"], "text": ["Call 010-1234-5678."]}), tmp_path / "in" / "p.parquet"
        )
        cfg = GeneralizeJobConfig(
            input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
        )
        with pytest.raises(Exception, match="in use by another run"):
            run_generalize_job(cfg)
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_is_released_when_the_run_fails(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), output_lock(tmp_path / "o", "r1"):
        raise RuntimeError("boom")
    assert not (tmp_path / "o" / LOCK_NAME).exists()
    with output_lock(tmp_path / "o", "r2") as path:
        assert json.loads(path.read_text())["run_id"] == "r2"


def test_a_lock_whose_pid_was_reused_is_stale(tmp_path: Path) -> None:
    # the run that took the lock died and its pid now belongs to a process that started later
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folder = tmp_path / "o"
        folder.mkdir()
        (folder / LOCK_NAME).write_text(
            json.dumps(
                {
                    "pid": holder.pid,
                    "host": socket.gethostname(),
                    "started": "2026-01-01T00:00:00Z",
                    "epoch": 1_000_000.0,
                }
            )
        )
        with output_lock(folder, "r") as path:
            assert json.loads(path.read_text())["run_id"] == "r"
        (folder / LOCK_NAME).write_text(
            json.dumps(
                {
                    "pid": holder.pid,
                    "host": socket.gethostname(),
                    "started": "now",
                    "epoch": time.time(),
                }
            )
        )
        with pytest.raises(Exception, match="in use by another run"), output_lock(folder, "r2"):
            pass
    finally:
        holder.kill()
        holder.wait()
