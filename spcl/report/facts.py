"""What a run report shows, gathered from an output folder: counts, score histograms, timings,
identity.

Everything here is a count, a rate, a score histogram, a reason name, a type name, a timing or a
hash — never a document's text, id or value (the report is meant to be passed around).
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spcl.io.outputs import output_dataset
from spcl.report.llm_cost import token_facts
from spcl.report.records import (
    FilterFacts,
    FilterIdentity,
    FilterStats,
    FilterThroughput,
    LlmShare,
    MaskFacts,
    MaskMetrics,
    ScoreFacts,
    ScreenCardView,
)
from spcl.resources import shipped_locations
from spcl.screen.heads import DEFAULT_OUTPUTS, head_view, heads_in

log = logging.getLogger(__name__)

_FILTER_COLUMNS = [
    "decision",
    "top_category",
    "scores",
    "model_version",
    "config_hash",
    "lang",
    "reasons",
]


def head_edges(head: str) -> tuple[float, ...]:
    """Histogram bins of one screen head's score (the screen package's view of it)."""
    return head_view(head).edges


def score_heads(scores_type: pa.DataType) -> list[str]:
    """The screen heads in a ``scores`` struct: every field that has a ``<name>_flag`` beside it
    (generic: no head is named here)."""
    return heads_in(scores_type.field(i).name for i in range(scores_type.num_fields))


def output_kind(path: str | Path) -> str:
    """``filter`` (``stats.json`` and ``decision=*`` folders), ``mask`` (``metrics.json`` with
    ``masked/`` or ``failed/``); raises ``ValueError`` otherwise."""
    p = Path(path)
    if (p / "stats.json").is_file() and any(p.glob("decision=*")):
        return "filter"
    if (p / "metrics.json").is_file() and ((p / "masked").is_dir() or (p / "failed").is_dir()):
        return "mask"
    raise ValueError(
        f"{p} is neither a filter output (stats.json, decision=*/) nor a mask output (metrics.json,"
        " masked/)"
    )


def _histogram(values: np.ndarray, edges: tuple[float, ...]) -> np.ndarray:
    """Counts per bin of ``edges``; values outside fall in the end bins, NaN is dropped."""
    values = values[~np.isnan(values)]
    clipped = np.clip(values, edges[0], edges[-1])
    counts, _ = np.histogram(clipped, bins=np.asarray(edges))
    return counts


def _model_card(stats: FilterStats, base: Path) -> ScreenCardView | None:
    """The screen's ``model_card.json`` named by ``stats["model"]`` — the resolved absolute folder
    the run loaded (older outputs: a path relative to the working folder, the output, or the shipped
    models) — if it can be found; a model named but not found is logged (the thresholds then come
    from the output itself)."""
    model = stats.get("model")
    if not model:
        return None
    for root in (
        Path(model),
        base / model,
        *([] if Path(model).is_absolute() else shipped_locations(model)),
    ):
        card = root / "model_card.json"
        if card.is_file():
            try:
                view: ScreenCardView = json.loads(card.read_text(encoding="utf-8"))
                return view
            except (OSError, ValueError):
                break
    log.warning(
        "model card of %s not found or unreadable: thresholds shown are the lowest score each model"
        " flagged in this output",
        model,
    )
    return None


@dataclass
class _ColumnScan:
    """What one pass over a filter output's decision, category, model, config and score columns
    gathers."""

    heads: list[str] = field(default_factory=lambda: list(DEFAULT_OUTPUTS.scores))
    """The heads of the scores read (the shipped kind's until a batch with scores is read); the
    first one is also histogrammed per decision."""
    counts: dict[str, np.ndarray] = field(default_factory=dict)  # head -> histogram
    primary_by_decision: dict[str, np.ndarray] = field(default_factory=dict)
    categories: Counter[str] = field(default_factory=Counter)
    models: Counter[str] = field(default_factory=Counter)
    configs: Counter[str] = field(default_factory=Counter)
    lowest_flagged: dict[str, float] = field(default_factory=dict)
    scored: int = 0
    # head -> lang -> counts
    by_lang: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    # lang -> rule_hits / screen_only
    flag_split: dict[str, Counter[str]] = field(default_factory=dict)

    def _add_languages(self, batch: pa.RecordBatch, decisions: np.ndarray) -> None:
        """Flagged documents per language by cause, and each head's score histogram per language."""
        langs = [lg or "unknown" for lg in batch.column("lang").to_pylist()]
        reasons = batch.column("reasons").to_pylist()
        for lang, dec, rs in zip(langs, decisions, reasons, strict=True):
            if dec == "flagged":
                rule = any(str(r).startswith("rule:") for r in rs or ())
                self.flag_split.setdefault(lang, Counter())[
                    "rule_hits" if rule else "screen_only"
                ] += 1
        scores = batch.column("scores")
        if scores.null_count == len(scores):
            return
        lang_arr = np.asarray(langs, dtype=object)
        for head in score_heads(scores.type):
            values = pc.struct_field(scores, head).to_numpy(zero_copy_only=False).astype(float)
            per = self.by_lang.setdefault(head, {})
            for lang in sorted(set(langs)):
                hist = per.setdefault(lang, np.zeros(len(head_edges(head)) - 1, np.int64))
                hist += _histogram(values[lang_arr == lang], head_edges(head))

    def add(self, batch: pa.RecordBatch) -> None:
        """Count one batch: flagged documents' top categories, model versions, config hashes,
        then its scores."""
        decisions = batch.column("decision").to_numpy(zero_copy_only=False)
        flagged = decisions == "flagged"
        self.categories.update(
            c for c in pc.filter(batch.column("top_category"), flagged).to_pylist() if c
        )
        self.models.update(v for v in batch.column("model_version").to_pylist() if v)
        self.configs.update(v for v in batch.column("config_hash").to_pylist() if v)
        scores = batch.column("scores")
        if scores.null_count != len(scores):
            self._add_scores(scores, decisions)
        if "lang" in batch.schema.names and "reasons" in batch.schema.names:
            self._add_languages(batch, decisions)

    def _add_scores(self, scores: pa.Array, decisions: np.ndarray) -> None:
        """Histogram every head's scores (the first head also per decision) and keep each one's
        lowest flagged."""
        self.heads = score_heads(scores.type)
        if not self.heads:
            return
        flag_fields = {scores.type.field(i).name for i in range(scores.type.num_fields)}
        for n, head in enumerate(self.heads):
            values = pc.struct_field(scores, head).to_numpy(zero_copy_only=False).astype(float)
            edges = head_edges(head)
            hist = self.counts.setdefault(head, np.zeros(len(edges) - 1, np.int64))
            hist += _histogram(values, edges)
            if n == 0:
                self.scored += int((~np.isnan(values)).sum())
                for dec in ("clean", "flagged"):
                    mask = decisions == dec
                    if mask.any():
                        by_dec = self.primary_by_decision.setdefault(
                            dec, np.zeros(len(edges) - 1, np.int64)
                        )
                        by_dec += _histogram(values[mask], edges)
            if f"{head}_flag" not in flag_fields:
                continue
            flags = pc.fill_null(pc.struct_field(scores, f"{head}_flag"), False).to_numpy(
                zero_copy_only=False
            )
            chosen = values[flags.astype(bool) & ~np.isnan(values)]
            if chosen.size:
                self.lowest_flagged[head] = min(
                    self.lowest_flagged.get(head, math.inf), float(chosen.min())
                )


def _scan(root: Path) -> _ColumnScan:
    """One pass over every non-empty batch of the output's decision folders."""
    scan = _ColumnScan()
    for batch in output_dataset(root).to_batches(columns=_FILTER_COLUMNS):
        if batch.num_rows:
            scan.add(batch)
    return scan


def _thresholds(
    card: ScreenCardView | None, lowest_flagged: dict[str, float]
) -> tuple[dict[str, float], str]:
    """``(thresholds, source)``: the model card's, else the lowest score each model flagged in the
    output (the source says so, and that the card was not found)."""
    if card and "thresholds" in card:
        return {k: float(v) for k, v in card["thresholds"].items()}, "model card"
    return (
        {k: v for k, v in lowest_flagged.items() if math.isfinite(v)},
        "lowest flagged score in this output (model card not found)",
    )


def _score_facts(scan: _ColumnScan, card: ScreenCardView | None) -> ScoreFacts:
    """The ``scores`` block: histogram edges and counts, documents scored, thresholds and their
    source."""
    thresholds, threshold_source = _thresholds(card, scan.lowest_flagged)
    facts: ScoreFacts = {"documents_scored": scan.scored}
    for n, head in enumerate(scan.heads):
        edges = head_edges(head)
        facts[f"{head}_edges"] = list(edges)
        facts[f"{head}_counts"] = scan.counts.get(head, np.zeros(len(edges) - 1, np.int64)).tolist()
        if n == 0:
            facts[f"{head}_counts_by_decision"] = {
                k: v.tolist() for k, v in sorted(scan.primary_by_decision.items())
            }
    return facts | {
        "thresholds": thresholds,
        "thresholds_by_lang": {
            lang: {k: float(v) for k, v in th.items()}
            for lang, th in sorted(((card or {}).get("lang_thresholds") or {}).items())
        },
        "threshold_source": threshold_source,
        "edges_by_head": {head: list(head_edges(head)) for head in sorted(scan.by_lang)},
        "counts_by_lang": {
            head: {lang: c.tolist() for lang, c in sorted(per.items()) if c.sum()}
            for head, per in sorted(scan.by_lang.items())
        },
    }


def _throughput_facts(stats: FilterStats) -> FilterThroughput:
    """The ``throughput`` block, from ``stats.json``."""
    return {
        "elapsed_seconds": stats.get("elapsed_seconds"),
        "docs_per_second": stats.get("docs_per_second"),
        "task_seconds": stats.get("task_seconds"),
        "stage_seconds": stats.get("stage_seconds", {}),
        "engine": stats.get("engine"),
        "master": stats.get("master"),
        "input_files": len(stats.get("input_files", [])),
        "skipped_files": len(stats.get("skipped_files", [])),
    }


def _identity_facts(
    stats: FilterStats, scan: _ColumnScan, card: ScreenCardView | None, manifest_kind: str | None
) -> FilterIdentity:
    """The ``identity`` block: versions and hashes from ``stats.json``, the rows, the model card,
    the manifest."""
    return {
        "spcl_version": stats.get("spcl_version"),
        "config_hash": stats.get("config_hash"),
        "config_hashes_in_output": sorted(scan.configs),
        "model": stats.get("model"),
        "model_version": stats.get("model_version"),
        "model_versions_in_output": sorted(scan.models),
        "model_card_version": (card or {}).get("version") or (card or {}).get("name"),
        "manifest_kind": manifest_kind,
    }


def _llm_share(stats: FilterStats) -> LlmShare:
    """The flagged documents (what the LLM stage is sent) and their share of the readable input."""
    counts = stats.get("counts", {})
    flagged = int(counts.get("flagged", 0) or 0)
    screened = flagged + int(counts.get("clean", 0) or 0)
    return {
        "documents": flagged,
        "screened": screened,
        "share": round(flagged / screened, 6) if screened else None,
    }


def filter_facts(path: str | Path) -> FilterFacts:
    """Counts and score histograms of a filter output (``stats.json`` plus one pass over the score
    columns).

    Thresholds come from the model card when it is found, else from the output itself: the lowest
    score each model flagged (``threshold_source`` says which).
    """
    root = Path(path)
    stats: FilterStats = json.loads((root / "stats.json").read_text(encoding="utf-8"))
    manifest_path = root / "manifest.json"
    manifest = (
        json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    )
    scan = _scan(root)
    card = _model_card(stats, root)
    by_lang = stats.get("by_lang", {})
    flag_rate = {
        lang: round(v.get("flagged", 0) / max(v.get("flagged", 0) + v.get("clean", 0), 1), 6)
        for lang, v in sorted(by_lang.items())
    }
    return {
        "kind": "filter",
        "counts": stats.get("counts", {}),
        "reconciliation": stats.get("reconciliation", {}),
        "by_lang": by_lang,
        "flag_rate_by_lang": flag_rate,
        "flag_reasons": stats.get("flag_reasons", {}),
        "documents_by_pii_type": stats.get("documents_by_pii_type", {}),
        "pii_hits_by_type": stats.get("pii_hits_by_type", {}),
        "quarantine_reasons": stats.get("quarantine_reasons", {}),
        "top_categories": dict(scan.categories.most_common()),
        "flagged_by_lang_cause": {
            lang: {"rule_hits": c.get("rule_hits", 0), "screen_only": c.get("screen_only", 0)}
            for lang, c in sorted(scan.flag_split.items())
        },
        "llm_stage": _llm_share(stats),
        "scores": _score_facts(scan, card),
        "throughput": _throughput_facts(stats),
        "identity": _identity_facts(stats, scan, card, manifest.get("kind")),
    }


def _parquet_rows(folder: Path) -> int:
    return sum(pq.ParquetFile(p).metadata.num_rows for p in sorted(folder.glob("*.parquet")))


def mask_facts(
    path: str | Path, flagged: int | None = None, gpu_tokens_per_s: float | None = None
) -> MaskFacts:
    """Counts of a mask output: ``metrics.json`` checked against the rows in ``masked/`` and
    ``failed/``; its tokens and the GPU-hours ``flagged`` documents need
    (``spcl.report.llm_cost.token_facts``)."""
    root = Path(path)
    metrics: MaskMetrics = json.loads((root / "metrics.json").read_text(encoding="utf-8"))
    masked_rows = _parquet_rows(root / "masked") if (root / "masked").is_dir() else 0
    failed_rows = _parquet_rows(root / "failed") if (root / "failed").is_dir() else 0
    failed_reasons: Counter[str] = Counter()
    for p in sorted((root / "failed").glob("*.parquet")) if (root / "failed").is_dir() else []:
        reasons = pq.read_table(p, columns=["reason"]).column("reason").to_pylist()
        failed_reasons.update((r or "unknown").split(":", 1)[0] for r in reasons)
    documents = int(metrics.get("documents", 0))
    return {
        "kind": "mask",
        "documents": documents,
        "masked": masked_rows,
        "failed": failed_rows,
        "reconciliation": {
            "documents": documents,
            "masked_rows": masked_rows,
            "failed_rows": failed_rows,
            "ok": documents == masked_rows + failed_rows,
        },
        "masked_by_fallback": metrics.get("masked_by_fallback"),
        "failed_reasons": dict(failed_reasons.most_common()) or metrics.get("failed_reasons", {}),
        "entities_per_type": metrics.get("entities_per_type", {}),
        "entities": metrics.get("entities"),
        "rates": {
            k: v
            for k, v in (
                ("parse_success_rate", metrics.get("parse_success_rate")),
                ("extraction_success_rate", metrics.get("extraction_success_rate")),
                ("hallucination_rate", metrics.get("hallucination_rate")),
            )
            if v is not None
        },
        "latency_seconds": metrics.get("latency_seconds", {}),
        "tokens": token_facts(metrics, flagged, gpu_tokens_per_s),
        "throughput": {
            "docs_per_second": metrics.get("docs_per_second"),
            "generated_tokens_per_second": metrics.get("generated_tokens_per_second"),
            "run": metrics.get("run", {}),
        },
        "identity": {
            "backend": metrics.get("backend"),
            "model": metrics.get("model"),
            "prompt_version": metrics.get("prompt_version"),
            "models_in_output": metrics.get("models_in_output", []),
            "fallback": metrics.get("fallback"),
        },
    }
