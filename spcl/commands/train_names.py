"""``spcl train-names``: train the person-name CRFs (ja, ko on names-gold-v1; en on names-gold-v2)
and write their model card.

    spcl train-names --data data/names-gold-v1/names.jsonl --output models/names-crf
    spcl train-names --lang en --data data/names-gold-v2/names.jsonl --output models/names-crf

Deterministic for the same data, settings and package versions (L-BFGS, no sampling); the held-out
fifth of the data (by id hash) is never trained on and its numbers go to ``model_card.json``. See
``spcl.extract.names.train`` (ja, ko) and ``spcl.extract.names.train_english``. Exit status: 0
trained; 2 bad usage or unreadable data.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spcl.errors import UsageError
from spcl.extract.names.train import train_names
from spcl.extract.names.train_english import train_english


def _run(args: argparse.Namespace) -> int:
    data = Path(args.data)
    if not data.is_file():
        raise UsageError(f"{data} not found")
    langs = tuple(x.strip() for x in args.lang.split(",") if x.strip())
    if not langs or set(langs) - {"ja", "ko", "en"} or ("en" in langs and len(langs) > 1):
        raise UsageError("--lang takes ja and/or ko, or en alone (its own data)")
    if langs == ("en",):
        card = train_english(
            data,
            Path(args.out),
            c1=args.c1,
            c2=args.c2,
            max_iterations=args.max_iterations,
            max_false_rows=args.max_false_rows,
        )
        print(
            json.dumps(
                {
                    "thresholds": card["thresholds"],
                    "heldout": card["heldout_pipeline"]["en"],
                    "baseline_rules": card["baseline_rules"]["en"],
                },
                indent=1,
            )
        )
        return 0
    card = train_names(
        data,
        Path(args.out),
        c1=args.c1,
        c2=args.c2,
        max_iterations=args.max_iterations,
        max_false_rows=args.max_false_rows,
        langs=langs,
    )
    print(
        json.dumps(
            {
                "thresholds": card["thresholds"],
                "heldout": card["heldout"],
                "baseline_rules": card["baseline_rules"],
            },
            indent=1,
        )
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl train-names``."""
    p = sub.add_parser(
        "train-names",
        help="train the CPU person-name CRFs (ja, ko; en)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--data", default="data/names-gold-v1/names.jsonl", metavar="NAMES.jsonl")
    p.add_argument("--output", "-o", dest="out", default="models/names-crf", metavar="DIR")
    p.add_argument("--lang", default="ja,ko", help="ja,ko (names-gold-v1) or en (names-gold-v2)")
    p.add_argument("--c1", type=float, default=0.05, help="L1 penalty")
    p.add_argument("--c2", type=float, default=0.01, help="L2 penalty")
    p.add_argument("--max-iterations", type=int, default=200)
    p.add_argument(
        "--max-false-rows",
        type=float,
        default=0.03,
        help="false-row rate the threshold may reach on the training split's dev fifth",
    )
    p.set_defaults(func=_run)
