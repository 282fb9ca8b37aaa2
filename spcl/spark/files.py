"""One Spark task per input file, for the jobs whose unit of work is a file (mask, generalize, annotate).

The driver hands ``(path, key)`` pairs to the executors, one partition each; the job's plain-Python
``body(config_json, items)`` runs there (the same code the python engine runs) and yields one JSON line per
file; the lines come back to the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any


def run_per_file(spark: Any, items: list[tuple[str, str]], body: Callable[[str, Iterable[tuple[str, str]]],
                 Iterator[str]], config_json: str) -> list[str]:
    """Run ``body(config_json, [item])`` for every item in its own Spark task; the JSON lines it yields."""
    if not items:
        return []
    rdd = spark.sparkContext.parallelize(items, numSlices=len(items))
    return list(rdd.mapPartitions(partial(body, config_json)).collect())
