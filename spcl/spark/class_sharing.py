"""A class-data-sharing archive of the Spark driver's classes: about half the CPU of a driver JVM's
start-up.

A driver JVM spends most of its start-up loading and verifying Spark's and Scala's classes. The
first driver spcl launches itself (not under spark-submit) for a given Java, Spark and set of JVM
options writes the classes it loaded to a temporary file as it exits (``-XX:ArchiveClassesAtExit``);
at the end of that Python process spcl stops the session, lets the JVM exit, waits for it, checks
the file (a CDS archive's magic number), writes its seal beside it (``.<archive>.seal``: its size
and a SHA-256 of sampled blocks) and renames the file into place, so a half-written archive is never
read. Every later driver checks the archive against its seal before it maps it
(``-XX:SharedArchiveFile``): a JVM maps the file, and one cut short (a full disk, a copy that
stopped) would kill every later JVM with SIGBUS. A damaged, unsealed or mismatched archive is never
mapped: the driver writes a new one in its place (or runs without one when the cache cannot be
written). The file's name carries a key of the java binary, the Spark jars and the options; the JVM
checks the archive against its own build and class path as well and runs without it when they
differ. Nothing of a job's data is in the archive: only classes of the JDK and the Spark jars. The
JVM's own lines about the archive are switched off (``-Xlog:cds*=off``): they would go to the
standard output.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

ARCHIVE_VERSION = 1
"""Layout of the archive's name and key (:func:`archive_key`); a new layout gets new files."""

QUIET = "-Xlog:cds*=off"
"""The JVM's archive messages (about a hundred skipped classes when it writes one) are not
printed."""


def java_binary() -> str | None:
    """The ``java`` spark-class runs: ``$JAVA_HOME/bin/java``, else the one on ``PATH``
    (resolved)."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.exists(found) else None


def spark_jars() -> Path:
    """The installed pyspark's ``jars`` folder (the driver's class path)."""
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def archive_key(java: str, jars: Path, options: str) -> str:
    """What an archive depends on: the java binary (path, size, time), every jar (name, size, time)
    and the JVM options, hashed (16 hex digits)."""
    digest = hashlib.sha256(f"{ARCHIVE_VERSION}|{options}|".encode())
    for path in (Path(java), *sorted(jars.glob("*.jar"))):
        st = path.stat()
        digest.update(f"{path}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


_MAGICS = (b"\xa2\xba\x0b\xf0", b"\xa8\xab\x0b\xf0")  # static / dynamic CDS archive, little-endian
_BLOCK = 1 << 16
_SAMPLES = 16


def _seal_path(archive: Path) -> Path:
    return archive.with_name(f".{archive.name}.seal")


def _seal(archive: Path) -> dict[str, Any]:
    """The archive's size and a SHA-256 of ``_SAMPLES`` blocks spread over it, first and last
    included (a few milliseconds for a 100 MB archive; a truncated or overwritten file does not
    match)."""
    size = archive.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with open(archive, "rb") as fh:
        for i in range(_SAMPLES):
            fh.seek(max(0, (size - _BLOCK) * i // (_SAMPLES - 1)))
            digest.update(fh.read(_BLOCK))
    return {"version": ARCHIVE_VERSION, "size": size, "sample_sha256": digest.hexdigest()}


def _has_magic(archive: Path) -> bool:
    try:
        with open(archive, "rb") as fh:
            return fh.read(4) in _MAGICS
    except OSError:
        return False


def archive_ok(archive: Path) -> bool:
    """Whether ``archive`` is a CDS archive that matches the seal written when it was put in
    place."""
    try:
        seal = json.loads(_seal_path(archive).read_text(encoding="utf-8"))
        return _has_magic(archive) and seal == _seal(archive)
    except (OSError, ValueError):
        return False


def sharing_options(cache_dir: Path, options: str) -> tuple[str, tuple[Path, Path] | None]:
    """The JVM options that use (or, when there is none yet, write) the archive for a driver started
    with ``options``, and the ``(temporary, final)`` files of an archive the driver writes (``None``
    when a sound one exists: :func:`archive_ok`; a damaged one is replaced). ``("", None)`` when no
    java or no pyspark is found, or the cache folder cannot be written."""
    java = java_binary()
    if java is None:
        return "", None
    try:
        key = archive_key(java, spark_jars(), options)
        cache_dir.mkdir(parents=True, exist_ok=True)
    except (ImportError, OSError):
        return "", None
    final = cache_dir / f"spark-driver-{key}.jsa"
    if final.is_file() and archive_ok(final):
        return f"-XX:SharedArchiveFile={final} {QUIET}", None
    if not os.access(cache_dir, os.W_OK):
        return "", None
    tmp = cache_dir / f".spark-driver-{key}.{os.getpid()}.jsa.tmp"
    return f"-XX:ArchiveClassesAtExit={tmp} {QUIET}", (tmp, final)


def finish_archive(
    proc: Any, tmp: Path, final: Path, stop: Any = None, timeout: float = 120.0
) -> bool:
    """Stop the session (``stop()``), close the driver JVM's standard input (it exits and writes
    ``tmp``), wait for it, seal ``tmp`` and rename it to ``final``; ``True`` when the archive is in
    place. When the JVM does not exit in ``timeout`` seconds, or fails, or its file is no CDS
    archive, the file is removed."""
    try:
        if stop is not None:
            stop()
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=timeout)
    except Exception:  # a session that cannot stop, a JVM that does not exit: no archive this time
        tmp.unlink(missing_ok=True)
        return False
    if proc.returncode != 0 or not tmp.is_file() or tmp.stat().st_size == 0 or not _has_magic(tmp):
        tmp.unlink(missing_ok=True)
        return False
    seal = _seal_path(final)
    seal_tmp = seal.with_name(f"{seal.name}.{os.getpid()}.tmp")
    try:
        seal_tmp.write_text(json.dumps(_seal(tmp)), encoding="utf-8")
        # the seal first: a reader that sees the old archive with it rebuilds
        os.replace(seal_tmp, seal)
        os.replace(tmp, final)
    except OSError:
        seal_tmp.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
        return False
    return True


def finish_at_exit(spark: Any, pending: tuple[Path, Path]) -> None:
    """Run :func:`finish_archive` for ``spark``'s driver JVM when this Python process exits."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is not None:
        atexit.register(finish_archive, proc, *pending, spark.stop)
