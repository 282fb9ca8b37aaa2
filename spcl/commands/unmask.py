"""``spcl unmask``: restore the source text of a mask output's rows from the encrypted vault.

    spcl unmask --masked masked/ --vault vault/ --out restored/

The key comes from ``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``. Writes ``restored/part-*.parquet`` (the masked
row's columns + ``text``, owner-readable only). Rows whose mapping is missing, ambiguous or fails the round
trip are refused and named by id and row key; the command then exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys

from spcl.messages import shown


def _run(args: argparse.Namespace) -> int:
    from spcl.mask.vault import VaultError
    from spcl.mask_stage import unmask_output

    try:
        report = unmask_output(args.masked, args.vault, args.out)
    except (VaultError, OSError) as err:
        print(f"spcl unmask: {shown(err)}", file=sys.stderr)
        return 1
    print(json.dumps({"files": report.files, "restored": report.restored, "refused": len(report.refused)}))
    for doc_id, row_key, reason in report.refused[:50]:
        print(f"spcl unmask: refused id={shown(doc_id)} row_key={shown(row_key)}: {reason}", file=sys.stderr)
    return 1 if report.refused else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl unmask``."""
    parser = sub.add_parser("unmask", help="restore masked rows' source text from the vault (round-trip checked)",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--masked", required=True, help="a mask output folder (or its masked/ folder)")
    parser.add_argument("--vault", required=True, help="the vault folder the mask run wrote")
    parser.add_argument("--out", required=True, help="folder for the restored Parquet files")
    parser.set_defaults(func=_run)
