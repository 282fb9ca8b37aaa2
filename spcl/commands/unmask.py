"""``spcl unmask``: restore the source text of a mask output's rows from the encrypted vault.

    spcl unmask --masked masked/ --vault vault/ --output restored/ [--ids FILE [--match id|row_key]]
                [--require-verified]

The key comes from ``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``. Writes ``restored/part-*.parquet``
(the masked row's columns + ``text`` + ``verified``), ``_refused.jsonl`` (every refused row: id, row
key, reason) and ``_unmask.json`` (the summary), owner-readable only, into a folder this run creates
with mode 0700 (or an empty one, or an earlier unmask output). An ``--output`` that is, contains or
lies inside the masked input, the vault, or any mask, generalize or filter output or vault folder is
refused (exit 2): released data is never overwritten.

Every row's round trip is proved with keyed hashes the mask job stored in the vault (an edit
anywhere in the masked text is refused as ``masked_text_changed``), and a source that was not NFC
comes back byte-exact. Only the vault files the rows name are read; a corrupt line blocks only its
own record and is named by file and line. Rows that cannot be trusted are refused, each with its
reason (counts in ``refused_by_reason``), named by id and row key, never by value.

``--ids FILE``: restore only rows whose id is one of the file's lines (one per line; ids need not be
unique, so every row of a listed id is restored); ``--match row_key`` reads the lines as row keys
(exactly one row each).

Each vault record is bound to the vault file (the run) that wrote it: a record copied in from an
earlier run is refused (``auth_failed``). Vaults written by earlier versions (records without keyed
hashes, or not bound to a run) are still read: those rows are restored, counted as ``unverified``
(their ``verified`` column is false, and a warning says how many); ``--require-verified`` refuses
them instead. Exit 1 when any row was refused or a selected value matched no row, else 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from spcl.errors import RunFailed
from spcl.mask_stage import unmask_output
from spcl.mask_stage.unmask import read_selection
from spcl.messages import shown

_SHOWN = 50


def _run(args: argparse.Namespace) -> int:
    try:
        select = read_selection(args.ids) if args.ids else None
        report = unmask_output(
            args.masked,
            args.vault,
            args.out,
            select=select,
            match=args.match,
            require_verified=args.require_verified,
        )
    except (OSError, UnicodeDecodeError) as err:  # UnsafeOutput exits 2, VaultError 1 (spcl.cli)
        raise RunFailed(str(err)) from err
    print(json.dumps(report.summary()))
    for doc_id, row_key, reason in report.refused[:_SHOWN]:
        print(
            f"spcl unmask: refused id={shown(doc_id)} row_key={shown(row_key)}: {reason}",
            file=sys.stderr,
        )
    if len(report.refused) > _SHOWN:
        print(
            f"spcl unmask: … and {len(report.refused) - _SHOWN} more refused rows", file=sys.stderr
        )
    for name, line in report.corrupt_records[:_SHOWN]:
        print(
            f"spcl unmask: skipped a corrupt vault record at {shown(name)}:{line}", file=sys.stderr
        )
    for name in report.vault_files_changed:
        print(
            f"spcl unmask: warning: vault file {shown(name)} differs from the vault's"
            " manifest.json",
            file=sys.stderr,
        )
    if report.unverified:
        print(
            f"spcl unmask: warning: {report.unverified} rows were restored from vault records of an"
            " earlier format (without round-trip hashes or not bound to their run: not verified;"
            " their 'verified' column is false; --require-verified refuses them)",
            file=sys.stderr,
        )
    if report.selected_not_found:
        print(
            f"spcl unmask: {report.selected_not_found} values of {shown(args.ids)} matched no row's"
            f" {args.match}",
            file=sys.stderr,
        )
    if report.refused or report.selected_not_found:
        raise RunFailed(
            f"{len(report.refused)} row(s) refused, {report.selected_not_found} selected value(s) "
            "not found"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl unmask``."""
    parser = sub.add_parser(
        "unmask",
        help="restore masked rows' source text from the vault (round-trip proved)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--masked", required=True, help="a mask output folder (or its masked/ folder)"
    )
    parser.add_argument("--vault", required=True, help="the vault folder the mask run wrote")
    parser.add_argument(
        "--output", "-o", dest="out", required=True, help="folder for the restored Parquet files"
    )
    parser.add_argument(
        "--ids",
        default=None,
        metavar="FILE",
        help="restore only the rows listed in FILE (one id per line; see --match)",
    )
    parser.add_argument(
        "--match",
        choices=("id", "row_key"),
        default="id",
        help="what the lines of --ids are: ids (every row of the id, default) or row keys",
    )
    parser.add_argument(
        "--require-verified",
        action="store_true",
        help="refuse rows whose vault record predates round-trip hashes instead of restoring them",
    )
    parser.set_defaults(func=_run)
