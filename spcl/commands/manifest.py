"""``spcl manifest``: write or verify a dataset folder's SHA-256 manifest.

spcl manifest verify out/
spcl manifest write data/my-set --kind training-set --licence CC-BY-SA-4.0 --source data/raw
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from spcl.errors import RunFailed
from spcl.manifest import (
    MANIFEST_NAME,
    manifest_ref,
    read_manifest,
    record_counts,
    verify_manifest,
    write_manifest,
)


def _verify(args: argparse.Namespace) -> int:
    failed = []
    for root in args.dirs:
        if not (Path(root) / MANIFEST_NAME).is_file():
            print(f"{root}: no {MANIFEST_NAME}", file=sys.stderr)
            failed.append(root)
            continue
        try:
            report = verify_manifest(root)
            listed = len(read_manifest(root).get("files", {}))
        except (OSError, ValueError, KeyError) as err:
            print(f"{root}: unreadable manifest ({type(err).__name__})", file=sys.stderr)
            failed.append(root)
            continue
        if report.ok:
            print(f"{root}: OK ({listed} files)")
            continue
        failed.append(root)
        for kind, names in (
            ("changed", report.changed),
            ("missing", report.missing),
            ("unlisted", report.unlisted),
        ):
            for name in names:
                print(f"{root}: {kind}: {name}", file=sys.stderr)
    if failed:
        raise RunFailed(f"{len(failed)} of {len(args.dirs)} folder(s) failed verification")
    return 0


def _write(args: argparse.Namespace) -> int:
    provenance: dict[str, object] = {"kind": args.kind}
    if args.licence:
        provenance["licence"] = args.licence
    if args.config_hash:
        provenance["config_hash"] = args.config_hash
    if args.kappa is not None:
        provenance["iaa"] = {"kappa": args.kappa}
    provenance["sources"] = [manifest_ref(s) for s in args.source]
    counts = record_counts(args.dir)
    provenance["records"] = sum(counts.values())
    provenance["record_counts"] = counts
    manifest = write_manifest(args.dir, **provenance)
    print(
        json.dumps(
            {k: v for k, v in manifest.items() if k != "files"} | {"files": len(manifest["files"])}
        )
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl manifest verify`` and ``spcl manifest write``."""
    parser = sub.add_parser(
        "manifest",
        help="write or verify dataset manifests (SHA-256 per file)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    msub = parser.add_subparsers(dest="manifest_command", required=True, metavar="ACTION")
    p = msub.add_parser(
        "verify", help="re-hash files; exit 1 naming changed / missing / unlisted files"
    )
    p.add_argument("dirs", nargs="+", metavar="DIR")
    p.set_defaults(func=_verify)
    p = msub.add_parser("write", help="hash every file of DIR into DIR/manifest.json")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--kind", default="dataset", help="what the dataset is (e.g. training-set)")
    p.add_argument("--licence", default=None)
    p.add_argument("--config-hash", default=None)
    p.add_argument(
        "--kappa", type=float, default=None, help="inter-annotator agreement, where known"
    )
    p.add_argument(
        "--source", action="append", default=[], help="source dataset folder (repeatable)"
    )
    p.set_defaults(func=_write)
