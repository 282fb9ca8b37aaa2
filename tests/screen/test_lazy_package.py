"""Reading screen output needs no model stack: ``spcl.screen.heads`` (what the report, review and
Spark sampling import) loads without LightGBM, and the shipped kind still loads through
``spcl.screen.kinds`` alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return done.stdout.strip()


def test_consumers_of_screen_output_do_not_load_lightgbm() -> None:
    """The report, review sampling and Spark sampling modules import without LightGBM, and so does
    the CLI (it imports a command's module only when that command runs)."""
    out = _run(
        "import sys, spcl.report.facts, spcl.report.charts, spcl.review.sample, spcl.review.export,"
        " spcl.cli; print('lightgbm' in sys.modules)"
    )
    assert out == "False"


def test_the_shipped_kind_loads_through_the_registry_alone() -> None:
    """``load_any`` finds the shipped kind even when nothing imported ``spcl.screen.model`` first,
    and the package's public names still resolve."""
    out = _run(
        "from spcl.screen.kinds import load_any; import spcl.screen as s; m ="
        " load_any('models/screen-default'); print(m.version, s.load_screen is not None,"
        " s.CATEGORIES[0])"
    )
    assert out.split()[1:] == ["True", "MEDICAL"] and out.startswith("screen-default@")
