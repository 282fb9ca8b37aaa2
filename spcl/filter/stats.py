"""Run statistics computed from one place: partial counts per Arrow batch, merged into
``stats.json``.

The same ``batch_stats`` runs over the written output in both engines (pyarrow in plain Python, a
``mapInArrow`` in Spark), so the reported counts are what was actually written. Stats hold counts
only — never text or values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NotRequired, TypedDict

import pyarrow as pa

STATS_COLUMNS: tuple[str, ...] = ("decision", "lang", "hits", "reasons", "quarantine_reason")


class RecordReconciliation(TypedDict):
    """Input records against the records written (``ok`` when equal)."""

    input_records: int
    output_records: int
    ok: bool


class StatsCounts(TypedDict):
    """The counts of ``stats.json`` (:func:`summarize`)."""

    counts: dict[str, int]
    reconciliation: RecordReconciliation
    by_lang: dict[str, dict[str, int]]
    pii_hits_by_type: dict[str, int]
    documents_by_pii_type: dict[str, int]
    flag_reasons: dict[str, int]
    quarantine_reasons: dict[str, int]
    non_string_ids: int
    derived_ids: int


class StatsJson(StatsCounts):
    """``stats.json`` of a filter output: the counts, then the run's facts
    (``spcl.filter.results.write_stats``)."""

    spcl_version: str
    config_hash: str
    model: str | None
    model_version: str | None
    engine: str
    master: str | None
    input_files: list[str]
    skipped_files: list[str]
    skipped_file_reasons: dict[str, int]
    duplicate_input_files: int
    duplicate_ids: int
    manifest: bool
    elapsed_seconds: float
    docs_per_second: float | None
    stage_seconds: dict[str, float]
    startup_seconds: NotRequired[dict[str, float]]
    task_seconds: NotRequired[float]  # set last, after the optional start-up seconds


def batch_stats(batch: pa.RecordBatch | pa.Table) -> dict[str, Counter[str]]:
    """Counters over one batch of output rows (needs the columns in ``STATS_COLUMNS``)."""
    out: dict[str, Counter[str]] = {
        k: Counter() for k in ("decision", "lang", "hit_type", "doc_type", "reason", "quarantine")
    }
    decisions = batch.column("decision").to_pylist()
    langs = batch.column("lang").to_pylist()
    hits = batch.column("hits").to_pylist()
    reasons = batch.column("reasons").to_pylist()
    qreasons = batch.column("quarantine_reason").to_pylist()
    for decision, lang, doc_hits, doc_reasons, qreason in zip(
        decisions, langs, hits, reasons, qreasons, strict=True
    ):
        out["decision"][decision] += 1
        if decision == "quarantine":
            out["quarantine"][(qreason or "unknown").split(":", 1)[0]] += 1
            continue
        out["lang"][f"{decision}/{lang}"] += 1
        types = [h["type"] for h in doc_hits or []]
        out["hit_type"].update(types)
        out["doc_type"].update(set(types))
        out["reason"].update(doc_reasons or [])
    return out


def merge_stats(
    parts: Iterable[dict[str, Counter[str]] | dict[str, dict[str, int]]],
) -> dict[str, Counter[str]]:
    """Sum partial counters key by key."""
    total: dict[str, Counter[str]] = {}
    for part in parts:
        for key, counter in part.items():
            total.setdefault(key, Counter()).update(counter)
    return total


def summarize(counters: dict[str, Counter[str]], input_records: int) -> StatsCounts:
    """The counts of ``stats.json``: per decision, the reconciliation, per language, type and
    reason."""
    decision = counters.get("decision", Counter())
    counts = {d: int(decision.get(d, 0)) for d in ("clean", "flagged", "quarantine")}
    output_records = sum(counts.values())
    by_lang: dict[str, dict[str, int]] = {}
    for key, n in sorted(counters.get("lang", Counter()).items()):
        dec, lang = key.split("/", 1)
        by_lang.setdefault(lang, {})[dec] = int(n)
    return {
        "counts": counts,
        "reconciliation": {
            "input_records": input_records,
            "output_records": output_records,
            "ok": input_records == output_records,
        },
        "by_lang": by_lang,
        "pii_hits_by_type": dict(sorted(counters.get("hit_type", Counter()).items())),
        "documents_by_pii_type": dict(sorted(counters.get("doc_type", Counter()).items())),
        "flag_reasons": dict(sorted(counters.get("reason", Counter()).items())),
        "quarantine_reasons": dict(sorted(counters.get("quarantine", Counter()).items())),
        "non_string_ids": int(counters.get("id_note", Counter()).get("non_string", 0)),
        "derived_ids": int(counters.get("id_note", Counter()).get("derived", 0)),
    }
