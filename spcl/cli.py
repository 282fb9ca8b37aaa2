"""The ``spcl`` console script: one subcommand per module under ``spcl.commands``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from spcl import __version__
from spcl.config import ConfigError
from spcl.executor.errors import JobError
from spcl.messages import OneLineFormatter, os_error_line, shown, shown_lines
from spcl.spark.errors import task_failure_line

log = logging.getLogger("spcl")

COMMAND_MODULES: tuple[str, ...] = (
    "spcl.commands.filter",
    "spcl.commands.bench",
    "spcl.commands.review",
    "spcl.commands.manifest",
    "spcl.commands.synth",
    "spcl.commands.eval",
    "spcl.commands.vault",
    "spcl.commands.mask",
    "spcl.commands.unmask",
    "spcl.commands.generalize",
    "spcl.commands.train",
    "spcl.commands.report",
    "spcl.commands.annotate",
    "spcl.commands.train_extractor",
    "spcl.commands.train_names",
    "spcl.commands.train_tier",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(prog="spcl", description=__doc__)
    parser.add_argument("--version", action="version", version=f"spcl {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (0 ok, 1 failed run, 2 bad usage or config).

    Errors reach the user as one line, never a traceback (``-v`` logs it): a config error (2); a file that cannot
    be written or read — full disk, read-only folder — naming the path and the cause (1); a failed Spark task,
    as the exception the worker raised (1).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = logging.StreamHandler()
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, handlers=[handler])
    try:
        return int(args.func(args) or 0)
    except ConfigError as err:
        print(f"spcl: {shown_lines(err)}", file=sys.stderr)
        return 2
    except JobError as err:  # a job that cannot run (a damaged done-marker, an output in use): one line
        log.debug("%s failed", args.command, exc_info=True)
        print(f"spcl {args.command}: {shown(err)}", file=sys.stderr)
        return 1
    except OSError as err:  # a full disk, a read-only or missing folder: the path and the cause, no traceback
        log.debug("%s failed", args.command, exc_info=True)
        print(f"spcl {args.command}: {os_error_line(err)}", file=sys.stderr)
        return 1
    except Exception as err:
        line = task_failure_line(err)  # a failed Spark task: the worker's exception, not the Java trace
        if line is None:
            raise
        log.debug("%s failed", args.command, exc_info=True)
        print(f"spcl {args.command}: {line}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
