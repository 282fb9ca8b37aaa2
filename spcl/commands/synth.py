"""``spcl synth``: seeded synthetic data sets.

spcl synth pii --seed 42 --output data/synth-pii
spcl synth to-chat --input data/synth-pii/train.jsonl --output data/synth-pii/train.chat.jsonl
spcl synth to-parquet --input data/synth-pii/test.jsonl --output data/synth-pii/test.parquet

Other synthetic sets may add their own subcommands to ``SYNTH_COMMANDS`` (``name ->
register(sub)``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from spcl.errors import RunFailed
from spcl.synth.pii import generate, split_table, write_chat


def _pii(args: argparse.Namespace) -> int:
    manifest = generate(args.out, seed=args.seed)
    print(
        json.dumps(
            {"out": str(args.out), "seed": manifest["seed"], "splits": manifest["splits"]}, indent=2
        )
    )
    return 0


def _to_chat(args: argparse.Namespace) -> int:
    try:
        n = write_chat(args.input, args.out)
    except (OSError, ValueError) as err:
        raise RunFailed(str(err)) from err
    print(json.dumps({"records": n, "out": str(args.out)}))
    return 0


def _to_parquet(args: argparse.Namespace) -> int:
    import pyarrow.parquet as pq

    try:
        table = split_table(args.input)
    except (OSError, ValueError, KeyError) as err:
        raise RunFailed(f"{type(err).__name__} reading {args.input}") from err
    pq.write_table(table, args.out)
    print(json.dumps({"records": table.num_rows, "out": str(args.out)}))
    return 0


def _register_pii(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pii", help="the synthetic PII extraction set (2,200 ko/en documents, 3 splits)"
    )
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--output", "-o", dest="out", required=True, metavar="DIR")
    p.set_defaults(func=_pii)
    p = sub.add_parser(
        "to-chat", help="PII records -> system/user prompt + assistant completion records"
    )
    p.add_argument("--input", "-i", dest="input", required=True, metavar="SPLIT.jsonl")
    p.add_argument("--output", "-o", dest="out", required=True, metavar="CHAT.jsonl")
    p.set_defaults(func=_to_chat)
    p = sub.add_parser(
        "to-parquet", help="PII records -> Parquet (id, text, lang) that `spcl mask` reads"
    )
    p.add_argument("--input", "-i", dest="input", required=True, metavar="SPLIT.jsonl")
    p.add_argument("--output", "-o", dest="out", required=True, metavar="SPLIT.parquet")
    p.set_defaults(func=_to_parquet)


SYNTH_COMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {"pii": _register_pii}


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl synth`` and its subcommands."""
    parser = sub.add_parser(
        "synth",
        help="generate seeded synthetic data sets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ssub = parser.add_subparsers(dest="synth_command", required=True, metavar="SET")
    for add in SYNTH_COMMANDS.values():
        add(ssub)
