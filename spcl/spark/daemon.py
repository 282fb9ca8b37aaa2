"""pyspark's Python worker daemon, started warm: the job's worker modules are imported before it
forks.

Spark starts one daemon per executor (``spark.python.daemon.module``,
:func:`spcl.spark.session.startup_conf`) and forks every Python worker from it. Run as ``python -m
spcl.spark.daemon``, this module first imports the modules named in ``SPCL_PRELOAD``
(comma-separated), then hands over to ``pyspark.daemon.manager``: each forked worker finds them
imported (their module-level tables built, their shared libraries mapped), so a second and later
worker of an executor starts without paying its imports again.

Only imports run here, never a model load: a library that starts threads when it first computes
(LightGBM's OpenMP pool) must not do so before a fork. A module that fails to import is skipped; the
worker imports it again and reports the error there, as without the preload. While importing,
anything written to the standard output goes to the standard error: the daemon's standard output
carries its port to the JVM.
"""

from __future__ import annotations

import importlib
import os
import sys

from spcl.spark.session import PRELOAD_ENV


def preload(names: str) -> list[str]:
    """Import each module of the comma-separated ``names``; returns those that imported (failures
    skipped)."""
    done = []
    for name in (n.strip() for n in names.split(",")):
        if not name:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # the worker imports it again and fails there, with its own error report
            continue
        done.append(name)
    return done


def _preload_quietly(names: str) -> None:
    """:func:`preload` with the standard output (``sys.stdout`` and file descriptor 1) pointed at
    the standard error meanwhile."""
    sys.stdout.flush()
    saved, stdout = os.dup(1), sys.stdout
    try:
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        preload(names)
        sys.stderr.flush()
    finally:
        sys.stdout = stdout
        os.dup2(saved, 1)
        os.close(saved)


def main() -> None:
    """Preload ``SPCL_PRELOAD``'s modules, then run pyspark's daemon."""
    _preload_quietly(os.environ.get(PRELOAD_ENV, ""))
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
