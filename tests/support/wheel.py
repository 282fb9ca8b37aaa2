"""Test helpers that build spcl's wheel the way a user would, from the files of a clean clone."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tracked_copy(dest: Path) -> Path:
    """The committed and staged files of the project (what a clean clone holds), copied to
    ``dest``."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def build_wheel(work: Path) -> Path:
    """spcl's wheel built from a clean-clone copy of the project under ``work``; returns the
    ``.whl`` path."""
    src = tracked_copy(work / "src")
    dist = work / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(src),
        ],
        check=True,
        timeout=300,
    )
    [wheel] = dist.glob("spcl-*.whl")
    return wheel
