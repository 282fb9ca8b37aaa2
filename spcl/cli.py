"""The ``spcl`` console script: one subcommand per module under ``spcl.commands``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from spcl import __version__
from spcl.config import ConfigError

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
    "spcl.commands.bench_screen",
    "spcl.commands.report",
    "spcl.commands.annotate",
    "spcl.commands.train_extractor",
    "spcl.commands.train_names",
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
    """Run the CLI; returns the process exit code (0 ok, 1 failed run, 2 bad usage or config)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except ConfigError as err:
        print(f"spcl: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
