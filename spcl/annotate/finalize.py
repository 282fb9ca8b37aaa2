"""The end of an annotate run: merge the per-file parts, balance, and write the outputs, report and
manifests.

Runs on one machine (the driver) after every input file is committed, and again on every rerun, so
the final files always reflect all committed parts and the current ``--positive-share`` /
``--seed``. Labelled rows are held in memory to balance them (an annotation sample is thousands to a
few hundred thousand texts).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from spcl.annotate.agreement import TeacherVote
from spcl.annotate.balance import Balance, balance
from spcl.annotate.config import (
    OUTPUT_FILES,
    WORK,
    AnnotateConfig,
    jsonl_text,
    load_done,
    merge_counts,
    read_jsonl,
    write_private_atomic,
)
from spcl.annotate.prompt import PROMPT_VERSION
from spcl.annotate.summary import (
    PairAgreement,
    TeacherRates,
    pair_agreement,
    plot_agreement,
    teacher_report,
)
from spcl.annotate.teachers import TeacherJson
from spcl.executor.state import DoneMarker
from spcl.manifest import manifest_ref, record_counts, write_manifest
from spcl.screen import CATEGORIES

log = logging.getLogger("spcl.annotate")
REPORT = "report.json"
CHART = "agreement.png"


class AnnotateRun(TypedDict):
    """The run that finalized (``report.json``'s ``run``): engine, files processed and skipped,
    records, seconds."""

    engine: str
    files_processed: int
    files_skipped: int
    records: int
    elapsed_seconds: float


class AnnotateThresholds(TypedDict):
    """The settings that decide what is labelled, balanced and dropped."""

    min_confidence: float
    candidates: str
    positive_share: float | None
    max_chars: int


class AnnotateReconciliation(TypedDict):
    """``input_records == labelled + rejected + dropped + pending``."""

    input_records: int
    labelled: int
    rejected: int
    dropped: int
    pending: int
    ok: bool


class AnnotateReport(TypedDict):
    """``report.json`` of an annotate run (:func:`finalize`): counts, rates and names only, no
    text."""

    prompt_version: str
    teachers: list[TeacherJson]
    verifier: TeacherJson | None
    thresholds: AnnotateThresholds
    seed: int
    parts_hash: str
    counts: dict[str, int]
    candidates_by_lang: dict[str, int]
    rejected_reasons: dict[str, int]
    dropped_reasons: dict[str, int]
    pending_reasons: dict[str, int]
    labels: dict[str, int]
    categories: dict[str, int]
    balance: dict[str, object]
    reconciliation: AnnotateReconciliation
    kappa: dict[str, PairAgreement]
    teacher_stats: dict[str, TeacherRates]
    verifier_stats: TeacherRates | None
    seconds_per_candidate: float
    run: AnnotateRun


@dataclass(frozen=True)
class _Merged:
    """Every committed file merged: the summed counts, the part rows (``{part: rows}``), and the
    labelled rows after balancing (``kept``; the balanced-out ones joined ``dropped``)."""

    stats: dict[str, Any]
    parts: dict[str, list[dict[str, Any]]]
    kept: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    bal: Balance


def finalize(cfg: AnnotateConfig, run: AnnotateRun) -> AnnotateReport:
    """Write labelled / rejected / dropped, ``report.json``, ``agreement.png`` and both manifests;
    returns the report. ``report["reconciliation"]["ok"]`` is False when some input record is in no
    output; ``report["counts"]["pending"]`` counts the records left for a rerun (transient backend
    failures)."""
    out, work = Path(cfg.output), Path(cfg.output) / WORK
    work.mkdir(parents=True, exist_ok=True)
    done = load_done(out)
    stats, parts = _merge_parts(work, done)
    kept, dropped, bal = _balance(cfg, parts["labelled"], parts["dropped"])
    merged = _Merged(stats, parts, kept, dropped, bal)
    for name, rows in zip(
        OUTPUT_FILES, (kept, parts["rejected"], dropped, parts["pending"]), strict=True
    ):
        write_private_atomic(out / name, jsonl_text(rows))
    names = [t.name for t in cfg.teachers]
    votes = [
        [TeacherVote.from_json(v) for v in r["votes"]]
        for r in parts["labelled"] + parts["rejected"]
    ]
    pairs = pair_agreement(votes, names)
    report = _report(cfg, merged, pairs, run)
    write_private_atomic(out / REPORT, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    plot_agreement(pairs, out / CHART)
    _write_manifests(cfg, len(done), report, len(kept), pairs)
    return report


def _merge_parts(
    work: Path, done: dict[str, DoneMarker]
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The summed counts of every committed file and its part rows, ``{part: rows}``, in key
    order."""
    stats: dict[str, Any] = {}
    parts: dict[str, list[dict[str, Any]]] = {
        "labelled": [],
        "rejected": [],
        "dropped": [],
        "pending": [],
    }
    for key in sorted(done):
        merge_counts(stats, done[key]["stats"])
        for part, rows in parts.items():
            path = work / "parts" / f"{key}.{part}.jsonl"
            # outputs made before pending records existed have none
            if part != "pending" or path.exists():
                rows.extend(read_jsonl(path))
    return stats, parts


def _balance(
    cfg: AnnotateConfig, labelled: list[dict[str, Any]], dropped: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Balance]:
    """``(kept, dropped, balance)``: the labelled rows balanced by hashed id; the balanced-out ones
    join ``dropped`` with reason ``balanced_out`` (and their label), after the rows already
    there."""
    bal = balance([(r["id"], r["label"]) for r in labelled], cfg.positive_share, cfg.seed)
    kept = [r for i, r in enumerate(labelled) if i not in bal.dropped]
    if bal.dropped and bal.none_kept == 0:
        log.warning(
            "--positive-share %s cannot be reached: every NONE text was balanced out",
            cfg.positive_share,
        )
    dropped = dropped + [
        {
            "id": labelled[i]["id"],
            "reason": "balanced_out",
            "label": labelled[i]["label"],
            "source_file": labelled[i]["source_file"],
            "position": labelled[i]["position"],
        }
        for i in sorted(bal.dropped)
    ]
    return kept, dropped, bal


def _counts(cfg: AnnotateConfig, merged: _Merged) -> dict[str, int]:
    """The report's ``counts``: every step from input records to labelled, with the verifier's
    rejections."""
    stats, parts, kept, dropped, bal = (
        merged.stats,
        merged.parts,
        merged.kept,
        merged.dropped,
        merged.bal,
    )
    labelled, rejected = parts["labelled"], parts["rejected"]
    dropped_reasons = _dropped_reasons(stats, bal)
    verifier_rejected = sum(
        v
        for k, v in stats.get("rejected_reasons", {}).items()
        if cfg.verifier and (k == "verifier_disagreement" or k.endswith(f":{cfg.verifier.name}"))
    )
    return {
        "files": stats.get("files", 0),
        "input_records": stats.get("input_records", 0),
        "unreadable": sum(v for k, v in dropped_reasons.items() if k.startswith("unreadable:")),
        "too_long": dropped_reasons.get("too_long", 0),
        "not_candidates": dropped_reasons.get("no_person_mention", 0),
        "candidates": stats.get("candidates", 0),
        "rejected": len(rejected),
        "agreed_by_teachers": len(labelled) + verifier_rejected,
        "verifier_rejected": verifier_rejected,
        "labelled_before_balance": len(labelled),
        "balanced_out": len(bal.dropped),
        "labelled": len(kept),
        "dropped": len(dropped),
        "pending": len(parts["pending"]),
    }


def _dropped_reasons(stats: dict[str, Any], bal: Balance) -> dict[str, int]:
    """Dropped records per reason: the files' reasons plus ``balanced_out``."""
    reasons = dict(stats.get("dropped_reasons", {}))
    if bal.dropped:
        reasons["balanced_out"] = len(bal.dropped)
    return reasons


def _report(
    cfg: AnnotateConfig, merged: _Merged, pairs: dict[str, PairAgreement], run: AnnotateRun
) -> AnnotateReport:
    """``report.json``: settings, counts, reasons, labels and categories kept, reconciliation,
    kappa, teacher statistics and the run (counts, names and rates only: no text)."""
    stats, parts, kept, dropped, bal = (
        merged.stats,
        merged.parts,
        merged.kept,
        merged.dropped,
        merged.bal,
    )
    names = [t.name for t in cfg.teachers]
    n_in = stats.get("input_records", 0)
    n_rejected, n_pending = len(parts["rejected"]), len(parts["pending"])
    return {
        "prompt_version": PROMPT_VERSION,
        "teachers": [t.to_json() for t in cfg.teachers],
        "verifier": cfg.verifier.to_json() if cfg.verifier else None,
        "thresholds": {
            "min_confidence": cfg.min_confidence,
            "candidates": cfg.candidates,
            "positive_share": cfg.positive_share,
            "max_chars": cfg.max_chars,
        },
        "seed": cfg.seed,
        "parts_hash": cfg.parts_hash(),
        "counts": _counts(cfg, merged),
        "candidates_by_lang": dict(sorted(stats.get("candidates_by_lang", {}).items())),
        "rejected_reasons": dict(sorted(stats.get("rejected_reasons", {}).items())),
        "dropped_reasons": dict(sorted(_dropped_reasons(stats, bal).items())),
        "pending_reasons": dict(sorted(stats.get("pending_reasons", {}).items())),
        "labels": {
            lab: sum(r["label"] == lab for r in kept) for lab in ("SCPI", "RELATED", "NONE")
        },
        "categories": {c: sum(c in r["categories"] for r in kept) for c in CATEGORIES},
        "balance": bal.to_json(),
        "reconciliation": {
            "input_records": n_in,
            "labelled": len(kept),
            "rejected": n_rejected,
            "dropped": len(dropped),
            "pending": n_pending,
            "ok": n_in == len(kept) + n_rejected + len(dropped) + n_pending,
        },
        "kappa": pairs,
        "teacher_stats": {n: teacher_report(stats.get("teachers", {}).get(n, {})) for n in names},
        "verifier_stats": (
            teacher_report(stats.get("verifier", {}).get(cfg.verifier.name, {}))
            if cfg.verifier
            else None
        ),
        "seconds_per_candidate": round(
            stats.get("seconds", 0.0) / max(1, stats.get("candidates", 0)), 6
        ),
        "run": run,
    }


def _write_manifests(
    cfg: AnnotateConfig,
    files_done: int,
    report: AnnotateReport,
    n_kept: int,
    pairs: dict[str, PairAgreement],
) -> None:
    """The checkpoints' manifest and the annotated set's (readable by the owner only)."""

    out = Path(cfg.output)
    write_manifest(
        out / WORK, kind="annotate-checkpoints", files_done=files_done, parts_hash=cfg.parts_hash()
    )
    write_manifest(
        out,
        kind="annotated-set",
        records=n_kept,
        record_counts=record_counts(out),
        prompt_version=PROMPT_VERSION,
        teachers=report["teachers"],
        verifier=report["verifier"],
        thresholds=report["thresholds"],
        seed=cfg.seed,
        kappa={k: v["label_kappa"] for k, v in pairs.items()},
        sources=[manifest_ref(cfg.input)],
    )
    os.chmod(out / "manifest.json", 0o600)
