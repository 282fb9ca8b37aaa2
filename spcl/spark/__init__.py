"""All Spark wiring of spcl: Spark only distributes; every per-file and per-batch function is plain Python.

- ``session``: the one session builder (Java check, workers use this interpreter, config settings);
- ``filter``: the filter job's listing and ``mapInArrow`` adapter over ``spcl.filter.task.screen_bytes``;
- ``files``: one Spark task per input file for the LLM-stage jobs (mask, generalize, annotate);
- ``sample``: the review sample computed by Spark SQL, equal to the plain-Python sample;
- ``errors``: a failed Spark job as one line (the worker's Python exception).
"""

from spcl.spark.session import JavaMissing, build_session, ensure_java

__all__ = ["JavaMissing", "build_session", "ensure_java"]
