"""Screen rows that live in someone else's engine (a DataFrame, a datatrove pipeline, a ``datasets``
map, a list).

Every entry point turns its rows into one ``RECORD_SCHEMA`` batch and hands it to the filter's
per-batch function (``spcl.filter.batch.process_batch``) — the same function ``spcl filter`` runs,
so the decision is the same — and gets back the screen's columns (:data:`SCREEN_SCHEMA`) in input
order. A row that cannot be screened (text missing, not a string, empty, over
``input.max_text_chars``, containing NUL) is checked by the reader's own
``spcl.io.record_rows.text_problem`` and comes back as ``quarantine`` with that reason; it is never
dropped. The row's own value stays where it was (the caller's column, document or list), so nothing
is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from spcl.config import Settings, load_settings
from spcl.detect.base import Hit
from spcl.filter.batch import FilterContext, context_for, process_batch
from spcl.io.record_rows import derive_id, doc_id_of, text_problem
from spcl.io.schema import OUTPUT_SCHEMA, RECORD_SCHEMA

SCREEN_COLUMNS: tuple[str, ...] = (
    "row_key",
    "decision",
    "lang",
    "hits",
    "reasons",
    "scores",
    "top_category",
    "quarantine_reason",
    "config_hash",
    "model_version",
)
"""The filter output columns an integration adds to the caller's rows (the caller keeps its own
id and text)."""

SCREEN_SCHEMA = pa.schema(
    [OUTPUT_SCHEMA.field(name).with_nullable(True) for name in SCREEN_COLUMNS]
)
"""Arrow schema of :data:`SCREEN_COLUMNS` (all nullable, so any engine can hold them)."""


def check_columns(
    columns: Sequence[str], text_col: str, id_col: str | None, who: str, what: str, rename_hint: str
) -> None:
    """Raise ``ValueError`` when ``text_col``/``id_col`` is not among ``columns`` or a column spcl
    adds (:data:`SCREEN_COLUMNS`) is already there; ``who`` names the caller, ``what`` the table
    kind."""
    missing = [c for c in (text_col, id_col) if c is not None and c not in columns]
    if missing:
        raise ValueError(f"{who}: no column {', '.join(map(repr, missing))} in the {what}")
    clash = [c for c in SCREEN_COLUMNS if c in columns]
    if clash:
        raise ValueError(
            f"{who}: the {what} already has {', '.join(map(repr, clash))}, which spcl adds; "
            f"rename or remove them first ({rename_hint})"
        )


def settings_json(settings: Settings | None) -> str:
    """The serialized settings a worker builds its context from (the default config when
    ``None``)."""
    return (settings if settings is not None else load_settings(None)).model_dump_json()


def context(settings: Settings | str | None = None) -> FilterContext:
    """The process-wide context (detectors, screen model) for ``settings``: built on first use,
    then reused."""
    return context_for(settings if isinstance(settings, str) else settings_json(settings))


def record_batch(
    texts: Sequence[Any],
    ids: Sequence[Any] | None,
    ctx: FilterContext,
    source: str,
    first_position: int = 0,
) -> pa.RecordBatch:
    """The ``RECORD_SCHEMA`` batch of ``texts``: row ``i`` at ``position = first_position + i`` of
    ``source``.

    Ids go through the readers' ``doc_id_of`` (``7`` → ``"7"``; missing or blank → derived from
    source and position); a text the reader would quarantine gets its reason in ``error`` and no
    text.
    """
    n = len(texts)
    if ids is not None and len(ids) != n:
        raise ValueError(f"{len(ids)} ids for {n} texts")
    cols: dict[str, list[Any]] = {name: [] for name in RECORD_SCHEMA.names}
    limits = ctx.settings.input
    for i, value in enumerate(texts):
        position = first_position + i
        doc_id, note = doc_id_of(ids[i]) if ids is not None else (None, "derived")
        problem = text_problem(value, limits)
        cols["id"].append(doc_id if doc_id is not None else derive_id(source, position))
        cols["id_note"].append(note if doc_id is not None else "derived")
        cols["text"].append(None if problem else value)
        cols["error"].append(problem)
        cols["source"].append(source)
        cols["position"].append(position)
    cols["meta"] = cols["raw"] = [None] * n
    return pa.RecordBatch.from_pydict(cols, schema=RECORD_SCHEMA)


def screen_batch(
    texts: Sequence[Any],
    ids: Sequence[Any] | None,
    ctx: FilterContext,
    source: str,
    first_position: int = 0,
) -> pa.RecordBatch:
    """``process_batch`` over ``texts``, its ``OUTPUT_SCHEMA`` rows put back in input order (one
    row per text)."""
    out = process_batch(record_batch(texts, ids, ctx, source, first_position), ctx)
    offsets = pc.subtract(out.column("position"), pa.scalar(first_position, pa.int64()))
    order = pc.sort_indices(offsets)
    return out.take(order)


def screen_columns(
    texts: Sequence[Any],
    ids: Sequence[Any] | None,
    ctx: FilterContext,
    source: str,
    first_position: int = 0,
) -> pa.RecordBatch:
    """The :data:`SCREEN_SCHEMA` columns of ``texts``, in input order."""
    out = screen_batch(texts, ids, ctx, source, first_position)
    return pa.RecordBatch.from_arrays(
        [out.column(name) for name in SCREEN_COLUMNS], schema=SCREEN_SCHEMA
    )


@dataclass(frozen=True, slots=True)
class Screened:
    """The filter's verdict on one text: what ``spcl filter`` writes for it, without the text
    itself.

    ``hits`` offsets are half-open ``[start, end)`` into the NFC text; ``scores`` is ``None``
    without a screen model or for quarantine; ``reasons`` say why a text is ``flagged``
    (``rule:EMAIL``, ``screen:lgbm``); ``config_hash`` and ``model_version`` name the settings and
    screen model that decided.
    """

    id: str
    row_key: str
    decision: str  # clean | flagged | quarantine
    reasons: tuple[str, ...]
    hits: tuple[Hit, ...]
    lang: str | None
    scores: dict[str, float | bool | None] | None
    top_category: str | None
    quarantine_reason: str | None
    config_hash: str
    model_version: str | None


def screen_texts(
    texts: Sequence[Any],
    ids: Sequence[Any] | None = None,
    settings: Settings | None = None,
    source: str = "texts",
) -> list[Screened]:
    """Screen a list of texts with the filter's per-batch function: one :class:`Screened` per text,
    in order.

    A value that cannot be screened (``None``, not a string, empty, NUL, too long) is ``quarantine``
    with the reader's reason, never skipped. Detectors and the screen model load once per process.

    Example (a doctest):

        >>> out = screen_texts(["今日は晴れです。", "連絡先: taro.yamada@mailbox.com", None,
        ...                     "a\\x00b"])
        >>> [(r.decision, r.reasons, r.quarantine_reason)  # doctest: +NORMALIZE_WHITESPACE
        ...  for r in out]
        [('clean', (), None), ('flagged', ('rule:EMAIL',), None),
         ('quarantine', (), 'missing_text_field'), ('quarantine', (), 'text_contains_nul')]
        >>> [(h.type, h.start, h.end) for h in out[1].hits]
        [('EMAIL', 5, 28)]
    """
    rows = screen_batch(
        list(texts), None if ids is None else list(ids), context(settings), source
    ).to_pylist()
    return [
        Screened(
            id=r["id"],
            row_key=r["row_key"],
            decision=r["decision"],
            reasons=tuple(r["reasons"] or ()),
            hits=tuple(
                Hit(h["type"], h["start"], h["end"], h["validated"], h["detector"])
                for h in r["hits"] or ()
            ),
            lang=r["lang"],
            scores=r["scores"],
            top_category=r["top_category"],
            quarantine_reason=r["quarantine_reason"],
            config_hash=r["config_hash"],
            model_version=r["model_version"],
        )
        for r in rows
    ]
