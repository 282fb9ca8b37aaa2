"""The run lock: one run at a time per output folder.

Two runs writing the same output folder at once would clean each other's staging and commit over
each other's parts. A run takes the folder's lock before it plans: the file ``.spcl-run.lock``
created exclusively (``O_CREAT | O_EXCL``, which also holds on a shared filesystem) holding the
run's pid, host, start time and run id. A second run finds it and stops with one line naming them. A
lock whose process is gone (same host, no such pid, or the pid now belongs to a process that started
after the lock was taken) is stale: it is taken over (the run that died left it). A lock of another
host is never judged stale (its pid means nothing here): the message says which file to remove when
that run is known to be gone. The lock is removed when the run ends, however it ends. The file is
hidden: manifests and input listings skip it.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spcl.executor.errors import JobError

LOCK_NAME = ".spcl-run.lock"


class OutputInUse(JobError):
    """Another run holds the output folder's lock."""


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (a process of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: Path) -> tuple[bytes, dict[str, object]] | None:
    """The lock's bytes and content (``{}`` when unreadable: a lock being written), ``None`` when
    absent."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        data = {}
    return raw, data if isinstance(data, dict) else {}


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (epoch seconds, from ``/proc``), or ``None`` when it cannot
    be told."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        # field 22: start time in clock ticks after boot
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
        boot = next(
            int(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _stale(data: dict[str, object]) -> bool:
    """A lock of this host whose process is gone, or whose pid now belongs to a process started
    after the lock was taken (the pid was reused)."""
    pid = data.get("pid")
    if not (
        data.get("host") == socket.gethostname()
        and isinstance(pid, int)
        and not isinstance(pid, bool)
        and pid > 0
        and pid != os.getpid()
    ):
        return False
    if not _alive(pid):
        return True
    taken, began = data.get("epoch"), _process_start(pid)
    return isinstance(taken, int | float) and began is not None and began > taken + 5


def _take_over(path: Path, raw: bytes) -> None:
    """Remove the stale lock ``path`` whose bytes were ``raw``: moved aside under a unique name
    first, and put back when what was moved is not that lock (another run took it over in
    between)."""
    aside = path.with_name(f"{LOCK_NAME}.stale.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    if aside.read_bytes() == raw:
        aside.unlink()
        return
    with suppress(FileExistsError):
        os.link(aside, path)  # someone else's fresh lock: put it back (never over a newer one)
    aside.unlink()


@contextmanager
def output_lock(
    folder: str | Path, run_id: str = "", error: type[JobError] = OutputInUse
) -> Iterator[Path]:
    """Hold ``folder``'s run lock (the folder is created when missing, and removed again when the
    run leaves it empty) for the ``with`` block; ``error`` (one line naming the holder's pid, host
    and start) when another live run holds it."""
    root = Path(folder)
    # removed again if the run leaves them empty
    created = [p for p in (root, *root.parents) if not p.exists()]
    root.mkdir(parents=True, exist_ok=True)
    path = root / LOCK_NAME
    now = datetime.now(UTC)
    body = json.dumps(
        {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "run_id": run_id,
            "started": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "epoch": round(now.timestamp(), 3),
        }
    ).encode()
    for _ in range(5):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            found = _read(path)
            if found is None:
                continue  # released in between: try again
            raw, data = found
            if _stale(data):
                _take_over(path, raw)
                continue
            who = (
                f"pid {data.get('pid', '?')} on host {data.get('host', '?')}, started"
                f" {data.get('started', '?')}"
                if data
                else "a run starting now"
            )
            raise error(
                f"{root} is in use by another run ({who}); wait for it to end, or remove {path} if"
                " that run is gone"
            ) from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        break
    else:
        raise error(f"cannot take the run lock {path} (it keeps changing); retry")
    try:
        yield path
    finally:
        found = _read(path)
        if found is not None and found[0] == body:  # never remove a lock this run does not hold
            path.unlink(missing_ok=True)
        # a run refused before writing (e.g. an unsafe output) leaves no folder
        for folder_made in created:
            try:
                folder_made.rmdir()
            except OSError:
                break


@contextmanager
def stage_lock(stage: Any, cfg: Any) -> Iterator[Path | None]:
    """The run lock of ``stage``'s output folder (the config field its ``lock_field`` names, with
    the stage's error and the config's run id) for the ``with`` block; nothing is locked when the
    stage names no field."""
    field = getattr(stage, "lock_field", None)
    if not field:
        yield None
        return
    with output_lock(
        getattr(cfg, field), str(getattr(cfg, "run_id", "") or ""), stage.error
    ) as path:
        yield path
