"""The shape of a run report's facts (``report/facts.json``): what ``spcl.report.facts`` gathers and
``spcl.report.build`` draws, and the parts of the files it reads them from (a filter output's
``stats.json``, a mask output's ``metrics.json``, a screen's ``model_card.json``).

TypedDicts, not classes: the facts are written as JSON exactly as built (key order included), and
tests and users read ``facts.json`` as plain objects. The views of the files read list only the keys
the report uses (``total=False``: an older output may lack any of them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

# the screen evaluation loads the model stack; annotations name its report records.ScreenEvalReport
if TYPE_CHECKING:
    from spcl.evaluate.screen import ScreenEvalReport


class FilterReconciliation(TypedDict, total=False):
    """``input_records == output_records`` (clean + flagged + quarantine) of a filter output."""

    input_records: int
    output_records: int
    ok: bool


class FilterStats(TypedDict, total=False):
    """What the report reads of a filter output's ``stats.json`` (``spcl.filter.stats``)."""

    counts: dict[str, int]
    reconciliation: FilterReconciliation
    by_lang: dict[str, dict[str, int]]
    flag_reasons: dict[str, int]
    documents_by_pii_type: dict[str, int]
    pii_hits_by_type: dict[str, int]
    quarantine_reasons: dict[str, int]
    elapsed_seconds: float
    docs_per_second: float
    task_seconds: float
    stage_seconds: dict[str, float]
    engine: str
    master: str
    input_files: list[object]
    skipped_files: list[object]
    spcl_version: str
    config_hash: str
    model: str | None
    model_version: str | None


class ScreenCardView(TypedDict, total=False):
    """What the report reads of a screen's ``model_card.json``: its thresholds, version and name."""

    thresholds: dict[str, float]
    lang_thresholds: dict[str, dict[str, float]] | None
    version: str
    name: str


class TokenBlock(TypedDict, total=False):
    """The ``tokens`` block of a mask output's ``metrics.json``
    (``spcl.executor.counts.token_block``)."""

    documents: int
    documents_counted: int
    prompt: int
    completion: int
    prompt_per_document: float
    completion_per_document: float


class MaskRun(TypedDict, total=False):
    """The run that wrote a mask output's ``metrics.json`` (``spcl.mask_stage.run``; ``engine``
    on Spark only)."""

    engine: str
    run_id: str
    files_processed: int
    files_skipped: int
    documents: int
    elapsed_seconds: float
    docs_per_second: float


class MaskMetrics(TypedDict, total=False):
    """What the report reads of a mask output's ``metrics.json`` (``spcl.mask_stage.metrics``)."""

    backend: str
    model: str | None
    prompt_version: str | None
    models_in_output: list[str]
    fallback: str | None
    documents: int
    masked_by_fallback: int
    failed_reasons: dict[str, int]
    entities_per_type: dict[str, int]
    entities: int
    parse_success_rate: float
    extraction_success_rate: float
    hallucination_rate: float
    latency_seconds: dict[str, float]
    generated_tokens: int
    generated_tokens_per_second: float
    tokens: TokenBlock
    docs_per_second: float
    run: MaskRun


ScoreFacts = dict[str, Any]
"""The ``scores`` block: ``documents_scored``, thresholds and, per screen head ``h``, ``h_edges``
and ``h_counts`` (keys named after the heads of the output, so not a fixed record)."""


class LlmShare(TypedDict):
    """The flagged documents (what the LLM stage is sent) and their share of the readable input."""

    documents: int
    screened: int
    share: float | None


class FlagCause(TypedDict):
    """Flagged documents of one language: by a rule hit, or by the screen alone."""

    rule_hits: int
    screen_only: int


class FilterThroughput(TypedDict):
    """The ``throughput`` block of a filter output, from ``stats.json``."""

    elapsed_seconds: float | None
    docs_per_second: float | None
    task_seconds: float | None
    stage_seconds: dict[str, float]
    engine: str | None
    master: str | None
    input_files: int
    skipped_files: int


class FilterIdentity(TypedDict):
    """The ``identity`` block of a filter output: versions and hashes."""

    spcl_version: str | None
    config_hash: str | None
    config_hashes_in_output: list[str]
    model: str | None
    model_version: str | None
    model_versions_in_output: list[str]
    model_card_version: str | None
    manifest_kind: str | None


class FilterFacts(TypedDict):
    """Counts and score histograms of a filter output (``spcl.report.facts.filter_facts``)."""

    kind: Literal["filter"]
    counts: dict[str, int]
    reconciliation: FilterReconciliation
    by_lang: dict[str, dict[str, int]]
    flag_rate_by_lang: dict[str, float]
    flag_reasons: dict[str, int]
    documents_by_pii_type: dict[str, int]
    pii_hits_by_type: dict[str, int]
    quarantine_reasons: dict[str, int]
    top_categories: dict[str, int]
    flagged_by_lang_cause: dict[str, FlagCause]
    llm_stage: LlmShare
    scores: ScoreFacts
    throughput: FilterThroughput
    identity: FilterIdentity


class TokenFacts(TypedDict):
    """The ``tokens`` block of a mask output: per-document counts and the GPU-hours estimate
    (``spcl.report.llm_cost.token_facts``)."""

    documents_counted: int
    prompt_per_document: float
    completion_per_document: float
    flagged_documents: int
    flagged_source: str
    prompt_tokens: int
    completion_tokens: int
    tokens_per_second: float | None
    rate_source: Literal["given", "measured", "none"]
    measured_tokens_per_second: float | None
    measured_on: str | None
    gpu_hours: float | None


class MaskReconciliation(TypedDict):
    """``documents == masked rows + failed rows`` of a mask output."""

    documents: int
    masked_rows: int
    failed_rows: int
    ok: bool


class MaskThroughput(TypedDict):
    """Documents and generated tokens per second of a mask run, and the run itself
    (``metrics.json``)."""

    docs_per_second: float | None
    generated_tokens_per_second: float | None
    run: MaskRun


class MaskIdentity(TypedDict):
    """What produced a mask output: backend, model, prompt version, fallback."""

    backend: str | None
    model: str | None
    prompt_version: str | None
    models_in_output: list[str]
    fallback: str | None


class MaskFacts(TypedDict):
    """Counts of a mask output (``spcl.report.facts.mask_facts``)."""

    kind: Literal["mask"]
    documents: int
    masked: int
    failed: int
    reconciliation: MaskReconciliation
    masked_by_fallback: int | None
    failed_reasons: dict[str, int]
    entities_per_type: dict[str, int]
    entities: int | None
    rates: dict[str, float]
    latency_seconds: dict[str, float]
    tokens: TokenFacts
    throughput: MaskThroughput
    identity: MaskIdentity


class ReportFacts(TypedDict):
    """``report/facts.json``: the blocks the report holds, in the order they are gathered."""

    screen_eval: NotRequired[ScreenEvalReport]
    filter: NotRequired[FilterFacts]
    mask: NotRequired[MaskFacts]
