"""Spark as infrastructure: sessions, per-file tasks, progress, errors. Spark only distributes;
every per-file and per-batch function is plain Python, and this package imports none of the jobs
(they import it: the filter's Spark engine is ``spcl.filter.spark``, the DataFrame API
``spcl.integrations.spark``).


- ``session``: the one session builder (Java check, workers use this interpreter, config settings);
- ``files``: one Spark task per input file for the LLM-stage jobs (mask, generalize, annotate);
- ``sample``: the review sample computed by Spark SQL, equal to the plain-Python sample;
- ``errors``: a failed Spark job as one line (the worker's Python exception).
"""

from spcl.spark.session import JavaMissing, build_session, ensure_java

__all__ = ["JavaMissing", "build_session", "ensure_java"]
