"""Issue 13: the README's cluster recipe runs as written.

spcl's wheel goes into a fresh virtual environment with the ``cluster`` extra (no pyspark: the
cluster's Spark brings it), ``venv-pack`` packs it, and ``spark-submit --archives
spcl-venv.tar.gz#venv`` with ``spark.pyspark.python=./venv/bin/python`` runs ``jobs/filter.py`` from
another folder on a one-machine standalone cluster (``local-cluster``: a separate executor process
whose work folder holds the unpacked archive, as on YARN; plain ``local[N]`` runs Python workers in
the driver's folder, where ``./venv`` does not exist). The outputs must equal the in-process
engine's, and a probe in the packed environment records which Python each process ran.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from spcl.config import load_settings
from spcl.filter.job import FilterJob, run_filter
from spcl.io.outputs import output_dataset
from tests.support.environment import SPARK_TEST_JAVA_OPTS
from tests.support.wheel import ROOT, build_wheel

# Runs at the start of every interpreter of the packed environment when SPCL_PROBE_DIR is set (a
# ``.pth`` line): records the interpreter's prefix and where it would import spcl from.
PROBE = (
    "import os, sys; d = os.environ.get('SPCL_PROBE_DIR'); "
    "d and open(os.path.join(d, f'{os.getpid()}.json'), 'w').write(__import__('json').dumps("
    "{'prefix': sys.prefix, 'spcl': __import__('importlib.util').util.find_spec('spcl').origin}))\n"
)
INPUTS = ("crawl-0002.parquet", "crawl-0003-bad.jsonl", "crawl-0004-truncated.jsonl.gz")


@pytest.fixture(autouse=True)
def _installed_code_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed wheel must be what runs: a PYTHONPATH pointing at a source tree would shadow
    it."""
    monkeypatch.delenv("PYTHONPATH", raising=False)


def _packed_env(work: Path) -> tuple[Path, Path]:
    """The README's steps: a venv holding spcl's wheel with the ``cluster`` extra, packed by
    venv-pack.

    Two flags only save time here (``--no-compile``, ``--compress-level 0``). Returns (venv,
    archive).
    """
    wheel = build_wheel(work)
    venv = work / "spcl-venv"
    py = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "--quiet",
            "--no-compile",
            f"{wheel}[cluster]",
        ],
        check=True,
        timeout=600,
    )
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "spcl_test_probe.pth").write_text(PROBE)
    archive = work / "spcl-venv.tar.gz"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "venv_pack",
            "--quiet",
            "--prefix",
            str(venv),
            "--output",
            str(archive),
            "--compress-level",
            "0",
        ],
        check=True,
        timeout=300,
    )
    return venv, archive


def _spark_home(dest: Path) -> Path:
    """A SPARK_HOME of links to the installed pyspark (its ``bin/spark-submit``, jars, Python
    libraries), so the local cluster's executor work folders (``$SPARK_HOME/work``) stay under
    ``dest``."""
    installed = Path(pyspark.__file__).parent
    dest.mkdir()
    for name in ("bin", "jars", "python"):
        (dest / name).symlink_to(installed / name, target_is_directory=True)
    return dest


def _rows(out: Path) -> dict[str, tuple]:
    table = output_dataset(out).to_table(
        columns=["row_key", "decision", "hits", "reasons", "quarantine_reason"]
    )
    return {
        r["row_key"]: (r["decision"], r["hits"], r["reasons"], r["quarantine_reason"])
        for r in table.to_pylist()
    }


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path``, emptied afterwards: the environment, its archive and the unpacked copies
    take ~3 GB."""
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.slow
def test_packed_environment_runs_the_filter_job_on_a_local_cluster(work: Path) -> None:
    venv, archive = _packed_env(work)
    home = _spark_home(work / "spark-home")
    elsewhere = work / "elsewhere"
    (elsewhere / "crawl").mkdir(parents=True)
    for name in INPUTS:
        shutil.copy2(ROOT / "data" / "sample" / name, elsewhere / "crawl" / name)
    probes = work / "probes"
    probes.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "PYTHONPATH",
            "PYSPARK_PYTHON",
            "PYSPARK_DRIVER_PYTHON",
            "SPARK_HOME",
            "VIRTUAL_ENV",
        )
    }
    env.update(SPARK_HOME=str(home), SPCL_PROBE_DIR=str(probes))
    # --output is relative, as a user types it: the driver must make it absolute before the
    # executors (whose work folders differ) write there
    out = elsewhere / "out"
    proc = subprocess.run(
        [
            str(home / "bin" / "spark-submit"),
            "--master",
            "local-cluster[1,2,1024]",
            "--conf",
            "spark.pyspark.python=./venv/bin/python",
            "--conf",
            f"spark.pyspark.driver.python={venv / 'bin' / 'python'}",
            # the executor's JVM starts with the C1 compiler only, like the driver's
            # (tests/conftest.py): time only
            "--conf",
            f"spark.executor.extraJavaOptions={SPARK_TEST_JAVA_OPTS}",
            "--archives",
            f"{archive}#venv",
            str(ROOT / "jobs" / "filter.py"),
            "--input",
            "crawl",
            "--output",
            "out",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]

    stats = json.loads((out / "stats.json").read_text())
    counts = stats["counts"]
    assert stats["reconciliation"]["ok"]
    assert (
        stats["reconciliation"]["input_records"]
        == counts["clean"] + counts["flagged"] + counts["quarantine"]
    )
    assert counts["clean"] > 0 and counts["flagged"] > 0 and counts["quarantine"] > 0
    assert any(r.startswith("screen:") for r in stats["flag_reasons"]), (
        "the packed screen model did not run"
    )
    assert (out / "manifest.json").is_file()

    expected_out = work / "in-process"
    expected = run_filter(
        FilterJob((str(elsewhere / "crawl"),), str(expected_out), load_settings(None), "python")
    )
    assert counts == expected["counts"] and stats["config_hash"] == expected["config_hash"]
    assert _rows(out) == _rows(expected_out)

    found = [json.loads(p.read_text()) for p in probes.glob("*.json")]
    driver = [p for p in found if Path(p["prefix"]) == venv]
    workers = [p for p in found if Path(p["prefix"]) != venv]
    assert driver, "the driver did not run the environment's Python"
    assert workers, "no Python worker ran the packed environment"
    # unpacked by Spark into the executor's work folder, spcl imported from there
    for probe in workers:
        prefix = Path(probe["prefix"]).resolve()
        assert prefix.name == "venv" and prefix.is_relative_to((home / "work").resolve()), probe
        assert Path(probe["spcl"]).resolve().is_relative_to(prefix), probe
