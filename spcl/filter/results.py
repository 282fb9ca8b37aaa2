"""What a filter run writes at its end: the rows per decision read back from the Parquet files on
storage, ``stats.json`` and ``manifest.json``, and the refusal of a run that does not hold (the
reconciliation fails, or every record was quarantined)."""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter

import pyarrow.fs as pafs

from spcl import __version__
from spcl.config import Settings
from spcl.filter.batch import model_identity
from spcl.filter.driver import FilterJob, JobError
from spcl.filter.plan import FilterPlan
from spcl.filter.stats import StatsJson, summarize
from spcl.filter.task import TaskReport
from spcl.io.storage import filesystem, join, write_text
from spcl.io.writers import footer_rows
from spcl.manifest import MANIFEST_NAME, FileEntry, manifest_document

__all__ = ["write_stats", "written_counts"]


def output_parquet_files(output: str) -> list[str]:
    """Every visible ``decision=*/*.parquet`` file now under ``output`` (relative paths)."""
    fs, base = filesystem(output)
    found = []
    for info in fs.get_file_info(pafs.FileSelector(base, recursive=True)):
        rel = info.path[len(base.rstrip("/")) + 1 :]
        parts = rel.split("/")
        if (
            info.type == pafs.FileType.File
            and parts[0].startswith("decision=")
            and rel.endswith(".parquet")
            and not any(p.startswith((".", "_")) for p in parts)
        ):
            found.append(rel)
    return sorted(found)


def written_counts(
    output: str, reports: list[TaskReport]
) -> tuple[dict[str, int], dict[str, FileEntry]]:
    """Rows per decision in the footers of the Parquet files actually on storage (each file once,
    stray files included), and the manifest entries of the files the tasks wrote."""
    entries: dict[str, FileEntry] = {}
    for report in reports:
        for f in report.files:
            entries[f.path] = {"sha256": f.sha256, "bytes": f.bytes, "records": f.rows}
    counts: Counter[str] = Counter()
    for rel in output_parquet_files(output):
        counts[rel.split("/", 1)[0].removeprefix("decision=")] += footer_rows(output, rel)
    return dict(counts), dict(sorted(entries.items()))


def write_stats(
    job: FilterJob,
    fp: FilterPlan,
    reports: list[TaskReport],
    *,
    engine: str,
    master: str | None,
    counters: dict[str, Counter[str]],
    input_records: int,
    duplicate_ids: int,
    timings: dict[str, float],
    startup: dict[str, float],
    entries: dict[str, FileEntry],
) -> StatsJson:
    """Summarize the tasks' ``reports`` and what ``finish`` counted into ``stats.json`` (and
    ``manifest.json`` with the output files' ``entries``), then raise when the run does not hold."""
    settings = job.settings
    elapsed = time.time() - fp.started
    identity = (
        model_identity(settings.screen.model)
        if settings.screen.enabled
        else {"model": None, "model_version": None}
    )
    stats: StatsJson = {
        **summarize(counters, input_records),
        "spcl_version": __version__,
        "config_hash": settings.config_hash(),
        "model": identity["model"],
        "model_version": identity["model_version"],
        "engine": engine,
        "master": master,
        "input_files": fp.files,
        "skipped_files": sorted(fp.skipped),
        "skipped_file_reasons": dict(sorted(Counter(fp.skipped.values()).items())),
        "duplicate_input_files": fp.listing.duplicates,
        "duplicate_ids": duplicate_ids,
        "manifest": settings.output.manifest,
        "elapsed_seconds": round(elapsed, 3),
        "docs_per_second": round(input_records / elapsed, 1) if elapsed > 0 else None,
        "stage_seconds": timings,
    }
    if startup:
        stats["startup_seconds"] = startup
    stats["task_seconds"] = round(sum(r.seconds for r in reports), 3)
    stats_bytes = (json.dumps(stats, indent=2, ensure_ascii=False) + "\n").encode()
    write_text(join(job.output, "stats.json"), stats_bytes.decode())
    if settings.output.manifest:
        entries["stats.json"] = {
            "sha256": hashlib.sha256(stats_bytes).hexdigest(),
            "bytes": len(stats_bytes),
        }
        manifest = manifest_document(
            entries,
            kind="spcl-filter-output",
            config_hash=stats["config_hash"],
            records=stats["counts"],
            input_files=fp.files,
        )
        write_text(
            join(job.output, MANIFEST_NAME),
            json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
        )
    if not stats["reconciliation"]["ok"]:
        rec = stats["reconciliation"]
        raise JobError(
            f"reconciliation failed: {rec['input_records']} input records but "
            f"{rec['output_records']} output records (see stats.json)"
        )
    if input_records and stats["counts"]["quarantine"] == input_records:
        raise JobError(all_quarantined_hint(stats, settings))
    return stats


def all_quarantined_hint(stats: StatsJson, settings: Settings) -> str:
    """The message for a run that quarantined every record: the top reasons and what to check."""
    reasons = sorted(stats["quarantine_reasons"].items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{r}: {n}" for r, n in reasons[:3])
    hint = ""
    if stats["quarantine_reasons"].get("missing_text_field"):
        hint = (
            f"; the text field is input.text_field={settings.input.text_field!r} — set the field"
            " your records use in the config"
        )
    return (
        f"every one of {stats['reconciliation']['input_records']} records was quarantined"
        f" ({top}){hint}"
    )
