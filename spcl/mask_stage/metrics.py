"""``metrics.json`` of a mask output: totals over every committed input file, and this run's
speed."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from spcl.executor.counts import TokenCounts, rate, token_block
from spcl.executor.filejob import Reconciliation
from spcl.extract.backends.registry import FALLBACK_BACKENDS, is_model_backend
from spcl.extract.names import finder_info
from spcl.mask_stage.config import MaskJobConfig
from spcl.mask_stage.name_lists import name_lists_record
from spcl.mask_stage.state import FileStats, Marker

__all__ = [
    "LATENCY_PERCENTILES",
    "MaskMetrics",
    "MaskRunFacts",
    "TierBlock",
    "build_metrics",
    "rate",
    "token_block",
]

LATENCY_PERCENTILES = (50, 90, 99)
LLM_TOKENS_PER_DOCUMENT = 1080
"""Prompt + completion tokens the LLM stage spends on a flagged document of about 1.5 KB (measured
on the vLLM path with the project prompt: ≈ 894 + 185); the tier's savings estimate uses the run's
own average instead whenever the backend reported token counts."""


class TierBlock(TypedDict):
    """``metrics.json``'s ``tier``: what the tier did (:func:`tier_block`)."""

    enabled: bool
    model: str | None
    checked: int
    cleared: int
    cleared_per_language: dict[str, int]
    cleared_reasons: dict[str, int]
    errors: int
    seconds: float
    llm_tokens_per_document: float
    llm_tokens_per_document_source: str
    expected_llm_tokens_saved: int


class MaskRunFacts(TypedDict):
    """``metrics.json``'s ``run``: this run's counts and speed (``engine`` on Spark only)."""

    engine: NotRequired[str]
    run_id: str
    files_processed: int
    files_skipped: int
    documents: int
    elapsed_seconds: float
    docs_per_second: float


class MaskMetrics(TypedDict):
    """``metrics.json`` of a mask output (:func:`build_metrics`): counts and rates, no values."""

    backend: str
    model: str
    prompt_version: str
    models_in_output: list[str]
    prompt_versions_in_output: list[str]
    config_hash: str
    adapter: str | None
    fallback: str | None
    types: list[str]
    names: bool
    names_finder: dict[str, object] | None
    name_lists: dict[str, object]
    files: int
    documents: int
    masked: int
    failed: int
    failed_transient: int
    failed_permanent: int
    masked_by_fallback: int
    failed_reasons: dict[str, int]
    entities_per_type: dict[str, int]
    entities: int
    spans_found_by: dict[str, int]
    parse_success_rate: float
    extraction_success_rate: float
    hallucination_rate: float
    latency_seconds: dict[str, float]
    generated_tokens: int
    generated_tokens_per_second: float
    tokens: TokenCounts
    docs_per_second: float
    tier: TierBlock
    reconciliation: Reconciliation
    run: MaskRunFacts


def tier_block(cfg: MaskJobConfig, total: FileStats) -> TierBlock:
    """What the tier did: documents scored, cleared per language and reason, errors, the LLM
    tokens saved."""
    cleared = sum(total.tier_cleared.values())
    measured = total.token_documents > 0 and (total.prompt_tokens + total.generated_tokens) > 0
    per_doc = (
        (total.prompt_tokens + total.generated_tokens) / total.token_documents
        if measured
        else LLM_TOKENS_PER_DOCUMENT
    )
    return {
        "enabled": bool(cfg.tier),
        "model": cfg.tier,
        "checked": total.tier_checked,
        "cleared": cleared,
        "cleared_per_language": dict(sorted(total.tier_cleared.items())),
        "cleared_reasons": {"tier:below_threshold": cleared} if cleared else {},
        "errors": total.tier_errors,
        "seconds": round(total.tier_seconds, 3),
        "llm_tokens_per_document": round(per_doc, 1),
        "llm_tokens_per_document_source": "measured" if measured else "estimate",
        "expected_llm_tokens_saved": round(cleared * per_doc),
    }


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _single(values: set[str]) -> str:
    return next(iter(values)) if len(values) == 1 else ("mixed" if values else "")


def _names_finder(cfg: MaskJobConfig) -> dict[str, object] | None:
    """The person-name finder of the run and its version (None when no finder reads the
    documents)."""
    if not (cfg.names or not is_model_backend(cfg.backend) or cfg.fallback in FALLBACK_BACKENDS):
        return None
    return finder_info()


def build_metrics(
    cfg: MaskJobConfig,
    markers: dict[str, Marker],
    reconciliation: Reconciliation,
    run: MaskRunFacts,
) -> MaskMetrics:
    """metrics.json: counts and rates over the committed files, the reconciliation, this run (no
    values)."""
    total = FileStats()
    for marker in markers.values():
        total.merge(marker.stats)
    models = {m.model for m in markers.values()}
    prompts = {m.prompt_version for m in markers.values()}
    return {
        "backend": cfg.backend,
        "model": _single(models),
        "prompt_version": _single(prompts),
        "models_in_output": sorted(models),
        "prompt_versions_in_output": sorted(prompts),
        "config_hash": cfg.config_hash(),
        # a fine-tuned LoRA adapter folder (transformers backend)
        "adapter": cfg.options.get("adapter"),
        "fallback": cfg.fallback,
        "types": list(cfg.types),
        "names": cfg.names,
        "names_finder": _names_finder(cfg),
        "name_lists": name_lists_record(cfg.allow_names, cfg.deny_names),
        "files": total.files,
        "documents": total.documents,
        "masked": total.masked,
        "failed": total.failed,
        "failed_transient": total.failed_transient,
        "failed_permanent": total.failed - total.failed_transient,
        "masked_by_fallback": total.fallback,
        "failed_reasons": dict(sorted(total.failed_reasons.items())),
        "entities_per_type": dict(sorted(total.entities.items())),
        "entities": sum(total.entities.values()),
        "spans_found_by": dict(sorted(total.found_by.items())),
        "parse_success_rate": rate(total.parsed, total.outputs),
        "extraction_success_rate": rate(total.outputs, total.documents),
        "hallucination_rate": rate(total.hallucinated_rows, total.checked_rows),
        "latency_seconds": {
            f"p{q}": round(_percentile(total.latencies, q), 6) for q in LATENCY_PERCENTILES
        },
        "generated_tokens": total.generated_tokens,
        "generated_tokens_per_second": round(
            rate(total.generated_tokens, total.extract_seconds), 3
        ),
        "tokens": token_block(
            total.prompt_tokens, total.generated_tokens, total.documents, total.token_documents
        ),
        "docs_per_second": round(rate(total.documents, total.seconds), 3),
        "tier": tier_block(cfg, total),
        "reconciliation": reconciliation,
        "run": run,
    }
