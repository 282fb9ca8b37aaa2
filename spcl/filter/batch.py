"""The screen's per-batch function: ``RECORD_SCHEMA`` batch in, ``OUTPUT_SCHEMA`` batch out.

Plain Python, no Spark: the plain engine, tests, notebooks and benchmarks call it directly, and the Spark
job distributes it with ``mapInArrow``. Each input row yields exactly one output row — a record that
was unreadable, or that fails in an unexpected way here, becomes a quarantine row with a reason.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa

from spcl.config import Settings
from spcl.detect.base import Hit
from spcl.filter.route import decide, reported_hits, rule_reasons, screen_reasons
from spcl.io.schema import OUTPUT_SCHEMA, row_key
from spcl.labels import CATEGORIES
from spcl.text import guess_langs, normalize

if TYPE_CHECKING:
    from spcl.screen.model import ScreenResult

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


def resolve_model_path(model: str) -> Path:
    """The screen model folder: as given, or the shipped copy of that relative path (source tree or wheel)."""
    from spcl.resources import resolve_path

    return resolve_path(model)


def build_context(settings: Settings) -> FilterContext:
    """Load detectors and (when enabled) the screen model for ``settings``."""
    from spcl.detect import build_detectors

    screen = None
    if settings.screen.enabled:
        from spcl.screen import load_screen

        screen = load_screen(resolve_model_path(settings.screen.model))
    return FilterContext(settings, build_detectors(settings.detect), screen, settings.config_hash())


@cache
def context_for(settings_json: str) -> FilterContext:
    """The worker-wide context for serialized settings, built on first use and then reused."""
    return build_context(Settings.model_validate_json(settings_json))


def _hit_rows(hits: list[Hit]) -> list[dict[str, Any]]:
    return [
        {"type": h.type, "start": h.start, "end": h.end, "validated": h.validated, "detector": h.detector}
        for h in hits
    ]


def _empty_columns() -> dict[str, list[Any]]:
    return {name: [] for name in OUTPUT_SCHEMA.names}


def _append(cols: dict[str, list[Any]], **values: Any) -> None:
    for name in OUTPUT_SCHEMA.names:
        cols[name].append(values.get(name))


def _screen_scores(ctx: FilterContext, texts: list[str], langs: list[str]) -> list[dict[str, Any]]:
    result = ctx.screen.predict(texts, langs)
    cats = np.stack([np.asarray(result.categories[c], dtype=np.float32) for c in CATEGORIES], axis=1)
    rows = []
    for i in range(len(texts)):
        rows.append({
            "lgbm": float(result.lgbm_score[i]),
            "svc": float(result.svc_score[i]),
            "lgbm_flag": bool(result.lgbm_flag[i]),
            "svc_flag": bool(result.svc_flag[i]),
            **{c.lower(): float(cats[i, j]) for j, c in enumerate(CATEGORIES)},
            "top_category": CATEGORIES[int(np.argmax(cats[i]))],
        })
    return rows


def _quarantine(cols: dict[str, list[Any]], base: dict[str, Any], reason: str, raw: bytes | None) -> None:
    _append(cols, **base, decision="quarantine", quarantine_reason=reason, raw=raw)


def _raw_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def process_batch(batch: pa.RecordBatch, ctx: FilterContext) -> pa.RecordBatch:
    """Screen one ``RECORD_SCHEMA`` batch: normalize, detect, score, decide; one output row per input row."""
    cols = _empty_columns()
    common = {"config_hash": ctx.config_hash, "model_version": ctx.model_version}
    kept: list[dict[str, Any]] = []
    for rec in batch.to_pylist():
        base = {"id": rec["id"], "row_key": row_key(rec["id"], rec["source"], rec["position"]),
                "source": rec["source"], "position": rec["position"], **common}
        if rec["error"] is not None:
            _quarantine(cols, base, rec["error"], rec["raw"])
            continue
        try:
            text = normalize(rec["text"])
            hits = ctx.detectors.find(text)
            kept.append({"base": base, "original": rec["text"], "text": text, "lang": None,
                         "meta": rec["meta"], "hits": reported_hits(hits, ctx.settings.policy),
                         "reasons": rule_reasons(hits, ctx.settings.policy)})
        except Exception as err:  # never crash the job on one record; never log the value
            log.warning("record %s at %s:%s failed in the screen: %s", rec["id"], rec["source"],
                        rec["position"], type(err).__name__)
            raw = _raw_bytes(rec["text"]) if isinstance(rec["text"], str) else None
            _quarantine(cols, base, f"screen_error:{type(err).__name__}", raw)
    for row, lang in zip(kept, guess_langs([k["text"] for k in kept]), strict=True):
        row["lang"] = lang
    scores: list[dict[str, Any] | None] = [None] * len(kept)
    if ctx.screen is not None and kept:
        try:
            scores = list(_screen_scores(ctx, [k["text"] for k in kept], [k["lang"] for k in kept]))
        except Exception as err:  # fail closed: an unscored document is not released as clean
            log.warning("screen model failed on a batch of %d records: %s", len(kept), type(err).__name__)
            for row in kept:
                _quarantine(cols, row["base"], f"screen_model_error:{type(err).__name__}", _raw_bytes(row["original"]))
            return pa.RecordBatch.from_pydict(cols, schema=OUTPUT_SCHEMA)
    for row, score in zip(kept, scores, strict=True):
        reasons = row["reasons"]
        top_category = None
        if score is not None:
            reasons = reasons + screen_reasons(score["lgbm_flag"], score["svc_flag"])
            top_category = score.pop("top_category")
        _append(cols, **row["base"], text=row["text"], lang=row["lang"], meta=row["meta"],
                hits=_hit_rows(row["hits"]), reasons=reasons, scores=score, top_category=top_category,
                decision=decide(reasons))
    return pa.RecordBatch.from_pydict(cols, schema=OUTPUT_SCHEMA)
