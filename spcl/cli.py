"""The ``spcl`` console script: one subcommand per module under ``spcl.commands``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import NamedTuple

from spcl import __version__
from spcl.errors import InvalidConfig, RunFailed, SpclError
from spcl.messages import OneLineFormatter, os_error_line, shown, shown_lines
from spcl.screen.train_options import TRAIN_HELP
from spcl.spark.errors import task_failure_line

log = logging.getLogger("spcl")


class Command(NamedTuple):
    """One entry of the command registry: the module that registers it and its one-line help."""

    module: str
    help: str | None


COMMANDS: dict[str, Command] = {
    "filter": Command(
        "spcl.commands.filter", "screen a crawl: clean / flagged / quarantine outputs"
    ),
    "bench": Command("spcl.commands.bench", "benchmarks: filter, dataframe, screen, generalize"),
    "review": Command(
        "spcl.commands.review", "sampled manual review: export, agree, report, to-train"
    ),
    "manifest": Command(
        "spcl.commands.manifest", "write or verify dataset manifests (SHA-256 per file)"
    ),
    "synth": Command("spcl.commands.synth", "generate seeded synthetic data sets"),
    "eval": Command("spcl.commands.eval", "evaluate pipeline stages against gold data"),
    "vault": Command("spcl.commands.vault", "manage keys of the encrypted mapping vault"),
    "mask": Command(
        "spcl.commands.mask", "extract and mask flagged documents (fail closed, resumable)"
    ),
    "unmask": Command(
        "spcl.commands.unmask",
        "restore masked rows' source text from the vault (round-trip proved)",
    ),
    "generalize": Command(
        "spcl.commands.generalize", "truthful generalization of flagged documents (fail closed)"
    ),
    "train": Command("spcl.commands.train", TRAIN_HELP),
    "report": Command(
        "spcl.commands.report", "HTML report of a filter or mask output (counts, charts)"
    ),
    "annotate": Command(
        "spcl.commands.annotate", "label a crawl sample with teacher LLMs (agreement filter)"
    ),
    "train-extractor": Command(
        "spcl.commands.train_extractor",
        "fine-tune the LLM extractor (LoRA or full; completion-only loss)",
    ),
    "train-names": Command(
        "spcl.commands.train_names", "train the CPU person-name CRFs (ja, ko; en)"
    ),
    "train-tier": Command(
        "spcl.commands.train_tier",
        "train the tier (encoder + head) that rescores screen-flagged documents",
    ),
    "bench-screen": Command("spcl.commands.bench", None),  # deprecated alias, hidden from the list
    # deprecated alias, hidden from the list
    "bench-generalize": Command("spcl.commands.bench", None),
}
"""Command name → the module whose ``register(sub)`` adds it, and its help line. Only the module of
the command that runs is imported, so ``spcl --help`` and every command start without the others'
dependencies; ``tests/commands/test_registry.py`` checks the help lines against the parsers."""


def _base_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(prog="spcl", description=__doc__)
    parser.add_argument("--version", action="version", version=f"spcl {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    return parser, sub


def _modules(names: Sequence[str]) -> list[str]:
    """The registry's modules for ``names``, each once, in registry order."""
    return list(dict.fromkeys(COMMANDS[name].module for name in names))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand (imports every command module)."""
    parser, sub = _base_parser()
    for module in _modules(list(COMMANDS)):
        importlib.import_module(module).register(sub)
    return parser


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for ``argv``: the full subcommand of the command named in it (only that module is
    imported), and a one-line stub for every other command so that ``--help`` and a wrong name read
    as with :func:`build_parser`."""
    named = next((a for a in argv if not a.startswith("-")), None)
    if named not in COMMANDS:
        parser, sub = _base_parser()
        for name, command in COMMANDS.items():
            if command.help:
                sub.add_parser(name, add_help=False, help=command.help)
            else:
                sub.add_parser(name, add_help=False)
        return parser
    wanted = COMMANDS[named].module
    parser, sub = _base_parser()
    importlib.import_module(wanted).register(sub)
    return parser


def _label(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """``spcl <command> [<step>]`` as the user typed it, e.g. ``spcl review export``."""
    words = ["spcl"]
    while True:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, sub.dest, None) if sub is not None and sub.dest else None
        if sub is None or not isinstance(chosen, str) or chosen not in sub.choices:
            return " ".join(words)
        words.append(chosen)
        parser = sub.choices[chosen]


def error_exit(err: BaseException, label: str) -> int | None:
    """Print ``err`` as the one line (or, for a configuration error, the lines) the user sees and
    return the exit code; ``None`` for an error that is not one of spcl's (the caller re-raises).

    This is the one place that turns errors into messages and exit codes: an :class:`SpclError`
    exits with its family's code (``spcl.errors.EXIT_CODES``), a failed read or write and a failed
    Spark task exit 1. Every message is escaped with :func:`spcl.messages.shown` (one line, no
    control codes); messages name paths, keys and counts, never a value from the data.
    """
    if isinstance(err, InvalidConfig):
        print(f"spcl: {shown_lines(err)}", file=sys.stderr)
        return err.exit_code
    if isinstance(err, SpclError):
        text = shown_lines(err) if isinstance(err.__cause__, InvalidConfig) else shown(err)
        if text:
            print(f"{label}: {text}", file=sys.stderr)
        return err.exit_code
    # a full disk, a read-only or missing folder: the path and the cause
    if isinstance(err, OSError):
        print(f"{label}: {os_error_line(err)}", file=sys.stderr)
        return RunFailed.exit_code
    line = task_failure_line(err)  # a failed Spark task: the worker's exception, not the Java trace
    if line is None:
        return None
    print(f"{label}: {line}", file=sys.stderr)
    return RunFailed.exit_code


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (see ``spcl.errors.EXIT_CODES``: 0 ok, 1 failed
    run, 2 bad usage or config, 3 transient failures pending a rerun).

    Errors reach the user as one line, never a traceback (``-v`` logs it): a config error (2); a
    file that cannot be written or read — full disk, read-only folder — naming the path and the
    cause (1); a failed Spark task, as the exception the worker raised (1).
    """
    argv = sys.argv[1:] if argv is None else argv
    parser = parser_for(argv)
    args = parser.parse_args(argv)
    handler = logging.StreamHandler()
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, handlers=[handler])
    try:
        return int(args.func(args) or 0)
    except Exception as err:
        code = error_exit(err, _label(parser, args))
        if code is None:
            raise
        log.debug("%s failed", args.command, exc_info=True)
        return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
