"""Dataset manifests: SHA-256 and size of every file of a dataset folder, with provenance.

Every dataset spcl writes gets a ``manifest.json`` beside its files, so that a later reader can check
that nothing changed (``verify_manifest``) and cite exactly what it used.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spcl import __version__

MANIFEST_NAME = "manifest.json"
_CHUNK = 1 << 20


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _dataset_files(root: Path) -> list[Path]:
    files = []
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel == MANIFEST_NAME or name.startswith(".") or name == "_SUCCESS":
                continue
            files.append(path)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def write_manifest(root: str | Path, **provenance: Any) -> dict[str, Any]:
    """Hash every file under ``root`` and write ``root/manifest.json``; returns the manifest.

    ``provenance`` is stored as given (e.g. ``kind``, ``config_hash``, ``records``, ``licence``,
    ``sources``). Hidden files (Spark's ``.crc``) and ``_SUCCESS`` markers are left out.
    """
    root_path = Path(root)
    entries = {
        p.relative_to(root_path).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
        for p in _dataset_files(root_path)
    }
    manifest: dict[str, Any] = {
        "spcl_version": __version__,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        **provenance,
        "files": entries,
    }
    (root_path / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


@dataclass
class VerifyReport:
    """What ``verify_manifest`` found: files whose bytes changed, files missing, files not listed."""

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
    listed: dict[str, dict[str, Any]] = manifest.get("files", {})
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
