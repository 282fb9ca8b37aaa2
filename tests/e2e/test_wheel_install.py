"""Issue 13: spcl installed from a wheel runs from any folder (config and screen model ship with
it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.wheel import ROOT, build_wheel


@pytest.fixture(autouse=True)
def _installed_code_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed wheel must be what runs: a PYTHONPATH pointing at a source tree would shadow
    it."""
    monkeypatch.delenv("PYTHONPATH", raising=False)


@pytest.mark.slow
def test_wheel_installs_and_filters_from_another_folder(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=300,
    )
    # dependencies come from the test environment's site-packages (appended: its .pth files,
    # including the editable install of the source tree, are not processed), so the spcl that runs
    # is the wheel's
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    where = subprocess.run(
        [str(py), "-c", "import spcl; print(spcl.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert where.startswith(str(venv)), where
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copytree(ROOT / "data" / "sample", elsewhere / "crawl")
    spcl = venv / "bin" / "spcl"
    run = subprocess.run(
        [str(spcl), "filter", "--input", "crawl", "--output", "out", "--engine", "python"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    stats = json.loads((elsewhere / "out" / "stats.json").read_text())
    assert stats["reconciliation"]["ok"] and stats["counts"]["flagged"] > 0
    assert any(r.startswith("screen:") for r in stats["flag_reasons"]), (
        "the shipped screen model did not run"
    )
    bad = subprocess.run(
        [
            str(spcl),
            "filter",
            "--input",
            "crawl",
            "--output",
            "out2",
            "--engine",
            "python",
            "--model",
            "no/such/model",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "screen model 'no/such/model' not found" in bad.stderr
