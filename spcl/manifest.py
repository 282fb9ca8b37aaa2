"""Dataset manifests: SHA-256 and size of every file of a dataset folder, with provenance.

Every dataset spcl writes gets a ``manifest.json`` beside its files, so that a later reader can
check that nothing changed (``verify_manifest``) and cite exactly what it used.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from spcl import __version__
from spcl.io.atomic import write_atomic
from spcl.io.hashing import sha256_file

MANIFEST_NAME = "manifest.json"

DERIVED_FILES: frozenset[str] = frozenset({"report.html"})
"""Top-level views regenerated from a dataset (``spcl report``), not part of it: not hashed, not
verified."""


class FileEntry(TypedDict):
    """One file of a manifest's ``files``: its SHA-256, size and (where the writer counted them)
    records."""

    sha256: str
    bytes: int
    records: NotRequired[int]


class ManifestRef(TypedDict):
    """How a derived dataset cites a source (:func:`manifest_ref`); the last four only when its
    manifest has them."""

    path: str
    manifest_sha256: str | None
    kind: NotRequired[str]
    records: NotRequired[int | dict[str, int]]
    licence: NotRequired[str]
    config_hash: NotRequired[str]


def _dataset_files(root: Path) -> list[Path]:
    files = []
    for dirpath, dirs, names in os.walk(root):
        # a sub-folder with its own manifest is a nested dataset, verified on its own
        dirs[:] = [d for d in dirs if not (Path(dirpath) / d / MANIFEST_NAME).is_file()]
        for name in names:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if (
                rel == MANIFEST_NAME
                or rel in DERIVED_FILES
                or name.startswith(".")
                or name == "_SUCCESS"
            ):
                continue
            files.append(path)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def write_manifest(root: str | Path, **provenance: Any) -> dict[str, Any]:
    """Hash every file under ``root`` and write ``root/manifest.json``; returns the manifest.

    ``provenance`` is stored as given (e.g. ``kind``, ``config_hash``, ``records``, ``licence``,
    ``sources``). Hidden files (Spark's ``.crc``), ``_SUCCESS`` markers and sub-folders holding
    their own manifest (nested datasets, such as a review batch's ``report/``) are left out.
    """
    root_path = Path(root)
    entries: dict[str, FileEntry] = {
        p.relative_to(root_path).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
        for p in _dataset_files(root_path)
    }
    manifest = manifest_document(entries, **provenance)
    write_atomic(
        root_path / MANIFEST_NAME, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    )
    return manifest


def manifest_document(entries: dict[str, FileEntry], **provenance: Any) -> dict[str, Any]:
    """The manifest for already-hashed files (``{relative path: {"sha256", "bytes", ...}}``).

    Used where the writers hashed their own files (the filter job's tasks), so nothing is read
    twice.
    """
    return {
        "spcl_version": __version__,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        **provenance,
        "files": entries,
    }


@dataclass
class VerifyReport:
    """What ``verify_manifest`` found: files whose bytes changed, files missing, files not
    listed."""

    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every listed file is present with its recorded hash and nothing was added."""
        return not (self.changed or self.missing or self.unlisted)


def verify_manifest(root: str | Path) -> VerifyReport:
    """Re-hash the files under ``root`` and compare them with ``root/manifest.json``."""
    root_path = Path(root)
    manifest = json.loads((root_path / MANIFEST_NAME).read_text())
    listed: dict[str, FileEntry] = manifest.get("files", {})
    present = {p.relative_to(root_path).as_posix(): p for p in _dataset_files(root_path)}
    report = VerifyReport()
    for rel, entry in sorted(listed.items()):
        path = present.get(rel)
        if path is None:
            report.missing.append(rel)
        elif path.stat().st_size != entry["bytes"] or sha256_file(path) != entry["sha256"]:
            report.changed.append(rel)
    report.unlisted = sorted(set(present) - set(listed))
    return report


def read_manifest(root: str | Path) -> dict[str, Any]:
    """The parsed ``root/manifest.json``."""
    return json.loads((Path(root) / MANIFEST_NAME).read_text())


def count_records(path: str | Path) -> int | None:
    """Records in one data file: lines of ``.jsonl``, rows of ``.csv`` (less the header) or
    ``.parquet``; ``None`` for other files.
    """
    p = Path(path)
    name = p.name.lower()
    if name.endswith(".jsonl"):
        with open(p, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    if name.endswith(".csv"):
        import csv

        with open(p, encoding="utf-8-sig", newline="") as fh:
            return max(sum(1 for _ in csv.reader(fh)) - 1, 0)
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(p).metadata.num_rows)
    return None


def record_counts(root: str | Path) -> dict[str, int]:
    """``{relative path: records}`` for every countable data file under ``root``."""
    root_path = Path(root)
    counts = {}
    for p in _dataset_files(root_path):
        n = count_records(p)
        if n is not None:
            counts[p.relative_to(root_path).as_posix()] = n
    return counts


def manifest_ref(root: str | Path) -> ManifestRef:
    """How a derived dataset cites a source: its path, the SHA-256 of its manifest, kind, records
    and licence (``manifest_sha256`` is ``None`` when the source has no manifest).
    """
    root_path = Path(root)
    path = root_path / MANIFEST_NAME if root_path.is_dir() else root_path
    ref: ManifestRef = {"path": str(root), "manifest_sha256": None}
    if path.is_file():
        ref["manifest_sha256"] = sha256_file(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return ref
        if "kind" in data:
            ref["kind"] = data["kind"]
        if "records" in data:
            ref["records"] = data["records"]
        if "licence" in data:
            ref["licence"] = data["licence"]
        if "config_hash" in data:
            ref["config_hash"] = data["config_hash"]
    return ref
