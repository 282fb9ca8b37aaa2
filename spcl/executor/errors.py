"""The one error a job raises when it cannot run: bad input, an output folder of another input or
settings, a Spark job that stopped. Messages name paths, keys and types, never values."""

from __future__ import annotations

from spcl.errors import RunFailed


class JobError(RunFailed, RuntimeError):
    """A job cannot run or stopped; the message names paths, keys and types only (never document
    text)."""
