"""The generalize job's records: the schemas of its ``generalized/`` and ``failed/`` parts, which
failure reasons a rerun retries, and the counts of one input file (the body of its done-marker; no
values)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from spcl.executor.state import read_part
from spcl.extract.backends.transient import is_transient
from spcl.generalize.outcome import DocResult

SPAN_TYPE = pa.struct(
    [
        pa.field("type", pa.string(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),
        pa.field("end", pa.int32(), nullable=False),
        pa.field("out_start", pa.int32(), nullable=False),
        pa.field("out_end", pa.int32(), nullable=False),
        pa.field("replacement", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("rank", pa.int32()),
    ]
)
GENERALIZED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field(
            "row_key", pa.string(), nullable=False
        ),  # unique per input row; the vault's record id
        pa.field("lang", pa.string()),
        pa.field("generalized_text", pa.string(), nullable=False),
        pa.field("spans", pa.list_(SPAN_TYPE)),
        pa.field("n_spans", pa.int32(), nullable=False),
        pa.field("backend", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("source_file", pa.string(), nullable=False),
        # the vault writer holding this row's originals
        pa.field("vault_file", pa.string(), nullable=False),
    ]
)
FAILED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),  # null when the input row had no id
        pa.field("row_key", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        # a rerun retries it (the server, not the document)
        pa.field("transient", pa.bool_(), nullable=False),
        pa.field("backend", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("source_file", pa.string(), nullable=False),
    ]
)
STAGE_PREFIXES: tuple[str, ...] = ("extract:", "candidates:", "attack:")
"""Reasons that wrap a backend reason code: ``extract:http_503`` is transient when ``http_503``
is."""


def is_transient_reason(reason: str) -> bool:
    """True when a failed row's ``reason`` is a transient backend failure a rerun retries.

    >>> reasons = ("extract:http_503", "attack:timeout", "extract:unparseable_output",
    ...            "candidates:http_400", "release:uncovered_hit:PHONE", "no_id")
    >>> [is_transient_reason(r) for r in reasons]
    [True, True, False, False, False, False]
    """
    for prefix in STAGE_PREFIXES:
        if reason.startswith(prefix):
            return is_transient(reason[len(prefix) :])
    return False


@dataclass(slots=True)
class GenStats:
    """Counts of one input file (the body of its done-marker); sums with ``merge``. No values."""

    files: int = 0
    documents: int = 0
    generalized: int = 0
    failed: int = 0
    failed_transient: int = 0
    failed_reasons: dict[str, int] = field(default_factory=dict)
    entities_by_type: dict[str, int] = field(default_factory=dict)
    spans_by_type: dict[str, int] = field(default_factory=dict)
    entities_by_rank: dict[str, int] = field(default_factory=dict)  # "0".."m-1", "label"
    labels_by_source: dict[str, int] = field(default_factory=dict)  # label_type | fallback
    # generalizable entities that got a label
    fallback_by_type: dict[str, int] = field(default_factory=dict)
    generalizable_by_type: dict[str, int] = field(default_factory=dict)
    attacked_entities: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    guesses: int = 0
    tokens: int = 0
    prompt_tokens: int = 0
    extract_tokens: int = 0  # what the extractor generated and read (0 for the rules extractor)
    extract_prompt_tokens: int = 0
    token_documents: int = 0  # documents whose extractor reported token counts
    llm_seconds: float = 0.0
    seconds: float = 0.0

    def merge(self, other: GenStats) -> None:
        """Add ``other`` into this one."""
        for name in self.__dataclass_fields__:
            mine = getattr(self, name)
            if isinstance(mine, dict):
                for k, v in getattr(other, name).items():
                    mine[k] = mine.get(k, 0) + v
            else:
                setattr(self, name, mine + getattr(other, name))

    def add(self, res: DocResult) -> None:
        """Count one released document's decisions and costs."""
        self.llm_calls += res.llm_calls
        self.cache_hits += res.cache_hits
        self.guesses += res.guesses
        self.tokens += res.tokens
        self.prompt_tokens += res.prompt_tokens
        self.llm_seconds += res.seconds
        if res.reason is not None:
            return
        for span in res.spans:
            _inc(self.spans_by_type, span["type"])
        for dec in res.decisions:
            _inc(self.entities_by_type, dec.type)
            _inc(self.entities_by_rank, "label" if dec.rank is None else str(dec.rank))
            if dec.kind == "label":
                _inc(
                    self.labels_by_source, dec.source if dec.source == "label_type" else "fallback"
                )
            if dec.source != "label_type":
                _inc(self.generalizable_by_type, dec.type)
                if dec.kind == "label":
                    _inc(self.fallback_by_type, dec.type)
            if dec.guesses:
                self.attacked_entities += 1


def _transient_column(table: pa.Table) -> pa.Array:
    """The ``transient`` flags of a failed/ part written before that column existed, from its
    reasons."""
    return pa.array(
        [is_transient_reason(r) for r in table.column("reason").to_pylist()], pa.bool_()
    )


def read_generalize_part(path: Path, schema: pa.Schema) -> pa.Table:
    """A committed part file as ``schema`` (empty when absent;
    ``spcl.executor.state.read_part``)."""
    return read_part(path, schema, {"transient": _transient_column})


def _inc(counter: dict[str, int], key: str) -> None:
    counter[key] = counter.get(key, 0) + 1
