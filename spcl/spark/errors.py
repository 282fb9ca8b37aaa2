"""One line for a failed Spark job: the Python exception a worker raised, not the Java stack trace
around it.

A task that raises in a Python worker comes back to the driver as a ``Py4JJavaError`` or a PySpark
``PythonException`` whose text is ≈ 100 lines: Java frames with the worker's Python traceback
inside. :func:`task_failure_line` finds the last Python exception line in it (``OSError: [Errno 28]
No space left on device: '/out/…'``, ``ImportError: …``) and says what it means when the workers
could not import spcl.
"""

from __future__ import annotations

from spcl.messages import shown

MAX_CHARS = 400


def is_spark_failure(err: BaseException) -> bool:
    """Whether ``err`` comes from Spark (py4j or PySpark), i.e. a failed job or task rather than
    driver code."""
    return type(err).__module__.split(".")[0] in ("py4j", "pyspark")


def _python_exception_line(text: str) -> str | None:
    """The exception line of the last Python traceback in ``text`` (the first unindented line
    after it)."""
    lines = text.splitlines()
    found = None
    for i, line in enumerate(lines):
        if "Traceback (most recent call last)" in line:
            found = next((ln for ln in lines[i + 1 :] if ln.strip() and not ln[0].isspace()), found)
    return found


def task_failure_line(err: BaseException) -> str | None:
    """One line for a Spark failure ``err`` (``None`` when ``err`` is not one): the worker's
    exception, escaped.

    >>> class Py4JJavaError(Exception): pass
    >>> Py4JJavaError.__module__ = "py4j.protocol"
    >>> trace = ("Job aborted\\n\\tat org.apache...\\nTraceback (most recent call last):\\n"
    ...          "  File \\"x.py\\"\\nImportError: cannot import name '__version__' from 'spcl' "
    ...          "(unknown location)\\n\\tat org...")
    >>> task_failure_line(Py4JJavaError(trace))[:60]
    "a Spark task failed: ImportError: cannot import name '__vers"
    """
    if not is_spark_failure(err):
        return None
    text = str(err)
    line = _python_exception_line(text)
    if line is None:
        line = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(err).__name__)
    message = f"a Spark task failed: {shown(line.strip())[:MAX_CHARS]}"
    if line.startswith(("ImportError", "ModuleNotFoundError")) and "spcl" in line:
        message += (
            " — Spark's Python workers cannot import the installed spcl: install it in the workers'"
            " Python (PYSPARK_PYTHON / spark.pyspark.python)"
        )
    return message
