"""``spcl filter``: screen a crawl into clean / flagged / quarantine outputs."""

from __future__ import annotations

import argparse
import json
import logging

from spcl.config import load_settings
from spcl.filter.job import FilterJob, run_filter

log = logging.getLogger("spcl.filter")


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments shared by ``spcl filter`` and ``jobs/filter.py``."""
    parser.add_argument(
        "--input",
        "-i",
        action="append",
        required=True,
        help="file, directory or glob; local path or any Hadoop URL (repeatable)",
    )
    parser.add_argument("--output", "-o", required=True, help="output folder (local path or URL)")
    parser.add_argument("--conf", default=None, help="YAML config (default: conf/default.yaml)")
    parser.add_argument(
        "--master", default=None, help="Spark master (default from config: local[*])"
    )
    parser.add_argument(
        "--engine",
        choices=("spark", "python"),
        default="spark",
        help="spark (default) or python (single process, local files)",
    )
    parser.add_argument(
        "--model", default=None, help="screen model folder (default models/screen-default)"
    )
    parser.add_argument(
        "--no-screen", action="store_true", help="rules only: do not run the screen model"
    )
    parser.add_argument(
        "--text-field",
        default=None,
        metavar="FIELD",
        help="the records' text field (overrides input.text_field of the config; default text)",
    )
    parser.add_argument(
        "--id-field",
        default=None,
        metavar="FIELD",
        help="the records' id field (overrides input.id_field of the config; default id)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a previous filter run's output (refused when the folder holds anything else)",
    )
    # jobs/filter.py passes it: under spark-submit the submitted master is kept unless --master is
    # given
    parser.add_argument("--submitted", action="store_true", help=argparse.SUPPRESS)


def run_from_args(args: argparse.Namespace) -> int:
    """Run the filter job for parsed arguments; exit code 0 ok, 1 failed, 2 bad config or unsafe
    paths."""
    overrides: dict[str, object] = {}
    if args.model:
        overrides["screen.model"] = args.model
    if args.no_screen:
        overrides["screen.enabled"] = False
    if args.text_field is not None:
        overrides["input.text_field"] = args.text_field
    if args.id_field is not None:
        overrides["input.id_field"] = args.id_field
    settings = load_settings(args.conf, overrides)
    job = FilterJob(
        tuple(args.input),
        args.output,
        settings,
        args.engine,
        args.master,
        args.overwrite,
        submitted_master=args.submitted,
    )
    stats = run_filter(job)  # UsageError exits 2, JobError and JavaMissing exit 1 (spcl.cli)
    summary = {
        k: stats[k] for k in ("counts", "reconciliation", "elapsed_seconds", "docs_per_second")
    }
    print(json.dumps(summary, indent=2))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl filter``."""
    parser = sub.add_parser(
        "filter", help="screen a crawl: clean / flagged / quarantine outputs", description=__doc__
    )
    add_filter_arguments(parser)
    parser.set_defaults(func=run_from_args)
