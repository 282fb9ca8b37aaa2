"""``spcl bench-screen``: throughput of the full screen in plain Python (one core), and peak memory.

The full screen is what the filter job runs per document: NFC normalisation, language guess, the rule
detectors, then tokenize → hashed TF-IDF → LightGBM ∪ LinearSVC (+ category scores). The numbers are
printed, never asserted (this machine has slow episodes: compare medians of repeated runs).
"""

from __future__ import annotations

import argparse
import json
import os


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl bench-screen``."""
    parser = sub.add_parser("bench-screen", help="screen model throughput: docs/s per core, peak RSS")
    parser.add_argument("--docs", type=int, default=50_000, help="documents to generate (default 50000)")
    parser.add_argument("--batch", type=int, default=2000, help="rows per batch (default 2000, as the job)")
    parser.add_argument("--model", default=None, help="screen model folder (default: the configured one)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-rules", action="store_true", help="time the model path only")
    parser.add_argument("--corpus", choices=("mixed", "synthetic"), default="mixed",
                        help="real en/ja/ko text, a third each (default), or the synthetic templates")
    parser.add_argument("--compare", default=None, help="a second model folder timed on the same documents")
    parser.set_defaults(func=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    """Generate the corpus, run the screen batch by batch on one core and print a JSON summary."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from spcl.bench.screen import bench_screen

    result = bench_screen(args.docs, args.batch, args.model, args.seed, rules=not args.no_rules, corpus=args.corpus,
                          compare=args.compare)
    print(json.dumps(result, indent=2))
    return 0
