"""One Spark task per input file, for the jobs whose unit of work is a file (mask, generalize,
annotate).

The driver hands ``(path, key)`` pairs to the executors, one partition each; the job's plain-Python
``body(config_json, items)`` runs there (the same code the python engine runs) and yields one JSON
line per file; the lines come back to the driver.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel

from spcl.io.storage import is_local, local_path

C = TypeVar("C")


def with_absolute_paths(cfg: C, paths: Iterable[str]) -> C:
    """``cfg`` (a dataclass) with its local path fields ``paths`` made absolute here, on the driver.

    An executor resolves a relative path against its own work folder (YARN, standalone), so a task
    would read or write elsewhere.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Job:
    ...     input: str
    ...     output: str
    >>> job = with_absolute_paths(Job("in", "s3a://b/out"), ("input", "output"))
    >>> os.path.isabs(job.input), job.output
    (True, 's3a://b/out')
    """
    changes: dict[str, str] = {}
    for name in paths:
        value = getattr(cfg, name)
        if isinstance(value, str) and value and is_local(value):
            changes[name] = os.path.abspath(local_path(value))
    if not changes:
        return cfg
    if isinstance(cfg, BaseModel):  # a job config (spcl.config_models.JobConfig)
        return cfg.model_copy(update=changes)
    return dataclasses.replace(cfg, **changes)  # type: ignore[type-var]  # C: a dataclass


def run_per_file(
    spark: Any,
    items: list[tuple[str, str]],
    body: Callable[[str, Iterable[tuple[str, str]]], Iterator[str]],
    config_json: str,
) -> list[str]:
    """Run ``body(config_json, [item])`` for every item in its own Spark task; the JSON lines it
    yields."""
    if not items:
        return []
    rdd = spark.sparkContext.parallelize(items, numSlices=len(items))
    return list(rdd.mapPartitions(partial(body, config_json)).collect())
