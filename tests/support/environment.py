"""Settings the test session gives every process it starts (set by ``tests/conftest.py``)."""

from __future__ import annotations

# Every Spark driver the tests start (in-process sessions, the jobs/*.py subprocesses, spark-submit:
# all read SPARK_SUBMIT_OPTS) runs its short jobs with the quick C1 compiler only: the optimizing C2
# compiler's threads otherwise compete with the test for the CPU at JVM start-up, about doubling the
# start-up time on two cores. A JIT setting only; what the jobs compute is the same.
SPARK_TEST_JAVA_OPTS = "-XX:TieredStopAtLevel=1"
