"""A class-data-sharing archive of the Spark driver's classes: about half the CPU of a driver JVM's start-up.

A driver JVM spends most of its start-up loading and verifying Spark's and Scala's classes. The first driver
spcl launches itself (not under spark-submit) for a given Java, Spark and set of JVM options writes the classes
it loaded to a temporary file as it exits (``-XX:ArchiveClassesAtExit``); at the end of that Python process spcl
stops the session, lets the JVM exit, waits for it and renames the file into place, so a half-written archive
is never read. Every later driver maps the archive (``-XX:SharedArchiveFile``). The file's name carries a key
of the java binary, the Spark jars and the options; the JVM checks the archive against its own build and class
path as well and runs without it when they differ. Nothing of a job's data is in the archive: only classes of
the JDK and the Spark jars. The JVM's own lines about the archive are switched off (``-Xlog:cds*=off``): they
would go to the standard output.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

ARCHIVE_VERSION = 1
"""Layout of the archive's name and key (:func:`archive_key`); a new layout gets new files."""

QUIET = "-Xlog:cds*=off"
"""The JVM's archive messages (about a hundred skipped classes when it writes one) are not printed."""


def java_binary() -> str | None:
    """The ``java`` spark-class runs: ``$JAVA_HOME/bin/java``, else the one on ``PATH`` (resolved)."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.exists(found) else None


def spark_jars() -> Path:
    """The installed pyspark's ``jars`` folder (the driver's class path)."""
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def archive_key(java: str, jars: Path, options: str) -> str:
    """What an archive depends on: the java binary (path, size, time), every jar (name, size, time) and the
    JVM options, hashed (16 hex digits)."""
    digest = hashlib.sha256(f"{ARCHIVE_VERSION}|{options}|".encode())
    for path in (Path(java), *sorted(jars.glob("*.jar"))):
        st = path.stat()
        digest.update(f"{path}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def sharing_options(cache_dir: Path, options: str) -> tuple[str, tuple[Path, Path] | None]:
    """The JVM options that use (or, when there is none yet, write) the archive for a driver started with
    ``options``, and the ``(temporary, final)`` files of an archive the driver writes (``None`` when it exists).
    ``("", None)`` when no java or no pyspark is found, or the cache folder cannot be written."""
    java = java_binary()
    if java is None:
        return "", None
    try:
        key = archive_key(java, spark_jars(), options)
        cache_dir.mkdir(parents=True, exist_ok=True)
    except (ImportError, OSError):
        return "", None
    final = cache_dir / f"spark-driver-{key}.jsa"
    if final.is_file():
        return f"-XX:SharedArchiveFile={final} {QUIET}", None
    if not os.access(cache_dir, os.W_OK):
        return "", None
    tmp = cache_dir / f".spark-driver-{key}.{os.getpid()}.jsa.tmp"
    return f"-XX:ArchiveClassesAtExit={tmp} {QUIET}", (tmp, final)


def finish_archive(proc: Any, tmp: Path, final: Path, stop: Any = None, timeout: float = 120.0) -> bool:
    """Stop the session (``stop()``), close the driver JVM's standard input (it exits and writes ``tmp``),
    wait for it and rename ``tmp`` to ``final``; ``True`` when the archive is in place. When the JVM does not
    exit in ``timeout`` seconds, or fails, its file is removed."""
    try:
        if stop is not None:
            stop()
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=timeout)
    except Exception:  # a session that cannot stop, a JVM that does not exit: no archive this time
        tmp.unlink(missing_ok=True)
        return False
    if proc.returncode != 0 or not tmp.is_file() or tmp.stat().st_size == 0:
        tmp.unlink(missing_ok=True)
        return False
    os.replace(tmp, final)
    return True


def finish_at_exit(spark: Any, pending: tuple[Path, Path]) -> None:
    """Run :func:`finish_archive` for ``spark``'s driver JVM when this Python process exits."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is not None:
        atexit.register(finish_archive, proc, *pending, spark.stop)
