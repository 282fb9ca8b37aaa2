"""Issue 26, a Spark run's fixed start-up: the folding tables' cache, the session's start-up
settings, the preloading Python daemon, the worker-side path tasks and the process clock the
start-up split is measured by."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spcl.config import ConfigError, SparkSettings, load_settings
from spcl.detect import folding
from spcl.filter.spark_tasks import WORKER_MODULES, process_started_at, screen_paths_partition
from spcl.filter.task import TaskReport
from spcl.spark.daemon import _preload_quietly, preload
from spcl.spark.session import DAEMON_MODULE, PRELOAD_ENV, startup_conf


@pytest.fixture(scope="module")
def built() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """The tables built from ``unicodedata`` (no cache)."""
    return folding._tables()


def test_the_folding_tables_are_cached_as_json_and_read_back_equal(
    tmp_path: Path, built: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert folding.cached_tables(tmp_path) == built  # built and written
    [path] = tmp_path.glob("folding-*.json")
    assert json.loads(path.read_text())["version"] == folding.TABLES_VERSION

    def no_scan() -> None:
        raise AssertionError("the tables were built again")

    monkeypatch.setattr(folding, "_tables", no_scan)
    assert folding.cached_tables(tmp_path) == built  # read from the file


DAMAGES = (
    "not json",
    "a list",
    "no tables",
    "wrong key",
    "bad codepoint",
    "two-char value",
    "sentinel",
)


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_stale_or_damaged_cache_file_is_never_used_and_is_rebuilt(
    tmp_path: Path, built: tuple, damage: str
) -> None:
    folding.cached_tables(tmp_path)
    [path] = tmp_path.glob("folding-*.json")
    doc = json.loads(path.read_text())
    text = {
        "not json": "{",
        "a list": "[]",
        "no tables": json.dumps({"version": 1, "key": doc["key"]}),
    }.get(damage)
    if damage == "wrong key":
        doc["key"] = "0" * 16  # another source or Unicode version wrote it
    elif damage == "bad codepoint":
        doc["drop"].append(sys.maxunicode + 1)
    elif damage == "two-char value":
        doc["mapped"][str(0xFF11)] = "11"
    elif damage == "sentinel":
        # ZWSP no longer dropped: a phone number split by it would be missed
        doc["drop"].remove(0x200B)
    path.write_text(text if text is not None else json.dumps(doc))
    assert folding.cached_tables(tmp_path) == built
    # rewritten
    assert folding._decode(json.loads(path.read_text()), folding._tables_key()) == built


def test_an_unwritable_cache_still_gives_the_tables(tmp_path: Path, built: tuple) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    # cannot create the folder: built, not cached
    assert folding.cached_tables(blocker / "sub") == built


def test_startup_conf_turns_the_knobs_into_spark_settings() -> None:
    conf = startup_conf(SparkSettings(), WORKER_MODULES)
    assert conf["spark.ui.enabled"] == "false"
    assert "-XX:TieredStopAtLevel=1" in conf["spark.driver.extraJavaOptions"]
    assert "-XX:+UseSerialGC" in conf["spark.executor.extraJavaOptions"]
    assert conf["spark.python.daemon.module"] == DAEMON_MODULE
    assert conf[f"spark.executorEnv.{PRELOAD_ENV}"] == ",".join(WORKER_MODULES)
    off = startup_conf(
        SparkSettings(
            ui=True, preload_workers=False, driver_java_options="", executor_java_options=""
        ),
        WORKER_MODULES,
    )
    assert off == {"spark.ui.enabled": "true"}
    # a job with nothing to preload
    assert "spark.python.daemon.module" not in startup_conf(SparkSettings())


def test_the_start_up_knobs_are_validated_and_leave_the_config_hash_alone(tmp_path: Path) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text("spark:\n  driver_java_options: Xmx2g\n")
    with pytest.raises(ConfigError, match=r"spark\.driver_java_options"):
        load_settings(str(conf))
    base = load_settings(None)
    tuned = load_settings(
        overrides={
            "spark.ui": True,
            "spark.preload_workers": False,
            "spark.executor_java_options": "-Xss4m",
        }
    )
    assert tuned.spark.ui and not tuned.spark.preload_workers
    assert tuned.config_hash() == base.config_hash()  # none of them can change an output
    assert "preload_workers" not in json.loads(tuned.model_dump_json())["spark"]


def test_the_daemon_preloads_what_imports_and_skips_what_does_not(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert preload("json, no_such_module_spcl ,,spcl.filter.spark_tasks") == [
        "json",
        "spcl.filter.spark_tasks",
    ]
    # a module printing on import: its line must not reach fd 1
    _preload_quietly("tests.support.startup_noisy")
    out, err = capfd.readouterr()
    assert "noisy import" not in out and "noisy import" in err


def test_the_daemon_runs_pyspark_s_manager_after_its_preload(tmp_path: Path) -> None:
    """The real daemon: started as Spark starts it, it writes its port (4 bytes) on stdout and
    nothing else, and has imported the preload first; closing its stdin ends it."""
    env = {
        **os.environ,
        PRELOAD_ENV: "tests.support.startup_noisy",
        "PYTHONPATH": str(Path(__file__).parents[2]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", DAEMON_MODULE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        port = proc.stdout.read(4)
        proc.stdin.close()  # what the JVM does to end its daemon
        proc.wait(timeout=30)  # ends (with pyspark.daemon's own exit status)
    finally:
        proc.kill()
    assert len(port) == 4 and 0 < int.from_bytes(port, "big") < 65536
    assert proc.stdout.read() == b""
    assert b"noisy import" in proc.stderr.read()


def test_a_local_file_a_worker_cannot_open_is_quarantined_by_name(tmp_path: Path) -> None:
    settings = load_settings(overrides={"screen.enabled": False})
    out = tmp_path / "out"
    gone = str(tmp_path / "vanished.jsonl")
    [line] = list(screen_paths_partition(settings.model_dump_json(), str(out), iter([gone])))
    report = TaskReport.from_json(line)
    assert report.source == gone and report.input_records == 1 and report.worker is not None
    assert sum(f.rows for f in report.files) == 1 and "decision=quarantine" in report.files[0].path


def test_process_start_is_measured_to_a_tick_not_to_a_second() -> None:
    before = time.time()
    child = subprocess.Popen(["sleep", "2"])
    try:
        started = process_started_at(child.pid)
    finally:
        child.kill()
        child.wait()
    assert started is not None and abs(started - before) < 0.25


def test_the_benchmark_splits_cpu_seconds_like_wall_time_into_marginal_and_fixed() -> None:
    from spcl.bench.marginal import marginal

    small = [{"docs": 100, "wall": 10.0, "cpu": 8.0}, {"docs": 100, "wall": 30.0, "cpu": 9.0}]
    large = [{"docs": 1100, "wall": 25.0, "cpu": 18.0}, {"docs": 1100, "wall": 45.0, "cpu": 19.0}]
    m = marginal(small, large, cores=2)
    assert m["docs_per_s_per_core"] == pytest.approx(1000 / 15 / 2)  # medians 20 s and 35 s
    assert m["docs_per_cpu_s"] == pytest.approx(100.0) and m["startup_cpu_s"] == pytest.approx(7.5)
    assert "docs_per_cpu_s" not in marginal(
        [{"docs": 1, "wall": 1.0}], [{"docs": 2, "wall": 2.0}], 1
    )


def test_a_run_s_cpu_seconds_are_split_by_process_role() -> None:
    from spcl.bench.marginal import startup_split
    from spcl.bench.processes import process_role, tree_cpu_split

    assert (
        process_role(
            "/usr/lib/jvm/bin/java -cp x org.apache.spark.executor.CoarseGrainedExecutorBackend"
        )
        == "jvm"
    )
    assert process_role("/venv/bin/python -m pyspark.daemon") == "python workers"
    assert process_role("/venv/bin/python -c import spcl") == "driver"
    # this process is the driver (a JVM of an earlier test may be its child)
    mine = tree_cpu_split()
    assert set(mine) == {"driver", "jvm", "python workers"} and mine["driver"] > 0
    run = {
        "driver_imports": 1.0,
        "stage_seconds": {"list_inputs": 5.0},
        "startup_seconds": {"session": 4.0},
        "cpu_split": {"driver": 1.0, "jvm": 3.0},
    }
    split = startup_split([run, {**run, "cpu_split": {"driver": 2.0, "jvm": 5.0}}])
    assert split["listing + output checks"] == 1.0
    assert (
        split["CPU seconds of the whole run: jvm"] == 4.0
        and split["CPU seconds of the whole run: driver"] == 1.5
    )
