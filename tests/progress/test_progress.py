"""The progress bar of long local runs (issue 14): counts, rate and ETA on a terminal, silent
elsewhere."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from spcl.progress import Progress, format_duration, progress_enabled
from tests.support.records import doc_line, write_lines


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_draws_counts_rate_and_eta_on_a_tty(monkeypatch):
    monkeypatch.delenv("SPCL_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    tty = _Tty()
    bar = Progress("filter", total=200, stream=tty, interval=0)
    assert bar.enabled
    bar.started -= 10.0  # ten seconds in
    bar.advance(50)
    text = tty.getvalue()
    assert text.startswith("\rfilter  50/200 docs") and " 25% [######" in text
    assert "5 docs/s" in text and "ETA 0:30" in text
    bar.close()
    assert tty.getvalue().endswith("\n") and "in 0:10" in tty.getvalue().splitlines()[-1]


def test_eta_from_work_when_the_document_total_is_unknown():
    bar = Progress("filter", total_work=1000, enabled=False)
    bar.advance(300, work=250.0)
    assert bar.fraction() == 0.25
    line = bar.line(now=bar.started + 20)
    assert "300 docs" in line and "15 docs/s" in line and "ETA 1:00" in line


def test_silent_off_a_terminal_and_switchable(monkeypatch):
    monkeypatch.delenv("SPCL_PROGRESS", raising=False)
    plain = io.StringIO()
    with Progress("train", total=5, stream=plain, interval=0) as bar:
        bar.advance(5)
    assert plain.getvalue() == "" and not progress_enabled(plain)
    monkeypatch.setenv("SPCL_PROGRESS", "0")
    assert not progress_enabled(_Tty())
    monkeypatch.setenv("SPCL_PROGRESS", "1")
    assert progress_enabled(plain)
    assert format_duration(3725) == "1:02:05"


@pytest.mark.slow
def test_filter_python_engine_shows_progress_only_when_asked(tmp_path: Path, root: Path):
    """`spcl filter --engine python`: a bar on stderr with SPCL_PROGRESS=1, nothing with output
    captured."""
    src = write_lines(
        tmp_path / "in.jsonl",
        [doc_line(f"d{i}", f"연락처 010-2345-{i:04d} 입니다") for i in range(300)],
    )
    env_base = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    cmd = [
        sys.executable,
        "-m",
        "spcl.cli",
        "filter",
        "-i",
        str(src),
        "--engine",
        "python",
        "--no-screen",
    ]
    quiet = subprocess.run(
        [*cmd, "-o", str(tmp_path / "a")], capture_output=True, env=env_base, cwd=root, check=True
    )
    assert b"\r" not in quiet.stderr and b"docs/s" not in quiet.stderr
    shown = subprocess.run(
        [*cmd, "-o", str(tmp_path / "b")],
        capture_output=True,
        env={**env_base, "SPCL_PROGRESS": "1"},
        cwd=root,
        check=True,
    )
    err = shown.stderr.decode()
    last = [s for s in err.split("\r") if s.startswith("filter  ")][-1].split("\n")[0]
    assert last.startswith("filter  300 docs  100% [") and "docs/s" in last
    assert "010-2345" not in err  # counts only, never a value
    assert json.loads(shown.stdout)["counts"]["flagged"] == 300
