"""``spcl bench filter``: throughput of the filter, plain Python vs Spark local[2] (``--cluster``: a standalone
cluster of 1 and 2 workers), marginal docs/s and fixed start-up;
``spcl bench dataframe``: ``screen_dataframe`` vs the filter's Spark engine on the same real documents."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl bench``."""
    parser = sub.add_parser("bench", help="benchmarks (docs/s per core, peak memory)")
    bench_sub = parser.add_subparsers(dest="bench", required=True, metavar="BENCH")
    filt = bench_sub.add_parser("filter", help="the filter: plain Python, Spark local[2], standalone cluster")
    filt.add_argument("--docs", type=int, default=50_000, help="documents to generate (default 50000)")
    filt.add_argument("--seed", type=int, default=0)
    filt.add_argument("--workdir", default=None, help="folder for generated data (default: a temp dir)")
    filt.add_argument("--skip-spark", action="store_true")
    filt.add_argument("--screen", action="store_true", help="include the screen model (full screen path)")
    filt.add_argument("--corpus", choices=("real", "synthetic"), default="real",
                      help="real en/ja/ko text, one language per document (default), or the synthetic templates")
    filt.add_argument("--repeat", type=int, default=3, help="cold runs per engine and input size (median; default 3)")
    filt.add_argument("--cluster", action="store_true",
                      help="also a standalone cluster of 1 and 2 single-core workers: scale-out, start-up, worker RSS")
    filt.set_defaults(func=_run_filter_bench)
    frame = bench_sub.add_parser("dataframe", help="screen_dataframe vs spcl filter (Spark), same real documents")
    frame.add_argument("--docs", type=int, default=20_000, help="real documents to write (default 20000)")
    frame.add_argument("--seed", type=int, default=0)
    frame.add_argument("--cores", type=int, default=2, help="Spark local[N] (default 2)")
    frame.add_argument("--workdir", default=None, help="folder for data and outputs (default: a temp dir)")
    frame.set_defaults(func=_run_dataframe_bench)


def _run_filter_bench(args: argparse.Namespace) -> int:
    from spcl.bench.filter import run_filter_bench

    run_filter_bench(args.docs, args.seed, args.workdir, spark=not args.skip_spark, screen=args.screen,
                     corpus=args.corpus, repeat=args.repeat, cluster=args.cluster)
    return 0


def _run_dataframe_bench(args: argparse.Namespace) -> int:
    from spcl.bench.dataframe import run_dataframe_bench

    run_dataframe_bench(args.docs, args.seed, args.workdir, args.cores)
    return 0
