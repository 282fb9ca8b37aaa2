"""``spcl unmask``: restore the source text of masked rows from the vault (the user side of
reversibility).

Each masked row names its vault file (``vault_file``) and row key; its record is read from exactly
that file (no other file of the vault folder is read: an unrelated or damaged file blocks nothing),
decrypted, and the whole round trip is proved before anything is written:

1. the row's masked text and id must have the keyed hash the mask job stored (else
   ``masked_text_changed``: the text was edited, even outside its spans, or swapped with another
   row's, or the row was given another id);
2. every span's token must map to the surface the reassembled text holds at the span's offsets
   (``spans_mismatch``);
3. the reassembled text must have the stored keyed hash of the NFC source (``restore_mismatch``);
4. a source that was not NFC is given back exactly as the mask job read it (stored, encrypted, in
   the record), after checking that it normalizes to the proved NFC text.

A masked row is also checked against its output's done-marker when the output has one
(``_done/<key>.json`` beside ``masked/``): its vault file must be one the runs recorded for that
input file wrote (``other_run`` otherwise: a row of an earlier run put back into a later run's
output, with its earlier vault file).

A masked row whose id held a value shows the id's keyed hash (``spcl.mask_stage.ids``); its record
holds the id itself, which the restored row gets back (``id_mismatch`` when the two do not belong
together), and ``select`` finds such rows by the id itself.

A record that cannot be used is refused with its true reason (``missing_vault_file``,
``bad_vault_file``, ``missing_mapping``, ``corrupt_record``, ``ambiguous_mapping``, ``auth_failed``;
a row with a redacted span: ``irreversible_span``; a second row with the same row key:
``duplicate_row``); a corrupt line of a vault file is reported by file and line and blocks only the
record it held. A record is bound to the vault file (the run) it was written to: one copied in from
an earlier run's file fails as ``auth_failed``. Records of the earlier formats — version 1 (no keyed
hashes: check 2 only) and version 2 (hashes checked, but not bound to a run, so a replay cannot be
ruled out) — are restored and counted as ``unverified`` (the restored ``verified`` column is false),
or refused as ``unverified`` with ``require_verified``. Refusals name ids, row keys and reasons,
never values.

Restored files hold clear text, so where they go is checked first (:func:`check_unmask_out`): never
the masked input or the vault, nor any folder inside or around a mask, generalize or filter output
or a vault (a released folder is never overwritten with clear text). The output folder is created by
this run with mode 0700 (an existing folder is used only when it is empty or an earlier unmask
output, and its mode is never changed), and every file in it is written 0600 under a temporary name
and moved into place. Besides the restored ``part-*.parquet`` files, ``_refused.jsonl`` lists every
refused row (``id``, ``row_key``, ``reason``, ``part``: the masked part file it came from) and
``_unmask.json`` holds the run's summary (the counts per reason), so every selected row is accounted
for.
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

from spcl.errors import RunFailed
from spcl.executor.errors import JobError
from spcl.io.inputs import UnsafeOutput, check_output
from spcl.io.outputs import is_filter_output
from spcl.manifest import MANIFEST_NAME, sha256_file
from spcl.mask import reassemble_text
from spcl.mask.vault import RecordError, open_vault
from spcl.mask_stage.state import read_marker
from spcl.text import normalize

MATCH_COLUMNS = ("id", "row_key")
SUMMARY_NAME = "_unmask.json"
REFUSED_NAME = "_refused.jsonl"


@dataclass(slots=True)
class UnmaskReport:
    """What one unmask run did: rows restored (of them ``unverified``: from records of an earlier
    format; ``originals``: non-NFC sources given back byte-exact), ``refused`` as ``(id, row_key,
    reason)``, corrupt vault lines as ``(file, line)``, vault files whose bytes differ from the
    vault's manifest, and the ``--ids`` selection."""

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

    def summary(self) -> dict[str, int | list[str] | dict[str, int]]:
        """Counts and file names only (no values): what ``spcl unmask`` prints."""
        return {
            "files": self.files,
            "restored": self.restored,
            "refused": len(self.refused),
            "refused_by_reason": self.refused_by_reason(),
            "unverified": self.unverified,
            "originals_restored": self.originals,
            "corrupt_records": len(self.corrupt_records),
            "vault_files_changed": self.vault_files_changed,
            "vault_files_unlisted": self.vault_files_unlisted,
            "not_selected": self.not_selected,
            "selected_not_found": self.selected_not_found,
        }


def _job_folder(folder: Path) -> str | None:
    """What spcl job folder ``folder`` is (``"vault"``, ``"mask output"``, ...), or ``None``."""
    try:
        if (folder / "vault.json").is_file():
            return "vault"
        if is_filter_output(folder):
            return "filter output"
        try:
            kind = json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("kind")
        except (OSError, ValueError, AttributeError):
            kind = None
        if kind in ("mask-output", "mask-vault"):
            return "vault" if kind == "mask-vault" else "mask output"
        for sub, what in (("masked", "mask output"), ("generalized", "generalize output")):
            if (folder / sub).is_dir() and (folder / "_done").is_dir():
                return what
        if folder.name in ("masked", "generalized") and (folder.parent / "_done").is_dir():
            return f"{folder.name} folder of a job output"
    except OSError:
        return None
    return None


def check_unmask_out(masked: str | Path, vault_dir: str | Path, out: str | Path) -> None:
    """Raise :class:`spcl.io.inputs.UnsafeOutput` when ``out`` is, contains or lies inside the
    masked input or the vault, or is, contains or lies inside any vault, mask, generalize or filter
    output folder; or when it is an existing folder that is neither empty nor an earlier unmask
    output (a file is refused too)."""
    try:
        check_output([str(masked), str(vault_dir)], str(out))
    except UnsafeOutput as err:
        raise UnsafeOutput(
            str(err)
            .replace("input", "the masked input or vault", 1)
            .replace("every input", "the masked input and the vault")
        ) from None
    target = Path(os.path.realpath(out))
    for folder in (target, *target.parents):
        what = _job_folder(folder)
        if what:
            relation = "is" if folder == target else "lies inside"
            raise UnsafeOutput(
                f"unmask output {out} {relation} a {what} ({folder}): refusing to write clear text "
                "there; choose a new folder outside every job output and vault"
            )
    if target.exists() and not target.is_dir():
        raise UnsafeOutput(f"unmask output {out} is an existing file, not a folder")
    if not target.is_dir():
        return
    for dirpath, dirnames, _ in os.walk(target):
        for name in dirnames:
            what = _job_folder(Path(dirpath) / name)
            if what:
                raise UnsafeOutput(
                    f"unmask output {out} contains a {what} ({Path(dirpath) / name}): refusing to "
                    "write clear text there; choose a new folder"
                )
    entries = {p.name for p in target.iterdir()}
    if entries and SUMMARY_NAME not in entries:
        raise UnsafeOutput(
            f"unmask output {out} exists and is not empty (and is no earlier unmask output): "
            "refusing to write there; choose a new folder"
        )


def _prepare_out(target: Path) -> None:
    """Create ``target`` (mode 0700; its missing parents as usual) when missing; an earlier unmask
    output is emptied of the files unmask wrote. An existing folder's mode is never changed."""
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(target, 0o700)
        os.chmod(target, 0o700)  # this run created it: owner only, whatever the umask
        return
    for path in target.iterdir():
        if path.name in (SUMMARY_NAME, REFUSED_NAME) or (
            path.name.startswith("part-") and path.suffix == ".parquet"
        ):
            path.unlink()


def _write_private(dest: Path, write: Any) -> None:
    """Write ``dest`` with mode 0600 under a temporary name beside it (``write(fh)``), then move
    it into place."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _runs_of(
    output: Path, part: Path, cache: dict[str, tuple[str, list[str]] | None]
) -> tuple[str, list[str]] | None:
    """``(key, runs)`` the done-marker of ``part``'s input file recorded, or ``None`` when the
    output has no readable marker for it (a ``masked/`` folder copied alone: the check is
    skipped)."""
    # ``part-<key>.parquet``, or ``<key>.parquet`` for a key that starts with ``part-``
    # (``part_path``)
    keys = [part.stem.removeprefix("part-"), part.stem]
    if part.stem not in cache:
        cache[part.stem] = None
        for key in keys if (output / "_done").is_dir() else []:
            try:
                marker = read_marker(output, key)
            except JobError:
                marker = None
            if marker is not None:
                cache[part.stem] = (key, list(marker.runs))
                break
    return cache[part.stem]


def _from_recorded_run(vault_file: Any, recorded: tuple[str, list[str]] | None) -> bool:
    """Whether ``vault_file`` is a file one of the ``recorded`` runs of the input file wrote
    (``True`` when nothing is recorded)."""
    if recorded is None:
        return True
    key, runs = recorded
    return isinstance(vault_file, str) and any(
        vault_file.startswith(f"mask-{key}-{run}-") for run in runs if run
    )


class Refused(RunFailed, ValueError):
    """A row that must not be restored; ``args[0]`` is the reason code."""


def restore_row(
    row: dict[str, Any], vault: Any, require_verified: bool = False
) -> tuple[str, bool, bool]:
    """``(source text, verified, non-NFC original)`` of one masked row (:func:`restore_row_id`
    without the id)."""
    text, verified, original, _ = restore_row_id(row, vault, require_verified)
    return text, verified, original


def restore_row_id(
    row: dict[str, Any], vault: Any, require_verified: bool = False
) -> tuple[str, bool, bool, str | None]:
    """``(source text, verified, non-NFC original)`` of one masked row; raises :class:`Refused` with
    a reason code when the row cannot be trusted (see the module docstring). ``verified`` is False
    for records of the earlier formats (version 1: no hashes; version 2: not bound to its run); the
    third is True when the text is the stored original (the source was not NFC); the fourth is the
    row's own id when the masked row shows its keyed hash (an id that held a value), else
    ``None``."""
    masked, row_key, writer = row.get("masked_text"), row.get("row_key"), row.get("vault_file")
    if not (
        isinstance(masked, str) and isinstance(row_key, str) and row_key and isinstance(writer, str)
    ):
        raise Refused("bad_row")
    try:
        rec = vault.record(row_key, writer)
    except RecordError as err:
        raise Refused(err.reason) from None
    if not rec.verifiable and require_verified:
        raise Refused("unverified")
    doc_id = row.get("id")
    context = doc_id if isinstance(doc_id, str) else ""
    # the hashes are checked whenever the record holds them; only a record bound to its run counts
    # as verified
    if rec.has_hashes and not vault.mac_matches(rec.masked_mac, "masked", masked, context):
        raise Refused("masked_text_changed")
    if rec.source_id is not None and vault.screened_id(rec.source_id) != context:
        raise Refused("id_mismatch")
    text = reassemble_text(masked, rec.mapping)
    pos_shift = 0
    try:
        for span in sorted(row.get("spans") or [], key=lambda s: s["start"]):
            surface = rec.mapping.get(span["token"])
            if surface is None and span["token"] == "":
                raise Refused("irreversible_span")  # a redacted value: the vault never held it
            if surface is None or text[span["start"] : span["end"]] != surface:
                raise Refused("spans_mismatch")
            pos_shift += len(surface) - len(span["token"])
    except (KeyError, TypeError):
        raise Refused("spans_mismatch") from None
    if len(text) - len(masked) != pos_shift:
        raise Refused("spans_mismatch")
    if rec.has_hashes and not vault.mac_matches(rec.source_mac, "source", text):
        raise Refused("restore_mismatch")
    if rec.original is None:
        return text, rec.verifiable, False, rec.source_id
    if normalize(rec.original) != text:
        raise Refused("restore_mismatch")
    return rec.original, rec.verifiable, True, rec.source_id


def read_selection(path: str | Path) -> frozenset[str]:
    """The values of an ``--ids`` file: one per line (``\\n`` or ``\\r\\n`` ends a line; nothing
    else is stripped, so ids may hold spaces); empty lines are skipped."""
    with open(path, encoding="utf-8", newline="") as fh:
        values = {line.rstrip("\n").removesuffix("\r") for line in fh}
    values.discard("")
    return frozenset(values)


def _check_manifest(vault_dir: Path, writers: set[str], report: UnmaskReport) -> None:
    """Name the used vault files whose bytes differ from the vault's ``manifest.json`` or that it
    lacks."""
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


def unmask_output(
    masked: str | Path,
    vault_dir: str | Path,
    out: str | Path,
    key: bytes | str | Path | None = None,
    *,
    select: Collection[str] | None = None,
    match: str = "id",
    require_verified: bool = False,
) -> UnmaskReport:
    """Restore the rows under ``masked`` (a mask output folder or its ``masked/``) into
    ``out``/part-*.parquet.

    With ``select``, only rows whose ``match`` column (``id``: every row of that id, ids need not be
    unique; ``row_key``: exactly one row) holds one of the values are restored; the others are
    counted as not selected.
    """
    if match not in MATCH_COLUMNS:
        raise ValueError(f"match must be one of {', '.join(MATCH_COLUMNS)}")
    root = Path(masked)
    parts_dir = root / "masked" if (root / "masked").is_dir() else root
    parts = sorted(parts_dir.glob("*.parquet"))
    check_unmask_out(masked, vault_dir, out)
    vault = open_vault(vault_dir, key)
    target = Path(out)
    _prepare_out(target)
    report = UnmaskReport()
    refused_parts: list[str] = []
    writers: set[str] = set()
    found: set[str] = set()
    row_keys: set[Any] = set()
    lookup: dict[str, str] = {}
    # a listed id also selects the rows that show its keyed hash (an id with a value)
    if select is not None:
        lookup = ({vault.screened_id(v): v for v in select} if match == "id" else {}) | {
            v: v for v in select
        }
    markers: dict[str, tuple[str, list[str]] | None] = {}
    for part in parts:
        recorded = _runs_of(parts_dir.parent, part, markers)
        table = pq.read_table(part)
        keep: list[int] = []
        texts: list[str] = []
        verified: list[bool] = []
        ids: list[Any] = []
        for i, row in enumerate(table.to_pylist()):
            if select is not None:
                if row.get(match) not in lookup:
                    report.not_selected += 1
                    continue
                found.add(lookup[row[match]])
            if isinstance(row.get("vault_file"), str):
                writers.add(row["vault_file"])
            # the mask job writes each row key once: a copied row
            if row.get("row_key") in row_keys:
                report.refused.append(
                    (str(row.get("id")), str(row.get("row_key")), "duplicate_row")
                )
                refused_parts.append(part.name)
                continue
            row_keys.add(row.get("row_key"))
            try:
                text, ok, original, source_id = restore_row_id(row, vault, require_verified)
                if not _from_recorded_run(row.get("vault_file"), recorded):
                    raise Refused("other_run")
            except Refused as err:
                report.refused.append((str(row.get("id")), str(row.get("row_key")), str(err)))
                refused_parts.append(part.name)
                continue
            keep.append(i)
            ids.append(source_id if source_id is not None else row.get("id"))
            texts.append(text)
            verified.append(ok)
            report.unverified += not ok
            report.originals += original
        restored = table.take(pa.array(keep, pa.int64()))
        # the row's own id back where the masked row shows its keyed hash
        if "id" in restored.schema.names:
            at = restored.schema.get_field_index("id")
            restored = restored.set_column(
                at, restored.schema.field(at), pa.array(ids, restored.schema.field(at).type)
            )
        restored = restored.append_column("text", pa.array(texts, pa.string())).append_column(
            "verified", pa.array(verified, pa.bool_())
        )
        _write_private(
            target / part.name, lambda fh, t=restored: pq.write_table(t, fh, compression="zstd")
        )
        report.restored += len(keep)
        report.files += 1
    for writer in sorted(writers):
        try:
            report.corrupt_records.extend(
                (f"{writer}.jsonl", n) for n in vault.corrupt_lines(writer)
            )
        except RecordError:
            continue  # a bad or missing file name: its rows were refused with that reason
    _check_manifest(Path(vault_dir), writers, report)
    if select is not None:
        report.selected_not_found = len(set(select) - found)
    lines = "".join(
        json.dumps({"id": i, "row_key": k, "reason": r, "part": p}, ensure_ascii=False) + "\n"
        for (i, k, r), p in zip(report.refused, refused_parts, strict=True)
    )
    _write_private(target / REFUSED_NAME, lambda fh: fh.write(lines.encode("utf-8")))
    _write_private(
        target / SUMMARY_NAME,
        lambda fh: fh.write((json.dumps(report.summary(), indent=1) + "\n").encode("utf-8")),
    )
    return report
