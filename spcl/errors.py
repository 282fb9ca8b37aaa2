"""The root of every spcl error and the families that decide the process exit code.

This is the lowest layer: it imports nothing from spcl. Every exception class in spcl derives from
:class:`SpclError` through one family; the family's ``exit_code`` is what ``spcl`` exits with when
the error reaches the CLI (:func:`spcl.cli.main` is the one place that turns an error into a message
and a code). :data:`EXIT_CODES` is the table the docs show and the tests check.

Messages name paths, keys, counts and types, never a value read from the data.
"""

from __future__ import annotations

from typing import ClassVar

OK = 0
"""The run finished and every record is accounted for."""


class SpclError(Exception):
    """Root of every spcl error; ``exit_code`` is the process exit code when it reaches the CLI."""

    exit_code: ClassVar[int] = 1


class RunFailed(SpclError):
    """The run could not start, stopped, or did not reconcile (exit 1)."""

    exit_code: ClassVar[int] = 1


class UsageError(SpclError):
    """Bad usage or configuration: a flag, a config key, a path that is unsafe or impossible
    (exit 2)."""

    exit_code: ClassVar[int] = 2


class InvalidConfig(UsageError):
    """A configuration file or its overrides do not validate; the message names one key per line
    (exit 2)."""


class Pending(SpclError):
    """Transient backend failures: some records are pending; rerun the same command to retry them
    (exit 3)."""

    exit_code: ClassVar[int] = 3


EXIT_CODES: dict[int, tuple[str, str]] = {
    OK: ("ok", "the run finished; every input record is in exactly one output"),
    RunFailed.exit_code: (
        "failed run",
        (
            "the run could not start, stopped, or did not reconcile (a missing model, Java or"
            " server, a damaged marker, an output in use, a full disk, a failed Spark task)"
        ),
    ),
    UsageError.exit_code: (
        "bad usage or configuration",
        (
            "a flag or configuration key is invalid, an input is missing, or an output would"
            " overwrite an input"
        ),
    ),
    Pending.exit_code: (
        "pending",
        (
            "some documents failed transiently (server or engine trouble); rerun the same command"
            " to retry exactly those"
        ),
    ),
}
"""Exit code → (short name, what it means): the table of ``spcl`` exit codes."""

FAMILIES: tuple[type[SpclError], ...] = (RunFailed, UsageError, Pending)
"""The families every spcl exception class derives from (one exit code each)."""
