"""Issue 26, the Spark driver's class-data-sharing archive (spcl.spark.class_sharing): keyed,
written only by a driver that exited cleanly and renamed into place, mapped by later drivers and
executors, silent on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spcl.config import SparkSettings, load_settings
from spcl.spark.class_sharing import (
    QUIET,
    archive_key,
    finish_archive,
    java_binary,
    sharing_options,
    spark_jars,
)
from spcl.spark.session import startup_conf

JAVA = java_binary()
needs_java = pytest.mark.skipif(JAVA is None, reason="no java")


@needs_java
def test_the_key_follows_the_options_the_jars_and_the_java(tmp_path: Path) -> None:
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "a.jar").write_bytes(b"1")
    base = archive_key(JAVA, jars, "-XX:+UseSerialGC")
    assert archive_key(JAVA, jars, "-XX:+UseSerialGC") == base
    assert archive_key(JAVA, jars, "-XX:+UseG1GC") != base
    (jars / "b.jar").write_bytes(b"2")
    assert archive_key(JAVA, jars, "-XX:+UseSerialGC") != base
    (jars / "b.jar").unlink()
    (jars / "a.jar").write_bytes(b"11")  # same name, another size
    assert archive_key(JAVA, jars, "-XX:+UseSerialGC") != base


@needs_java
def test_a_missing_archive_is_written_to_a_hidden_file_and_an_existing_one_is_mapped(
    tmp_path: Path,
) -> None:
    opts, pending = sharing_options(tmp_path, "-XX:+UseSerialGC")
    assert pending is not None
    tmp, final = pending
    assert opts == f"-XX:ArchiveClassesAtExit={tmp} {QUIET}"
    assert (
        tmp.parent == final.parent == tmp_path
        and tmp.name.startswith(".")
        and not final.name.startswith(".")
    )
    _sealed_fake(tmp, final)
    assert sharing_options(tmp_path, "-XX:+UseSerialGC") == (
        f"-XX:SharedArchiveFile={final} {QUIET}",
        None,
    )
    # another option set: its own archive
    other, pending = sharing_options(tmp_path, "-XX:+UseG1GC")
    assert pending is not None and str(final) not in other


def _sealed_fake(tmp: Path, final: Path) -> None:
    """Put a sealed stand-in archive (the CDS magic number and filler; never given to a JVM) in
    place."""
    tmp.write_bytes(b"\xa8\xab\x0b\xf0" + bytes(300_000))
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    assert finish_archive(proc, tmp, final)


@needs_java
def test_a_truncated_archive_is_never_mapped_and_is_rebuilt(tmp_path: Path) -> None:
    # before, any file at the archive's name was mapped: one cut short killed every later JVM with
    # SIGBUS
    opts, pending = sharing_options(tmp_path, "")
    assert pending is not None
    proc = subprocess.Popen(
        [JAVA, *opts.split(), "-version"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert finish_archive(proc, *pending)  # a real (small) archive of a JVM that ran -version
    final = pending[1]
    opts, again = sharing_options(tmp_path, "")
    assert again is None and opts == f"-XX:SharedArchiveFile={final} {QUIET}"
    data = final.read_bytes()
    os.chmod(final, 0o600)
    final.write_bytes(data[: len(data) - 4096])  # cut short, as by a full disk or a stopped copy
    opts, rebuild = sharing_options(tmp_path, "")
    assert rebuild is not None and "SharedArchiveFile" not in opts  # not mapped: written anew
    run = subprocess.run(
        [JAVA, *opts.split(), "-version"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0  # a JVM given the truncated archive died with SIGBUS here
    final.write_bytes(data)  # the same bytes written again (a new time): still sound
    os.utime(final)
    assert sharing_options(tmp_path, "")[1] is None  # same bytes: still sound
    final.write_bytes(data[:4] + bytes(len(data) - 4))
    assert sharing_options(tmp_path, "")[1] is not None  # other bytes, same size: not mapped


def test_a_file_that_is_no_archive_is_never_put_in_place(tmp_path: Path) -> None:
    tmp, final = tmp_path / ".a.tmp", tmp_path / "a.jsa"
    tmp.write_bytes(b"not an archive")
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    assert not finish_archive(proc, tmp, final)
    assert not tmp.exists() and not final.exists()


def test_no_java_or_an_unwritable_cache_gives_no_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert sharing_options(tmp_path / "c", "") == ("", None)
    monkeypatch.undo()
    if JAVA is None:
        return
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert sharing_options(blocker / "sub", "") == ("", None)


def test_the_archive_options_follow_the_jvm_options_in_the_spark_settings() -> None:
    conf = startup_conf(
        SparkSettings(), (), "-XX:SharedArchiveFile=/c/a.jsa", "-XX:SharedArchiveFile=/c/a.jsa"
    )
    assert conf["spark.driver.extraJavaOptions"].endswith(" -XX:SharedArchiveFile=/c/a.jsa")
    assert conf["spark.executor.extraJavaOptions"].startswith("-XX:TieredStopAtLevel=1")
    bare = startup_conf(
        SparkSettings(driver_java_options="", executor_java_options=""), (), "-Xa", ""
    )
    assert (
        bare["spark.driver.extraJavaOptions"] == "-Xa"
        and "spark.executor.extraJavaOptions" not in bare
    )


def test_class_sharing_is_a_knob_outside_the_config_hash() -> None:
    off = load_settings(overrides={"spark.class_sharing": False})
    assert not off.spark.class_sharing
    assert off.config_hash() == load_settings(None).config_hash()


@needs_java
def test_a_jvm_that_fails_leaves_no_archive(tmp_path: Path) -> None:
    tmp, final = tmp_path / ".a.tmp", tmp_path / "a.jsa"
    tmp.write_bytes(b"half")
    proc = subprocess.Popen(
        [JAVA, "-XX:NoSuchOption"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert not finish_archive(proc, tmp, final)
    assert not tmp.exists() and not final.exists()


SESSION_RUN = """
import json, sys
from spcl.spark.session import build_session
spark = build_session(master="local[1]", app_name="cds-test")
conf = spark.sparkContext.getConf()
print("RESULT " + json.dumps({"driver": conf.get("spark.driver.extraJavaOptions"),
                              "executor": conf.get("spark.executor.extraJavaOptions"),
                              "sum": spark.sparkContext.parallelize(range(10), 2).sum()}))
"""


@pytest.mark.slow
@needs_java
def test_the_first_driver_writes_the_archive_and_the_next_one_maps_it(tmp_path: Path) -> None:
    env = {**os.environ, "SPCL_CACHE_DIR": str(tmp_path / "cache")}

    def run() -> tuple[dict[str, str], str]:
        proc = subprocess.run(
            [sys.executable, "-c", SESSION_RUN],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
        return json.loads(line[len("RESULT ") :]), proc.stdout

    def archives() -> list[str]:
        return sorted(
            p.name for p in (tmp_path / "cache").iterdir() if p.name.startswith("spark-driver-")
        )

    first, out = run()
    assert "-XX:ArchiveClassesAtExit=" in first["driver"] and first["sum"] == 45
    written = archives()
    assert (
        len(written) == 1 and written[0].startswith("spark-driver-") and written[0].endswith(".jsa")
    )
    second, out = run()
    assert f"-XX:SharedArchiveFile={tmp_path / 'cache' / written[0]}" in second["driver"]
    assert f"-XX:SharedArchiveFile={tmp_path / 'cache' / written[0]}" in second["executor"]
    assert second["sum"] == 45
    assert "[cds]" not in out and "[warning]" not in out  # the JVM said nothing on stdout
    assert archives() == written  # nothing new, no temporary file left over


def test_the_spark_jars_folder_is_the_installed_pyspark_s() -> None:
    pytest.importorskip("pyspark")
    assert any(spark_jars().glob("spark-core_*.jar"))
