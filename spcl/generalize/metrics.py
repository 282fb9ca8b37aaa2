"""``metrics.json`` of the generalize job: totals over every finished input file, shares by rank,
label fallback per type, tokens and seconds (counts and rates, never values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NotRequired, TypedDict

from spcl.executor.counts import TokenCounts, rate, token_block
from spcl.executor.filejob import Reconciliation
from spcl.executor.state import load_json_markers, marker_file, marker_unreadable
from spcl.generalize.engine import GeneralizeSettings
from spcl.generalize.records import GenStats


class GeneralizeRunFacts(TypedDict):
    """``metrics.json``'s ``run``: this run's counts and speed (``engine`` on Spark only)."""

    engine: NotRequired[str]
    files_processed: int
    files_skipped: int
    documents: int
    elapsed_seconds: float
    docs_per_second: float


class FallbackShare(TypedDict):
    """Of one type's generalizable entities: how many, how many fell back to the label, the
    share."""

    generalizable: int
    label: int
    share: float


class GeneralizeMetrics(TypedDict):
    """``metrics.json`` of a generalize output (:func:`build_metrics`): counts and rates, no
    values."""

    backend: str
    model: str
    prompt_version: str
    models_in_output: list[str]
    settings: dict[str, object]
    files: int
    documents: int
    generalized: int
    failed: int
    failed_transient: int
    failed_reasons: dict[str, int]
    entities: int
    entities_by_type: dict[str, int]
    spans_by_type: dict[str, int]
    entities_by_rank: dict[str, int]
    share_by_rank: dict[str, float]
    labels_by_source: dict[str, int]
    label_fallback_per_type: dict[str, FallbackShare]
    attacked_entities: int
    llm_calls: int
    llm_calls_per_entity: float
    cache_hits: int
    guesses_per_document: float
    tokens_per_document: float
    tokens: TokenCounts
    llm_seconds_per_document: float
    seconds_per_document: float
    reconciliation: Reconciliation
    run: GeneralizeRunFacts


def _rate(num: float, den: float) -> float:
    return round(rate(num, den), 6)


def build_metrics(
    output: str,
    backend: str,
    settings: dict[str, Any],
    identity: tuple[str, str, str] | None,
    run: GeneralizeRunFacts,
    reconciliation: Reconciliation,
) -> GeneralizeMetrics:
    """metrics.json of the output folder ``output``: totals over every finished file (its
    done-markers), shares by rank and fallback per type (no values); ``backend`` and ``settings``
    (GeneralizeSettings fields) as configured, ``identity`` the worker's ``(backend, model, prompt
    version)`` when known."""
    total = GenStats()
    models, prompts = set(), set()
    done = Path(output) / "_done"
    for key, data in load_json_markers(done).items():
        try:
            total.merge(GenStats(**data["stats"]))
        except (TypeError, KeyError, ValueError, AttributeError):
            raise marker_unreadable(marker_file(done, key)) from None
        models.add(str(data.get("model", "")))
        prompts.add(str(data.get("prompt_version", "")))
    n_entities = sum(total.entities_by_rank.values())
    settings = GeneralizeSettings(**settings).model_dump()
    return {
        "backend": backend,
        "model": identity[1] if identity else (next(iter(models)) if len(models) == 1 else "mixed"),
        "prompt_version": (
            identity[2] if identity else (next(iter(prompts)) if len(prompts) == 1 else "mixed")
        ),
        "models_in_output": sorted(models),
        "settings": {
            k: settings[k]
            for k in (
                "candidates",
                "guesses",
                "temperature",
                "attack_temperature",
                "max_tokens",
                "seed",
                "rules_rungs",
            )
        },
        "files": total.files,
        "documents": total.documents,
        "generalized": total.generalized,
        "failed": total.failed,
        "failed_transient": total.failed_transient,
        "failed_reasons": total.failed_reasons,
        "entities": n_entities,
        "entities_by_type": dict(sorted(total.entities_by_type.items())),
        "spans_by_type": dict(sorted(total.spans_by_type.items())),
        "entities_by_rank": dict(sorted(total.entities_by_rank.items())),
        "share_by_rank": {
            k: _rate(v, n_entities) for k, v in sorted(total.entities_by_rank.items())
        },
        "labels_by_source": dict(sorted(total.labels_by_source.items())),
        "label_fallback_per_type": {
            t: {
                "generalizable": n,
                "label": total.fallback_by_type.get(t, 0),
                "share": _rate(total.fallback_by_type.get(t, 0), n),
            }
            for t, n in sorted(total.generalizable_by_type.items())
        },
        "attacked_entities": total.attacked_entities,
        "llm_calls": total.llm_calls,
        "llm_calls_per_entity": _rate(total.llm_calls, total.attacked_entities),
        "cache_hits": total.cache_hits,
        "guesses_per_document": _rate(total.guesses, total.documents),
        "tokens_per_document": _rate(total.tokens, total.documents),
        # extractor + candidate/attack chat calls, from the engine's counts or the server's usage
        "tokens": token_block(
            total.prompt_tokens + total.extract_prompt_tokens,
            total.tokens + total.extract_tokens,
            total.documents,
            total.token_documents,
        ),
        "llm_seconds_per_document": _rate(total.llm_seconds, total.documents),
        "seconds_per_document": _rate(total.seconds, total.documents),
        "reconciliation": reconciliation,
        "run": run,
    }
