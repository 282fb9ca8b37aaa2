"""``spcl report``: a self-contained HTML report (charts inlined) of a filter or mask output.

spcl report out/ # -> out/report.html + out/report/*.png spcl report out/ --mask masked/ # the
filter run and its mask stage on one page spcl report masked/ # a mask output alone spcl report out/
--mask masked/ --gpu-tokens-per-s 2500 # GPU-hours the flagged documents need spcl report out/
--screen-eval eval.json # add the screen's table per language and source (spcl eval screen --output)
spcl report eval.json # that table alone -> report.html beside eval.json
"""

from __future__ import annotations

import argparse

from spcl.errors import RunFailed
from spcl.report import write_report


def run_report(args: argparse.Namespace) -> int:
    """Write the report; exit 0, or 1 with a message when the folder is not an spcl output."""
    try:
        page = write_report(
            args.output,
            mask=args.mask,
            dest=args.out,
            gpu_tokens_per_s=args.gpu_tokens_per_s,
            screen_eval=args.screen_eval,
        )
    except (ValueError, OSError) as err:
        raise RunFailed(str(err)) from err
    print(f"wrote {page} (charts in {page.parent / 'report'})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl report``."""
    parser = sub.add_parser(
        "report",
        help="HTML report of a filter or mask output (counts, charts)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "output",
        help=(
            "a filter output (stats.json, decision=*/), a mask output (metrics.json) or a "
            "`spcl eval screen --output` JSON report"
        ),
    )
    parser.add_argument(
        "--mask", default=None, help="a mask output to add to a filter output's report"
    )
    parser.add_argument(
        "--screen-eval",
        default=None,
        metavar="EVAL.json",
        help="a `spcl eval screen --output` report: adds its table per language and source",
    )
    parser.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        help="folder for report.html and report/ (default: OUTPUT)",
    )
    parser.add_argument(
        "--gpu-tokens-per-s",
        type=float,
        default=None,
        metavar="RATE",
        help=(
            "generated tokens per second one GPU sustains for the mask model: the report's "
            "GPU-hours estimate for the flagged documents (default: the mask run's own rate)"
        ),
    )
    parser.set_defaults(func=run_report)
