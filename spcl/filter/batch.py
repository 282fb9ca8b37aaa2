"""The screen's per-batch function: ``RECORD_SCHEMA`` batch in, ``OUTPUT_SCHEMA`` batch out.

Plain Python, no Spark: the plain engine, tests, notebooks and benchmarks call it directly, and the
Spark job distributes it with ``mapInArrow``. Each input row yields exactly one output row — a
record that was unreadable, or that fails in an unexpected way here, becomes a quarantine row with a
reason.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa

from spcl.config import Settings
from spcl.detect import build_detectors
from spcl.detect.base import Hit
from spcl.filter.route import decide, reported_hits, rule_reasons, screen_reasons
from spcl.io.schema import SCORES_TYPE, output_schema, row_key, scores_type
from spcl.labels import CATEGORIES
from spcl.resources import resolve_path
from spcl.rule_types import HitRow
from spcl.screen.heads import DEFAULT_OUTPUTS
from spcl.screen.kinds import load_any
from spcl.text import guess_langs, normalize

if TYPE_CHECKING:
    from spcl.screen.kinds import ScreenOutputs, ScreenResult

log = logging.getLogger(__name__)


class HitFinder(Protocol):
    """What the batch function needs of the rule detectors (``spcl.detect.DetectorSet``)."""

    def find(self, text: str) -> list[Hit]:
        """All hits in the NFC ``text``."""
        ...


class ScreenModel(Protocol):
    """What the batch function needs of the screen model (``spcl.screen.Screen``)."""

    @property
    def version(self) -> str:
        """The model's version string."""
        ...

    @property
    def outputs(self) -> ScreenOutputs:
        """The names of its scores and flags (from its model card)."""
        ...

    def predict(self, texts: Sequence[str], langs: Sequence[str] | None = None) -> ScreenResult:
        """Scores and flags, one value per text."""
        ...


@dataclass
class FilterContext:
    """Everything a worker loads once and reuses over its batches."""

    settings: Settings
    detectors: HitFinder
    screen: ScreenModel | None  # None when the screen is disabled
    config_hash: str

    @property
    def model_version(self) -> str | None:
        """The screen model's version string (None without a screen)."""
        return None if self.screen is None else str(self.screen.version)

    @property
    def scores_type(self) -> pa.StructType:
        """The ``scores`` column's struct: the screen kind's named scores and flags (the shipped
        one's without a screen)."""
        # a model that names none has the shipped kind's
        outputs = getattr(self.screen, "outputs", None)
        if outputs is None:
            return SCORES_TYPE
        return scores_type(outputs.scores, outputs.flags)


def resolve_model_path(model: str) -> Path:
    """The screen model folder: as given, or the shipped copy of that relative path (source tree
    or wheel)."""

    return resolve_path(model)


def model_identity(model: str) -> dict[str, str | None]:
    """``{"model": resolved absolute folder, "model_version": NAME@SHA12}`` of the screen model
    ``model`` as the filter loads it (``resolve_model_path``), read from its ``model_card.json``
    (version ``None`` when unreadable); what ``stats.json`` records, so that the card is found again
    from anywhere."""
    path = resolve_model_path(model).resolve()
    version = None
    try:
        card = json.loads((path / "model_card.json").read_text(encoding="utf-8"))
        version = f"{card.get('name', path.name)}@{str(card['model_sha256'])[:12]}"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return {"model": str(path), "model_version": version}


def build_context(settings: Settings) -> FilterContext:
    """Load detectors and (when enabled) the screen model for ``settings``."""

    screen = None
    if settings.screen.enabled:
        # the model's stack loads here, not at import
        screen = load_any(resolve_model_path(settings.screen.model))
    return FilterContext(settings, build_detectors(settings.detect), screen, settings.config_hash())


@cache
def context_for(settings_json: str) -> FilterContext:
    """The worker-wide context for serialized settings, built on first use and then reused."""
    return build_context(Settings.model_validate_json(settings_json))


def _hit_rows(hits: list[Hit]) -> list[HitRow]:
    return [
        {
            "type": h.type,
            "start": h.start,
            "end": h.end,
            "validated": h.validated,
            "detector": h.detector,
        }
        for h in hits
    ]


@dataclass
class _Kept:
    """The rows of a batch that reach the screen, column by column, in input order."""

    base: list[int] = field(default_factory=list)  # row index in the input batch
    texts: list[str] = field(default_factory=list)  # NFC
    originals: list[str] = field(default_factory=list)
    hits: list[list[Hit]] = field(default_factory=list)  # reported hits
    reasons: list[list[str]] = field(default_factory=list)  # rule reasons


@dataclass(frozen=True)
class _Rows:
    """The input batch's columns every output row copies (by input row index), and its rows that
    cannot be screened (``(row, reason, raw)``, input order)."""

    ids: list[Any]
    keys: list[str]
    sources: list[str]
    positions: list[int]
    metas: list[str | None]
    quarantined: list[tuple[int, str, bytes | None]]


@dataclass(frozen=True)
class _Screened:
    """What the screen decided for the kept rows: languages, reasons, the ``scores`` column, top
    categories."""

    langs: list[str]
    reasons: list[list[str]]
    scores: pa.Array
    top: list[str | None]


def _screen_columns(
    screen: ScreenModel, texts: list[str], langs: list[str], struct: pa.StructType
) -> tuple[pa.Array, list[str], list[list[str]]]:
    """The ``scores`` struct column, the top category and the ``screen:NAME`` reasons of every
    text."""
    result = screen.predict(texts, langs)
    out = getattr(screen, "outputs", None)
    if out is None:  # a model that names no outputs has the shipped kind's heads
        out = DEFAULT_OUTPUTS
    score_names, flag_names = out.scores, out.flags
    n = len(texts)
    cats = np.stack(
        [np.asarray(result.categories.get(c, np.zeros(n)), dtype=np.float32) for c in CATEGORIES],
        axis=1,
    )
    flags = [np.asarray(result.flags[f], bool) for f in flag_names]
    children = [
        *(pa.array(np.asarray(result.scores[s], np.float32), pa.float32()) for s in score_names),
        *(pa.array(f, pa.bool_()) for f in flags),
        *(pa.array(np.ascontiguousarray(cats[:, j]), pa.float32()) for j in range(len(CATEGORIES))),
    ]
    scores = pa.StructArray.from_arrays(children, fields=list(struct))
    top = [CATEGORIES[j] for j in np.argmax(cats, axis=1).tolist()] if n else []
    fired = [f.tolist() for f in flags]
    reasons = [
        screen_reasons(dict(zip(flag_names, row, strict=True))) for row in zip(*fired, strict=True)
    ]
    return scores, top, reasons if fired else [[] for _ in range(n)]


def _raw_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def process_batch(batch: pa.RecordBatch, ctx: FilterContext) -> pa.RecordBatch:
    """Screen one ``RECORD_SCHEMA`` batch: normalize, detect, score, decide; one output row per
    input row.

    Rows that cannot be screened come first (quarantine, in input order), then the screened rows in
    input order.
    """
    ids = batch.column("id").to_pylist()
    sources = batch.column("source").to_pylist()
    positions = batch.column("position").to_pylist()
    errors = batch.column("error").to_pylist()
    texts = batch.column("text").to_pylist()
    metas = batch.column("meta").to_pylist()
    keys = [row_key(i, s, p) for i, s, p in zip(ids, sources, positions, strict=True)]
    quarantined: list[tuple[int, str, bytes | None]] = []  # (row, reason, raw)
    kept = _Kept()
    raws: list[bytes | None] | None = None
    policy = ctx.settings.policy
    for i, (error, original) in enumerate(zip(errors, texts, strict=True)):
        if error is not None:
            if raws is None:
                raws = batch.column("raw").to_pylist()
            quarantined.append((i, error, raws[i]))
            continue
        try:
            text = normalize(original)
            hits = ctx.detectors.find(text)
            reported, rule_hits = reported_hits(hits, policy), rule_reasons(hits, policy)
        except Exception as err:  # never crash the job on one record; never log the value
            log.warning(
                "record %s at %s:%s failed in the screen: %s",
                ids[i],
                sources[i],
                positions[i],
                type(err).__name__,
            )
            raw = _raw_bytes(original) if isinstance(original, str) else None
            quarantined.append((i, f"screen_error:{type(err).__name__}", raw))
            continue
        kept.base.append(i)
        kept.texts.append(text)
        kept.originals.append(original)
        kept.hits.append(reported)
        kept.reasons.append(rule_hits)
    langs = guess_langs(kept.texts)
    struct = ctx.scores_type
    scores: pa.Array = pa.nulls(len(kept.base), struct)
    top: list[str | None] = [None] * len(kept.base)
    reasons = kept.reasons
    if ctx.screen is not None and kept.base:
        try:
            scores, top_cats, screen_hits = _screen_columns(ctx.screen, kept.texts, langs, struct)
        except Exception as err:  # fail closed: an unscored document is not released as clean
            log.warning(
                "screen model failed on a batch of %d records: %s",
                len(kept.base),
                type(err).__name__,
            )
            reason = f"screen_model_error:{type(err).__name__}"
            quarantined += [
                (i, reason, _raw_bytes(o)) for i, o in zip(kept.base, kept.originals, strict=True)
            ]
            rows = _Rows(ids, keys, sources, positions, metas, quarantined)
            return _output(ctx, rows, _Kept(), _Screened([], [], pa.nulls(0, struct), []))
        top = list(top_cats)
        reasons = [r + s for r, s in zip(reasons, screen_hits, strict=True)]
    return _output(
        ctx,
        _Rows(ids, keys, sources, positions, metas, quarantined),
        kept,
        _Screened(langs, reasons, scores, top),
    )


def _output(ctx: FilterContext, rows_in: _Rows, kept: _Kept, screened: _Screened) -> pa.RecordBatch:
    """The output batch (``OUTPUT_SCHEMA`` with the screen kind's ``scores``): the quarantined rows,
    then the kept rows."""
    schema = output_schema(ctx.scores_type)
    quarantined, ids, keys, sources, positions, metas = (
        rows_in.quarantined,
        rows_in.ids,
        rows_in.keys,
        rows_in.sources,
        rows_in.positions,
        rows_in.metas,
    )
    langs, reasons, scores, top = screened.langs, screened.reasons, screened.scores, screened.top
    q_rows = [i for i, _, _ in quarantined]
    rows = q_rows + kept.base
    nq, nk = len(q_rows), len(kept.base)
    columns: dict[str, Any] = {
        "id": [ids[i] for i in rows],
        "row_key": [keys[i] for i in rows],
        "decision": ["quarantine"] * nq + [decide(r) for r in reasons],
        "text": [None] * nq + kept.texts,
        "lang": [None] * nq + langs,
        "source": [sources[i] for i in rows],
        "position": [positions[i] for i in rows],
        "meta": [None] * nq + [metas[i] for i in kept.base],
        "hits": [None] * nq + [_hit_rows(h) for h in kept.hits],
        "reasons": [None] * nq + reasons,
        "scores": pa.concat_arrays([pa.nulls(nq, scores.type), scores]) if nq else scores,
        "top_category": [None] * nq + top,
        "quarantine_reason": [reason for _, reason, _ in quarantined] + [None] * nk,
        "raw": [raw for _, _, raw in quarantined] + [None] * nk,
        "config_hash": [ctx.config_hash] * (nq + nk),
        "model_version": [ctx.model_version] * (nq + nk),
    }
    arrays = [
        col if isinstance(col, pa.Array) else pa.array(col, type=fld.type)
        for fld, col in ((f, columns[f.name]) for f in schema)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
