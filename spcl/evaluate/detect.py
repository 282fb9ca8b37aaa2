"""Quality of the rule detectors against gold spans: recall, precision, hard negatives, hits per MB.

Input: JSONL, one record a line, ``{"id", "lang", "kind", "text", "spans": [{"type", "start",
"end"}], "tags": [...]}`` (``tags`` optional). ``kind`` says how a record is scored:

- ``"gold"`` (the default): ``spans`` are every identifier in the text (half-open offsets into the
  NFC text). A gold span is *found* when a hit of the same type covers it (``start <= g.start`` and
  ``g.end <= end``); a hit is *correct* when it overlaps a gold span of its type.
- ``"negative"``: a hard negative (a version, date, GUID, price, IP address … that is no
  identifier); any hit in it counts against the detectors.
- ``"prose"``: real text with no annotation; hits are counted per MB of UTF-8 text (e-mail addresses
  apart: real man pages and mails do name their authors).

The report never holds text or values: only ids, types, languages, tags and counts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from spcl.config import PII_TYPES, DetectSettings
from spcl.detect import build_detectors
from spcl.errors import UsageError
from spcl.io.jsonl import iter_jsonl
from spcl.text import normalize

KINDS = ("gold", "negative", "prose")

GOALS = {
    "recall_overall": 0.99,
    "recall_per_type": 0.95,
    "negatives_hit_max": 0.02,
    "prose_hits_per_mb_max": 1.0,
}
"""The detectors' bar: typed recall overall and per type, share of hard negatives hit, non-e-mail
hits/MB."""


Rates = dict[str, dict[str, int | float | None]]
"""``{key: {"n", "ok", <rate name>: rate or None}}`` of a :class:`_Tally` (the rate's name varies
by table)."""


class RecallBlock(TypedDict):
    """Typed recall of the gold spans overall and by type, language, type/language and tag."""

    overall: float | None
    overall_any_type: float | None
    n: int
    by_type: Rates
    by_lang: Rates
    by_type_lang: Rates
    by_tag: Rates


class PrecisionBlock(TypedDict):
    """Share of the hits on gold records that match a gold span, overall, by hit type and by
    language."""

    overall: float | None
    hits: int
    by_type: Rates
    by_lang: Rates


class NegativesBlock(TypedDict):
    """Hard-negative records hit: share, by language and tag, the hit types and (the first 200)
    ids."""

    n: int
    hit: int
    rate: float | None
    by_lang: Rates
    by_tag: Rates
    hit_types: dict[str, int]
    ids_hit: list[str]


class ProseRow(TypedDict):
    """Hits in real prose: MB read, hits by type, non-e-mail hits and their count per MB."""

    mb: float
    hits: dict[str, int]
    non_email_hits: int
    non_email_hits_per_mb: float | None


class ProseBlock(ProseRow):
    """:class:`ProseRow` of all prose, and one per language."""

    by_lang: dict[str, ProseRow]


class DetectGoal(TypedDict):
    """One bar of :data:`GOALS`: the value (``None``: no data), the bar, its direction and
    whether it holds."""

    value: float | None
    goal: float
    at_least: bool
    met: bool | None


class DetectReport(TypedDict):
    """The report of :func:`evaluate_detect` (``spcl eval detect``)."""

    records: dict[str, int]
    recall: RecallBlock
    precision: PrecisionBlock
    negatives: NegativesBlock
    prose: ProseBlock
    misses: list[dict[str, str]]
    goals: dict[str, DetectGoal]


class DetectEvalError(UsageError, ValueError):
    """A gold file that cannot be scored (the message names the line and field, never a value)."""


@dataclass(frozen=True, slots=True)
class GoldSpan:
    """One gold identifier: its type and half-open span in the NFC text."""

    type: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class GoldRecord:
    """One scored text (see the module docstring for ``kind``)."""

    id: str
    lang: str
    kind: str
    text: str
    spans: tuple[GoldSpan, ...] = ()
    tags: tuple[str, ...] = field(default_factory=tuple)


def read_gold(path: str | Path) -> Iterator[GoldRecord]:
    """The records of a gold JSONL file, checked: known kind, spans inside the NFC text, known
    types."""
    for item in iter_jsonl(path):
        if item.error is not None:
            raise DetectEvalError(f"{path}:{item.line_no}: not JSON ({item.error})")
        yield parse_record(item.value, f"{path}:{item.line_no}")


def parse_record(obj: Any, where: str = "record") -> GoldRecord:
    """One gold record from its JSON object (raises :class:`DetectEvalError` naming ``where``)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        raise DetectEvalError(f"{where}: needs an object with a string 'text'")
    kind = obj.get("kind", "gold")
    if kind not in KINDS:
        raise DetectEvalError(f"{where}: kind must be one of {', '.join(KINDS)}")
    text = normalize(obj["text"])
    spans = []
    for s in obj.get("spans") or []:
        try:
            span = GoldSpan(str(s["type"]), int(s["start"]), int(s["end"]))
        except (KeyError, TypeError, ValueError):
            raise DetectEvalError(f"{where}: each span needs type, start and end") from None
        if span.type not in PII_TYPES:
            raise DetectEvalError(f"{where}: unknown span type {span.type!r}")
        if not 0 <= span.start < span.end <= len(text):
            raise DetectEvalError(f"{where}: span [{span.start}, {span.end}) outside the text")
        spans.append(span)
    if spans and kind != "gold":
        raise DetectEvalError(f"{where}: a {kind} record has no gold spans")
    tags = tuple(str(t) for t in obj.get("tags") or [])
    return GoldRecord(
        str(obj.get("id", where)), str(obj.get("lang", "other")), kind, text, tuple(spans), tags
    )


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


@dataclass
class _Tally:
    """Counts of items and of the items that passed, under several keys ("all", "type:PHONE", …)."""

    n: Counter[str] = field(default_factory=Counter)
    ok: Counter[str] = field(default_factory=Counter)

    def add(self, keys: Iterable[str], ok: bool) -> None:
        for k in keys:
            self.n[k] += 1
            self.ok[k] += ok

    def rate(self, key: str) -> float | None:
        return _ratio(self.ok[key], self.n[key])

    def table(self, prefix: str, rate: str) -> Rates:
        """``{key without prefix: {n, <ok count>, <rate>}}`` for the keys starting with
        ``prefix``."""
        return {k.removeprefix(prefix): {"n": self.n[k], "ok": self.ok[k], rate: self.rate(k)}
                for k in sorted(self.n) if k.startswith(prefix)}  # fmt: skip


def _keys(type_: str | None, lang: str, tags: tuple[str, ...]) -> list[str]:
    keys = ["all", f"lang:{lang}", *(f"tag:{t}" for t in tags)]
    if type_ is not None:
        keys += [f"type:{type_}", f"type_lang:{type_}/{lang}"]
    return keys


def evaluate_detect(
    records: Iterable[GoldRecord], settings: DetectSettings | None = None
) -> DetectReport:
    """Score the rule detectors (``settings``, defaults when ``None``) on ``records``; a JSON-able
    report.

    Keys: ``recall`` (overall and by type, language, type/language and tag; ``recall_any_type``
    counts a span covered by a hit of any type), ``precision`` (on gold records: overall, by hit
    type and language), ``negatives`` (share of hard-negative records hit, by language and tag; hit
    types; ids hit), ``prose`` (MB, hits by type, non-e-mail hits per MB, by language), ``misses``
    (id, type, language and tags of each missed gold span) and ``goals`` (each bar of :data:`GOALS`,
    its value and whether it holds).
    """
    detectors = build_detectors(settings)
    recall, recall_any, precision, negatives = _Tally(), _Tally(), _Tally(), _Tally()
    neg_types: Counter[str] = Counter()
    neg_ids: list[str] = []
    prose_bytes: Counter[str] = Counter()
    prose_hits: dict[str, Counter[str]] = defaultdict(Counter)
    counts: Counter[str] = Counter()
    misses: list[dict[str, str]] = []
    for rec in records:
        counts[rec.kind] += 1
        hits = detectors.find(rec.text)
        if rec.kind == "negative":
            negatives.add(_keys(None, rec.lang, rec.tags), bool(hits))
            if hits:
                neg_types.update(h.type for h in hits)
                neg_ids.append(rec.id)
        elif rec.kind == "prose":
            prose_bytes[rec.lang] += len(rec.text.encode("utf-8"))
            prose_hits[rec.lang].update(h.type for h in hits)
        else:
            for g in rec.spans:
                keys = _keys(g.type, rec.lang, rec.tags)
                ok = any(h.type == g.type and h.start <= g.start and g.end <= h.end for h in hits)
                recall.add(keys, ok)
                recall_any.add(keys, any(h.start < g.end and g.start < h.end for h in hits))
                if not ok:
                    misses.append(
                        {"id": rec.id, "type": g.type, "lang": rec.lang, "tags": ",".join(rec.tags)}
                    )
            for h in hits:
                correct = any(
                    h.type == g.type and h.start < g.end and g.start < h.end for g in rec.spans
                )
                precision.add(("all", f"type:{h.type}", f"lang:{rec.lang}"), correct)
    by_type = recall.table("type:", "recall")
    for t, row in by_type.items():
        row["recall_any_type"] = recall_any.rate(f"type:{t}")
    recall_block: RecallBlock = {
        "overall": recall.rate("all"),
        "overall_any_type": recall_any.rate("all"),
        "n": recall.n["all"],
        "by_type": by_type,
        "by_lang": recall.table("lang:", "recall"),
        "by_type_lang": recall.table("type_lang:", "recall"),
        "by_tag": recall.table("tag:", "recall"),
    }
    negatives_block: NegativesBlock = {
        "n": negatives.n["all"],
        "hit": negatives.ok["all"],
        "rate": negatives.rate("all"),
        "by_lang": negatives.table("lang:", "rate"),
        "by_tag": negatives.table("tag:", "rate"),
        "hit_types": dict(sorted(neg_types.items())),
        "ids_hit": neg_ids[:200],
    }
    prose = _prose(prose_bytes, prose_hits)
    return {
        "records": dict(sorted(counts.items())),
        "recall": recall_block,
        "precision": {
            "overall": precision.rate("all"),
            "hits": precision.n["all"],
            "by_type": precision.table("type:", "precision"),
            "by_lang": precision.table("lang:", "precision"),
        },
        "negatives": negatives_block,
        "prose": prose,
        "misses": misses[:500],
        "goals": _goals(recall_block, negatives_block, prose),
    }


def _prose(nbytes: Counter[str], hits: dict[str, Counter[str]]) -> ProseBlock:
    """Hits per MB of real prose, overall and by language (e-mail addresses counted apart)."""

    def row(size: int, found: Counter[str]) -> ProseRow:
        mb = size / 1e6
        non_email = sum(n for t, n in found.items() if t != "EMAIL")
        return {"mb": round(mb, 3), "hits": dict(sorted(found.items())),
                "non_email_hits": non_email,
                "non_email_hits_per_mb": round(non_email / mb, 3) if mb else None}  # fmt: skip

    total: Counter[str] = Counter()
    for found in hits.values():
        total.update(found)
    by_lang = {lang: row(nbytes[lang], hits[lang]) for lang in sorted(nbytes)}
    overall = row(sum(nbytes.values()), total)
    return {
        "mb": overall["mb"],
        "hits": overall["hits"],
        "non_email_hits": overall["non_email_hits"],
        "non_email_hits_per_mb": overall["non_email_hits_per_mb"],
        "by_lang": by_lang,
    }


def _goals(
    recall: RecallBlock, negatives: NegativesBlock, prose: ProseBlock
) -> dict[str, DetectGoal]:
    """Each bar of :data:`GOALS` with the report's value and whether it is met (``None``: no
    data)."""
    per_type = [rate for r in recall["by_type"].values() if (rate := r["recall"]) is not None]
    values: dict[str, tuple[float | None, float, bool]] = {
        "recall_overall": (recall["overall"], GOALS["recall_overall"], True),
        "recall_per_type_min": (min(per_type, default=None), GOALS["recall_per_type"], True),
        "negatives_hit": (negatives["rate"], GOALS["negatives_hit_max"], False),
        "prose_non_email_hits_per_mb": (
            prose["non_email_hits_per_mb"],
            GOALS["prose_hits_per_mb_max"],
            False,
        ),
    }
    out: dict[str, DetectGoal] = {}
    for name, (value, bar, at_least) in values.items():
        met = None if value is None else (value >= bar if at_least else value <= bar)
        out[name] = {"value": value, "goal": bar, "at_least": at_least, "met": met}
    return out


def format_summary(report: DetectReport) -> str:
    """A short plain-text table of a report: recall by type and language, precision, negatives,
    prose."""
    lines = [f"records: {report['records']}"]
    r = report["recall"]
    lines.append(
        f"typed recall {r['overall']} (any type {r['overall_any_type']}) over {r['n']} gold spans"
    )
    for t, row in r["by_type"].items():
        p = report["precision"]["by_type"].get(t, {}).get("precision")
        lines.append(f"  {t:<9} n={row['n']:<5} recall={row['recall']}  precision={p}")
    for lang, row in r["by_lang"].items():
        p = report["precision"]["by_lang"].get(lang, {}).get("precision")
        lines.append(f"  lang {lang:<4} n={row['n']:<5} recall={row['recall']}  precision={p}")
    n = report["negatives"]
    lines.append(f"hard negatives hit: {n['hit']}/{n['n']} = {n['rate']}  types {n['hit_types']}")
    pr = report["prose"]
    lines.append(
        f"prose: {pr['mb']} MB, non-e-mail hits {pr['non_email_hits']} ="
        f" {pr['non_email_hits_per_mb']}/MB"
    )
    for lang, prow in pr["by_lang"].items():
        lines.append(
            f"  prose {lang:<4} {prow['mb']} MB  {prow['hits']}  {prow['non_email_hits_per_mb']}/MB"
        )
    met = {k: g["met"] for k, g in report["goals"].items()}
    lines.append(f"goals met: {met}")
    return "\n".join(lines)
