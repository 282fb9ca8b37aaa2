"""Estimates from adjudicated reviews: precision of ``flagged``, miss rate of ``clean``, with Wilson
95 % intervals, weighted by stratum and scaled to the corpus counts in ``stats.json``.

A reviewed document in stratum ``h`` stands for ``N_h / n_h`` documents (population over reviewed).
A rate over a domain (a decision, a language, a category) is the weighted share of positives; its
interval is Wilson's at the Kish effective sample size ``(Σw)² / Σw²``, which is plain Wilson when
the weights are equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

import pyarrow.compute as pc

from spcl.review.labels import CATEGORIES, LABELS, SCREEN_POSITIVE, ReviewError, parse_pii
from spcl.review.reviews import Review
from spcl.review.sample import (
    SamplePlan,
    SampleSpec,
    batch_strata,
    decision_filter,
    output_dataset,
    parse_stratum,
)

Z95 = 1.959963984540054


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (no continuity correction).

    >>> [round(x, 4) for x in wilson(81, 263)]
    [0.2553, 0.3662]
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Rate:
    """A weighted rate with its Wilson interval, and the same scaled to a population count."""

    rate: float | None
    low: float | None
    high: float | None
    reviewed: int
    positives: int
    effective_n: float
    population: int
    count: float | None
    count_low: float | None
    count_high: float | None


def weighted_rate(items: Sequence[tuple[float, bool]], population: int) -> Rate:
    """Rate over ``items`` (``(weight, positive)`` pairs), scaled to ``population`` documents."""
    sw = sum(w for w, _ in items)
    if not items or sw <= 0:
        return Rate(None, None, None, 0, 0, 0.0, population, None, None, None)
    sw2 = sum(w * w for w, _ in items)
    p = sum(w for w, y in items if y) / sw
    n_eff = sw * sw / sw2
    low, high = wilson(p * n_eff, n_eff)
    return Rate(
        rate=p,
        low=low,
        high=high,
        reviewed=len(items),
        positives=sum(1 for _, y in items if y),
        effective_n=round(n_eff, 3),
        population=population,
        count=p * population,
        count_low=low * population,
        count_high=high * population,
    )


@dataclass
class Scan:
    """What the report needs from the filter output: stratum populations, domain sizes, and the
    stratum / lang / top category of each reviewed id.
    """

    populations: dict[str, int]
    domains: dict[tuple[str, str, str], int]
    docs: dict[str, tuple[str, str, str, str]]
    flagged_by: dict[str, str] = field(default_factory=dict)
    """Per reviewed id: what flagged it, ``rule``, ``screen``, ``rule+screen`` or ``""``."""


def flagged_by(reasons: Sequence[str] | None) -> str:
    """``rule``, ``screen``, ``rule+screen`` or ``""`` from a row's ``reasons`` (``rule:PHONE``,
    ``screen:lgbm``).

    >>> flagged_by(["screen:svc", "rule:PHONE"]), flagged_by(None)
    ('rule+screen', '')
    """
    kinds = {r.split(":", 1)[0] for r in reasons or []}
    return "+".join(k for k in ("rule", "screen") if k in kinds)


def scan_output(path: str | Path, spec: SampleSpec, ids: set[str]) -> Scan:
    """One pass over the stratum columns of the filter output under ``path``."""
    dataset = output_dataset(path)
    populations: dict[str, int] = {}
    domains: dict[tuple[str, str, str], int] = {}
    docs: dict[str, tuple[str, str, str, str]] = {}
    by: dict[str, str] = {}
    columns = ["id", "decision", "lang", "top_category", "scores", "reasons"]
    for batch in dataset.to_batches(columns=columns, filter=decision_filter(spec)):
        strata = batch_strata(batch, spec)
        rows = zip(
            batch.column("id").to_pylist(),
            batch.column("decision").to_pylist(),
            batch.column("lang").to_pylist(),
            batch.column("top_category").to_pylist(),
            strata,
            batch.column("reasons").to_pylist(),
            strict=True,
        )
        for doc_id, dec, lang, cat, s, reasons in rows:
            lang, cat = lang or "-", cat or "-"
            populations[s] = populations.get(s, 0) + 1
            for key in ((dec, "all", ""), (dec, "lang", lang), (dec, "category", cat)):
                domains[key] = domains.get(key, 0) + 1
            if doc_id in ids:
                docs[doc_id] = (s, dec, lang, cat)
                by[doc_id] = flagged_by(reasons)
    return Scan(populations, domains, docs, by)


def scan_with_plan(path: str | Path, plan: SamplePlan, ids: set[str]) -> Scan:
    """Like ``scan_output`` but taking populations from the export's plan: only the reviewed ids are
    read from the output (falls back to a full scan when the strata lack ``lang`` or ``category``).

    Raises ``ReviewError`` when a reviewed document's stratum is not in the plan (output changed).
    """
    if not {"lang", "category"} <= set(plan.spec.dimensions):
        return scan_output(path, plan.spec, ids)
    domains: dict[tuple[str, str, str], int] = {}
    for s, n in plan.populations.items():
        parts = parse_stratum(s)
        dec = parts["decision"]
        for key in (
            (dec, "all", ""),
            (dec, "lang", parts["lang"]),
            (dec, "category", parts["category"]),
        ):
            domains[key] = domains.get(key, 0) + n
    table = output_dataset(path).to_table(
        columns=["id", "decision", "lang", "top_category", "scores", "reasons"],
        filter=decision_filter(plan.spec) & pc.field("id").isin(sorted(ids)),
    )
    docs: dict[str, tuple[str, str, str, str]] = {}
    by: dict[str, str] = {}
    for batch in table.to_batches():
        rows = zip(
            batch.column("id").to_pylist(),
            batch.column("decision").to_pylist(),
            batch.column("lang").to_pylist(),
            batch.column("top_category").to_pylist(),
            batch_strata(batch, plan.spec),
            batch.column("reasons").to_pylist(),
            strict=True,
        )
        for doc_id, dec, lang, cat, s, reasons in rows:
            if s not in plan.populations:
                raise ReviewError(
                    f"id {doc_id!r}: stratum {s!r} is not in the export plan (output changed?)"
                )
            docs[doc_id] = (s, dec, lang or "-", cat or "-")
            by[doc_id] = flagged_by(reasons)
    return Scan(dict(plan.populations), domains, docs, by)


class RateJson(TypedDict):
    """A :class:`Rate` as written to ``estimates.json`` (floats rounded to 6 places)."""

    rate: float | None
    low: float | None
    high: float | None
    reviewed: int
    positives: int
    effective_n: float
    population: int
    count: float | None
    count_low: float | None
    count_high: float | None


class DecisionBlock(TypedDict):
    """Rates of one decision (precision of flagged, miss rate of clean): overall, per language,
    per category."""

    overall: RateJson
    by_lang: dict[str, RateJson]
    by_category: dict[str, RateJson]


class RecallEstimate(TypedDict):
    """Recall from the two decisions' counts, with conservative bounds (``None`` where a bound is
    0/0)."""

    rate: float
    low: float | None
    high: float | None
    note: str


def _round6(v: float | None) -> float | None:
    return round(v, 6) if isinstance(v, float) else v


def _rate_json(r: Rate) -> RateJson:
    return {
        "rate": _round6(r.rate),
        "low": _round6(r.low),
        "high": _round6(r.high),
        "reviewed": r.reviewed,
        "positives": r.positives,
        "effective_n": round(r.effective_n, 6),
        "population": r.population,
        "count": _round6(r.count),
        "count_low": _round6(r.count_low),
        "count_high": _round6(r.count_high),
    }


AUTO = "auto"
AUTO_RULE = (
    "auto: a document is positive when what flagged it holds: its label is SCPI or RELATED (what"
    " the screen flags), or a rule flagged it and the reviewer confirmed the highlighted value is"
    " real personal data (pii=yes); a clean document is a miss when labelled SCPI or RELATED"
)


class _Estimator:
    """The steps of :func:`estimate`: which reviews count as positive, weighted rates per domain."""

    def __init__(
        self, reviews: Mapping[str, Review], scan: Scan, positive: Sequence[str] | str
    ) -> None:
        names = [positive] if isinstance(positive, str) else list(positive)
        self.auto = [p.strip().lower() for p in names] == [AUTO]
        self.positive = SCREEN_POSITIVE if self.auto else tuple(p.strip().upper() for p in names)
        if not self.positive or not set(self.positive) <= set(LABELS):
            raise ValueError(
                f"positive labels must be among {', '.join(LABELS)} (or just '{AUTO}')"
            )
        self.scan = scan
        self.labelled = {i: r for i, r in reviews.items() if r.label}
        self.confirmed = (
            {i: parse_pii(r.row.get("pii"), row_id=i) for i, r in self.labelled.items()}
            if self.auto
            else {}
        )
        self.reviewed_in: dict[str, int] = {}
        for i in self.labelled:
            if i in scan.docs:
                s = scan.docs[i][0]
                self.reviewed_in[s] = self.reviewed_in.get(s, 0) + 1

    def _rule_flagged(self, doc_id: str) -> bool:
        doc = self.scan.docs.get(doc_id)
        return bool(doc and doc[1] == "flagged" and "rule" in self.scan.flagged_by.get(doc_id, ""))

    def is_positive(self, r: Review) -> bool:
        """Labelled positive, or (auto) flagged by a rule whose value the reviewer confirmed."""
        return r.label in self.positive or (
            self.auto and self._rule_flagged(r.id) and bool(self.confirmed.get(r.id))
        )

    def items(
        self, pred: Callable[[str, str, str], bool], hit: Callable[[Review], bool]
    ) -> list[tuple[float, bool]]:
        """``(weight, positive)`` of the reviewed documents whose (decision, lang, category)
        match ``pred``."""
        out = []
        for i, r in self.labelled.items():
            if i not in self.scan.docs:
                continue
            s, dec, lang, cat = self.scan.docs[i]
            if pred(dec, lang, cat):
                out.append((self.scan.populations[s] / self.reviewed_in[s], hit(r)))
        return out

    def rate(
        self, pred: Callable[..., bool], total: int, hit: Callable[..., bool] | None = None
    ) -> RateJson:
        """The weighted rate of positives among matching documents, scaled to ``total``;
        ``pred(decision, lang, category)``, ``hit(review)`` (typed ``...``: callers' lambdas bind
        loop values as defaults)."""
        return _rate_json(weighted_rate(self.items(pred, hit or self.is_positive), total))

    def unanswered_rule_flags(self) -> int:
        """Rule-flagged documents labelled non-positive whose hit nobody confirmed or rejected."""
        return sum(
            1
            for i, r in self.labelled.items()
            if i in self.scan.docs
            and self._rule_flagged(i)
            and r.label not in self.positive
            and self.confirmed.get(i) is None
        )

    def decision_block(self, dec: str, total: int) -> DecisionBlock:
        """Overall, per-language and per-category rates for one decision (precision or miss
        rate)."""
        domains = self.scan.domains
        overall = self.rate(lambda d, lang, c: d == dec, total)
        langs = sorted(k[2] for k in domains if k[0] == dec and k[1] == "lang")
        by_lang = {
            lg: self.rate(
                lambda d, lang, c, lg=lg: d == dec and lang == lg, domains[(dec, "lang", lg)]
            )
            for lg in langs
        }
        if dec == "flagged":
            cats = sorted(k[2] for k in domains if k[0] == dec and k[1] == "category")
            by_category = {
                cg: self.rate(
                    lambda d, lang, c, cg=cg: d == "flagged" and c == cg,
                    domains[("flagged", "category", cg)],
                )
                for cg in cats
            }
        else:
            by_category = {
                cg: self.rate(
                    lambda d, lang, c: d == "clean",
                    total,
                    lambda r, cg=cg: self.is_positive(r) and cg in r.categories,
                )
                for cg in CATEGORIES
            }
        return {"overall": overall, "by_lang": by_lang, "by_category": by_category}


class Estimates(TypedDict):
    """``estimates.json`` (:func:`estimate`): what counts as positive, the ids not found, the two
    decisions' rates and the recall they give."""

    positive_labels: str | list[str]
    positive_rule: str
    ids_not_in_output: list[str]
    rule_flagged_unanswered: NotRequired[int]  # under the "auto" rule only
    precision_flagged: DecisionBlock
    miss_rate_clean: DecisionBlock
    recall_estimate: NotRequired[RecallEstimate]


class _RuleFlags(TypedDict, total=False):
    rule_flagged_unanswered: int


def _recall_estimate(p: RateJson, m: RateJson) -> RecallEstimate | None:
    """Recall from the precision of flagged and the miss rate of clean (counts), with
    conservative bounds."""
    if p["count"] is None or m["count"] is None or p["count"] + m["count"] <= 0:
        return None
    # a Rate with a count has its bounds' counts too (weighted_rate sets the three together)
    p_low, p_high = p["count_low"] or 0.0, p["count_high"] or 0.0
    m_low, m_high = m["count_low"] or 0.0, m["count_high"] or 0.0
    return {
        "rate": round(p["count"] / (p["count"] + m["count"]), 6),
        "low": round(p_low / (p_low + m_high), 6) if p_low + m_high > 0 else None,
        "high": round(p_high / (p_high + m_low), 6) if p_high + m_low > 0 else None,
        "note": "bounds combine the two Wilson intervals (conservative, approximate)",
    }


def estimate(
    reviews: Mapping[str, Review],
    scan: Scan,
    corpus_counts: Mapping[str, int],
    positive: Sequence[str] | str = AUTO,
) -> Estimates:
    """Precision of ``flagged`` and miss rate of ``clean`` overall, per language and per category.

    ``positive`` are the labels that count as sensitive, or ``"auto"`` (default, ``AUTO_RULE``):
    follow what flagged the document, so a rule-flagged phone number the reviewer confirms is a true
    positive even when its topic is NONE. Per category: precision by the screen's ``top_category``
    for flagged; for clean, the share of documents reviewers labelled positive *with* that category.
    Counts are scaled to ``corpus_counts`` (from ``stats.json``) for the totals and to the domain
    sizes found in the output for languages and categories.
    """
    est = _Estimator(reviews, scan, positive)

    def block(dec: str) -> DecisionBlock:
        return est.decision_block(
            dec, int(corpus_counts.get(dec, scan.domains.get((dec, "all", ""), 0)))
        )

    # rule-flagged NONE documents whose hit nobody confirmed or rejected count as false positives
    rule_flags: _RuleFlags = (
        {"rule_flagged_unanswered": est.unanswered_rule_flags()} if est.auto else {}
    )
    result: Estimates = {
        "positive_labels": AUTO if est.auto else list(est.positive),
        "positive_rule": AUTO_RULE if est.auto else f"label in {', '.join(est.positive)}",
        "ids_not_in_output": sorted(i for i in est.labelled if i not in scan.docs),
        **rule_flags,
        "precision_flagged": block("flagged"),
        "miss_rate_clean": block("clean"),
    }
    recall = _recall_estimate(
        result["precision_flagged"]["overall"], result["miss_rate_clean"]["overall"]
    )
    if recall is not None:
        result["recall_estimate"] = recall
    return result
