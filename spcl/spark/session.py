"""The one SparkSession builder of spcl: Java check, this interpreter for workers, settings from the
config.

Every job (filter, mask, generalize, annotate, review sampling) builds its session here. Its Python
workers import the installed spcl whatever the working folder (``PYTHONSAFEPATH``). A master given
on the command line wins; under ``spark-submit`` (``submitted``: ``jobs/*.py`` pass a hidden
``--submitted`` flag) the submitted master is kept; otherwise the config's ``spark.master`` (default
``local[*]``).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from spcl.cache import cache_dir
from spcl.config import Settings, SparkSettings, load_settings
from spcl.errors import RunFailed
from spcl.spark.class_sharing import finish_at_exit, sharing_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


DAEMON_MODULE = "spcl.spark.daemon"
"""The value of ``spark.python.daemon.module`` that starts spcl's preloading daemon
(:mod:`spcl.spark.daemon`)."""
PRELOAD_ENV = "SPCL_PRELOAD"
"""The environment variable (``spark.executorEnv.SPCL_PRELOAD``) naming the modules the daemon
imports first."""


class JavaMissing(RunFailed, RuntimeError):
    """Spark needs Java 17+ on PATH (or JAVA_HOME)."""


def ensure_java() -> None:
    """Raise :class:`JavaMissing` with an install hint when no ``java`` can be found."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java") is None:
        raise JavaMissing(
            "Spark needs Java 17 or newer, but no 'java' is on PATH and JAVA_HOME is not set. "
            "Install a JDK/JRE (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) "
            "or run with --engine python."
        )


def startup_conf(
    sp: SparkSettings,
    preload: tuple[str, ...] = (),
    driver_extra: str = "",
    executor_extra: str = "",
) -> dict[str, str]:
    """The spark.* settings of the start-up knobs in ``sp``: no web UI, the JVM options of a
    short-lived driver and of executors (each with ``driver_extra`` / ``executor_extra`` after them:
    the class archive's, :mod:`spcl.spark.class_sharing`), and pyspark's Python daemon started by
    :mod:`spcl.spark.daemon` with the modules ``preload`` imported before it forks (only when
    ``sp.preload_workers`` and ``preload`` is not empty).

    >>> from spcl.config import SparkSettings
    >>> startup_conf(SparkSettings(preload_workers=False))["spark.ui.enabled"]
    'false'
    """
    conf = {"spark.ui.enabled": str(sp.ui).lower()}
    driver = f"{sp.driver_java_options} {driver_extra}".strip()
    if driver:
        conf["spark.driver.extraJavaOptions"] = driver
    executor = f"{sp.executor_java_options} {executor_extra}".strip()
    if executor:
        conf["spark.executor.extraJavaOptions"] = executor
    if sp.preload_workers and preload:
        conf["spark.python.daemon.module"] = DAEMON_MODULE
        conf[f"spark.executorEnv.{PRELOAD_ENV}"] = ",".join(preload)
    return conf


def driver_class_archive(
    sp: SparkSettings, submitted: bool
) -> tuple[str, tuple[Path, Path] | None]:
    """The class archive's JVM options for the driver this process is about to launch, and the
    archive files it writes (:func:`spcl.spark.class_sharing.sharing_options`); nothing under
    spark-submit (it launched the driver), when a JVM already runs here, or when
    ``sp.class_sharing`` is off."""
    from pyspark import SparkContext

    if not sp.class_sharing or submitted or SparkContext._gateway is not None:
        return "", None

    return sharing_options(cache_dir(), sp.driver_java_options)


def build_session(
    settings: Settings | None = None,
    master: str | None = None,
    app_name: str | None = None,
    submitted: bool = False,
    preload: tuple[str, ...] = (),
) -> SparkSession:
    """A SparkSession configured for spcl (workers use this interpreter, Arrow batches sized by
    settings).

    ``settings`` default to the default config; ``app_name`` names the job (default: the config's);
    ``submitted``: running under spark-submit, whose master is kept when ``master`` is not given;
    ``preload``: the modules a job's Python workers import, imported once by the daemon they fork
    from (:func:`startup_conf`). The config's ``spark.conf`` wins over every setting made here.
    """
    ensure_java()
    settings = settings if settings is not None else load_settings(None)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    sp = settings.spark
    archive, pending = driver_class_archive(sp, submitted)
    builder = SparkSession.builder.appName(app_name or sp.app_name)
    if master or not submitted:
        builder = builder.master(master or sp.master)
    conf = {
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(sp.batch_rows),
        "spark.sql.execution.arrow.maxBytesPerBatch": str(64 << 20),
        "spark.sql.files.maxPartitionBytes": sp.max_partition_bytes,
        # a file "costs" a whole partition: small shard files are not packed into one task
        "spark.sql.files.openCostInBytes": sp.max_partition_bytes,
        "spark.ui.showConsoleProgress": "false",
        # Python workers start as `python -m pyspark.daemon` in the job's working folder, which
        # Python puts first on sys.path: a folder named `spcl` there (a clone's parent, a tmp
        # folder) would be imported instead of the installed package. Safe-path mode (Python 3.11+)
        # leaves the working folder out.
        "spark.executorEnv.PYTHONSAFEPATH": "1",
        # an executor on this machine maps the driver's archive too, once it exists (a JVM that
        # finds no file, or one of another class path or build, runs without it)
        **startup_conf(sp, preload, archive, archive if pending is None else ""),
        **sp.conf,
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if pending is not None:
        # this driver writes the archive: rename it into place once it exits
        finish_at_exit(spark, pending)
    spark.sparkContext.setLogLevel("WARN")
    if not logging.getLogger("spcl").isEnabledFor(logging.DEBUG):
        quiet_task_failures(spark)
    return spark


TASK_FAILURE_LOGGERS: tuple[str, ...] = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
)
"""Spark's loggers that print a Java stack trace for every failed task (≈ 100 lines each)."""


def quiet_task_failures(spark: SparkSession) -> None:
    """Keep Spark's stack traces of failed tasks off the console: the CLI reports a failed task as
    one line (``spcl.spark.errors``); ``-v`` keeps them. Does nothing where log4j 2 cannot be
    reached."""
    try:
        jvm = spark.sparkContext._jvm
        if jvm is None:  # not connected to a JVM: nothing to quiet
            return
        off = jvm.org.apache.logging.log4j.Level.OFF
        for name in TASK_FAILURE_LOGGERS:
            jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, off)
    except Exception:  # another logging backend (a cluster's own Spark build): keep its defaults
        return
