"""``spcl unmask``: restore the source text of masked rows from the vault (the user side of reversibility).

Each masked row names its vault file (``vault_file``) and row key; its record is read from exactly that file
(no other file of the vault folder is read: an unrelated or damaged file blocks nothing), decrypted, and the
whole round trip is proved before anything is written:

1. the row's masked text and id must have the keyed hash the mask job stored (else ``masked_text_changed``:
   the text was edited, even outside its spans, or swapped with another row's, or the row was given another id);
2. every span's token must map to the surface the reassembled text holds at the span's offsets
   (``spans_mismatch``);
3. the reassembled text must have the stored keyed hash of the NFC source (``restore_mismatch``);
4. a source that was not NFC is given back exactly as the mask job read it (stored, encrypted, in the record),
   after checking that it normalizes to the proved NFC text.

A record that cannot be used is refused with its true reason (``missing_vault_file``, ``bad_vault_file``,
``missing_mapping``, ``corrupt_record``, ``ambiguous_mapping``, ``auth_failed``; a row with a redacted
span: ``irreversible_span``; a second row with the same row
key: ``duplicate_row``); a corrupt line of a vault file is reported by file and line and blocks only the record
it held. Records written before the keyed hashes existed (version 1) are restored with check 2 only and counted
as ``unverified`` (the restored ``verified`` column is false), or refused as ``unverified`` with
``require_verified``. Refusals name ids, row keys and reasons, never values. Restored files hold clear text:
they are written readable by the owner only.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.mask import reassemble_text
from spcl.text import normalize

MATCH_COLUMNS = ("id", "row_key")


@dataclass(slots=True)
class UnmaskReport:
    """What one unmask run did: rows restored (of them ``unverified``: from version-1 records; ``originals``:
    non-NFC sources given back byte-exact), ``refused`` as ``(id, row_key, reason)``, corrupt vault lines as
    ``(file, line)``, vault files whose bytes differ from the vault's manifest, and the ``--ids`` selection."""

    restored: int = 0
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    files: int = 0
    unverified: int = 0
    originals: int = 0
    corrupt_records: list[tuple[str, int]] = field(default_factory=list)
    vault_files_changed: list[str] = field(default_factory=list)
    vault_files_unlisted: list[str] = field(default_factory=list)
    not_selected: int = 0
    selected_not_found: int = 0

    def refused_by_reason(self) -> dict[str, int]:
        """Refused rows per reason, sorted by reason."""
        return dict(sorted(Counter(reason for _, _, reason in self.refused).items()))

    def summary(self) -> dict[str, Any]:
        """Counts and file names only (no values): what ``spcl unmask`` prints."""
        return {"files": self.files, "restored": self.restored, "refused": len(self.refused),
                "refused_by_reason": self.refused_by_reason(), "unverified": self.unverified,
                "originals_restored": self.originals, "corrupt_records": len(self.corrupt_records),
                "vault_files_changed": self.vault_files_changed, "vault_files_unlisted": self.vault_files_unlisted,
                "not_selected": self.not_selected, "selected_not_found": self.selected_not_found}


class Refused(ValueError):
    """A row that must not be restored; ``args[0]`` is the reason code."""


def restore_row(row: dict[str, Any], vault: Any, require_verified: bool = False) -> tuple[str, bool, bool]:
    """``(source text, verified, non-NFC original)`` of one masked row; raises :class:`Refused` with a reason
    code when the row cannot be trusted (see the module docstring). ``verified`` is False only for version-1
    records; the third is True when the text is the stored original (the source was not NFC)."""
    from spcl.mask.vault import RecordError

    masked, row_key, writer = row.get("masked_text"), row.get("row_key"), row.get("vault_file")
    if not (isinstance(masked, str) and isinstance(row_key, str) and row_key and isinstance(writer, str)):
        raise Refused("bad_row")
    try:
        rec = vault.record(row_key, writer)
    except RecordError as err:
        raise Refused(err.reason) from None
    if not rec.verifiable and require_verified:
        raise Refused("unverified")
    doc_id = row.get("id")
    context = doc_id if isinstance(doc_id, str) else ""
    if rec.verifiable and not vault.mac_matches(rec.masked_mac, "masked", masked, context):
        raise Refused("masked_text_changed")
    text = reassemble_text(masked, rec.mapping)
    pos_shift = 0
    try:
        for span in sorted(row.get("spans") or [], key=lambda s: s["start"]):
            surface = rec.mapping.get(span["token"])
            if surface is None and span["token"] == "":
                raise Refused("irreversible_span")  # a redacted value: the vault never held it
            if surface is None or text[span["start"]:span["end"]] != surface:
                raise Refused("spans_mismatch")
            pos_shift += len(surface) - len(span["token"])
    except (KeyError, TypeError):
        raise Refused("spans_mismatch") from None
    if len(text) - len(masked) != pos_shift:
        raise Refused("spans_mismatch")
    if rec.verifiable and not vault.mac_matches(rec.source_mac, "source", text):
        raise Refused("restore_mismatch")
    if rec.original is None:
        return text, rec.verifiable, False
    if normalize(rec.original) != text:
        raise Refused("restore_mismatch")
    return rec.original, rec.verifiable, True


def read_selection(path: str | Path) -> frozenset[str]:
    """The values of an ``--ids`` file: one per line (``\\n`` or ``\\r\\n`` ends a line; nothing else is
    stripped, so ids may hold spaces); empty lines are skipped."""
    with open(path, encoding="utf-8", newline="") as fh:
        values = {line.rstrip("\n").removesuffix("\r") for line in fh}
    values.discard("")
    return frozenset(values)


def _check_manifest(vault_dir: Path, writers: set[str], report: UnmaskReport) -> None:
    """Name the used vault files whose bytes differ from the vault's ``manifest.json`` or that it lacks."""
    from spcl.manifest import MANIFEST_NAME, sha256_file

    try:
        listed = json.loads((vault_dir / MANIFEST_NAME).read_text()).get("files", {})
    except (OSError, ValueError, AttributeError):
        return  # no manifest (a run that never finished): nothing to compare with
    for writer in sorted(writers):
        rel = f"{writer}.jsonl"
        path = vault_dir / rel
        if not path.is_file():
            continue
        entry = listed.get(rel) if isinstance(listed, dict) else None
        if not isinstance(entry, dict):
            report.vault_files_unlisted.append(rel)
        elif entry.get("sha256") != sha256_file(path):
            report.vault_files_changed.append(rel)


def unmask_output(masked: str | Path, vault_dir: str | Path, out: str | Path,
                  key: bytes | str | Path | None = None, *, select: Collection[str] | None = None,
                  match: str = "id", require_verified: bool = False) -> UnmaskReport:
    """Restore the rows under ``masked`` (a mask output folder or its ``masked/``) into ``out``/part-*.parquet.

    With ``select``, only rows whose ``match`` column (``id``: every row of that id, ids need not be unique;
    ``row_key``: exactly one row) holds one of the values are restored; the others are counted as not selected.
    """
    from spcl.mask.vault import RecordError, open_vault

    if match not in MATCH_COLUMNS:
        raise ValueError(f"match must be one of {', '.join(MATCH_COLUMNS)}")
    root = Path(masked)
    parts_dir = root / "masked" if (root / "masked").is_dir() else root
    parts = sorted(parts_dir.glob("*.parquet"))
    vault = open_vault(vault_dir, key)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    os.chmod(target, 0o700)
    report = UnmaskReport()
    writers: set[str] = set()
    found: set[str] = set()
    row_keys: set[Any] = set()
    for part in parts:
        table = pq.read_table(part)
        keep: list[int] = []
        texts: list[str] = []
        verified: list[bool] = []
        for i, row in enumerate(table.to_pylist()):
            if select is not None:
                if row.get(match) not in select:
                    report.not_selected += 1
                    continue
                found.add(row[match])
            if isinstance(row.get("vault_file"), str):
                writers.add(row["vault_file"])
            if row.get("row_key") in row_keys:  # the mask job writes each row key once: a copied row
                report.refused.append((str(row.get("id")), str(row.get("row_key")), "duplicate_row"))
                continue
            row_keys.add(row.get("row_key"))
            try:
                text, ok, original = restore_row(row, vault, require_verified)
            except Refused as err:
                report.refused.append((str(row.get("id")), str(row.get("row_key")), str(err)))
                continue
            keep.append(i)
            texts.append(text)
            verified.append(ok)
            report.unverified += not ok
            report.originals += original
        restored = (table.take(pa.array(keep, pa.int64()))
                    .append_column("text", pa.array(texts, pa.string()))
                    .append_column("verified", pa.array(verified, pa.bool_())))
        dest = target / part.name
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            pq.write_table(restored, fh, compression="zstd")
        report.restored += len(keep)
        report.files += 1
    for writer in sorted(writers):
        try:
            report.corrupt_records.extend((f"{writer}.jsonl", n) for n in vault.corrupt_lines(writer))
        except RecordError:
            continue  # a bad or missing file name: its rows were refused with that reason
    _check_manifest(Path(vault_dir), writers, report)
    if select is not None:
        report.selected_not_found = len(set(select) - found)
    return report
