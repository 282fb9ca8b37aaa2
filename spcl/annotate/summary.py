"""What ``report.json`` measures about the teachers: Cohen's kappa per pair, overall and per screen
category, parse-failure and backend-error rates, tokens and seconds per document — and the agreement
chart.

Kappa uses the project's ``spcl.review.agree.cohen_kappa`` (equal to scikit-learn's
``cohen_kappa_score``) on the documents both teachers of a pair answered with a parsed vote. Per
category, each document counts as ``category present`` or ``absent`` in each teacher's vote (NONE
votes have no category). An undefined kappa (a single value throughout) is reported as ``null``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from spcl.annotate.agreement import TeacherVote
from spcl.review.agree import cohen_kappa
from spcl.review.labels import LABELS
from spcl.screen import CATEGORIES


class CategoryAgreement(TypedDict):
    """One screen category for a teacher pair: kappa and agreement of its presence, and how often
    each teacher voted it."""

    kappa: float | None
    agreement: float | None
    present_a: int
    present_b: int


class PairAgreement(TypedDict):
    """One teacher pair (``report.json``'s ``kappa["a|b"]``): documents both voted on, label kappa
    and observed agreement, and per screen category the same for its presence."""

    documents: int
    label_kappa: float | None
    label_agreement: float | None
    per_category: dict[str, CategoryAgreement]


class TeacherRates(TypedDict):
    """One teacher's rates (``report.json``'s ``teacher_stats``): parse failures, backend errors,
    tokens and seconds per document (``None`` where a rate is 0/0)."""

    documents: int
    parsed: int
    parse_failure_rate: float | None
    parse_failures: dict[str, int]
    backend_error_rate: float | None
    backend_errors: dict[str, int]
    generated_tokens: int
    tokens_per_document: float | None
    seconds_per_document: float | None
    mean_latency_seconds: float | None


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 6)


def pair_agreement(
    votes: Sequence[Sequence[TeacherVote]], teachers: Sequence[str]
) -> dict[str, PairAgreement]:
    """For every teacher pair ``"a|b"``: documents both voted on, label kappa and observed
    agreement, and per screen category the kappa and agreement of presence. ``votes[i]`` are
    document ``i``'s votes, in ``teachers`` order."""
    out: dict[str, PairAgreement] = {}
    for (i, a), (j, b) in itertools.combinations(enumerate(teachers), 2):
        both = [
            (row[i].vote, row[j].vote)
            for row in votes
            if row[i].vote is not None and row[j].vote is not None
        ]
        la = [va.label for va, _ in both if va]
        lb = [vb.label for _, vb in both if vb]
        entry: PairAgreement = {
            "documents": len(both),
            "label_kappa": _num(cohen_kappa(la, lb, LABELS)) if both else None,
            "label_agreement": (
                _num(sum(x == y for x, y in zip(la, lb, strict=True)) / len(both)) if both else None
            ),
            "per_category": {},
        }
        for cat in CATEGORIES:
            ca = [cat in va.categories for va, _ in both if va]
            cb = [cat in vb.categories for _, vb in both if vb]
            entry["per_category"][cat] = {
                "kappa": _num(cohen_kappa(ca, cb, [False, True])) if both else None,
                "agreement": (
                    _num(sum(x == y for x, y in zip(ca, cb, strict=True)) / len(both))
                    if both
                    else None
                ),
                "present_a": sum(ca),
                "present_b": sum(cb),
            }
        out[f"{a}|{b}"] = entry
    return out


def teacher_report(stats: Mapping[str, Any]) -> TeacherRates:
    """Rates from one teacher's summed counts: parse-failure rate (of the outputs it returned),
    backend-error rate (of the documents sent), tokens and seconds per document."""
    docs = stats.get("documents", 0)
    outputs = stats.get("outputs", 0)
    errors = sum(stats.get("backend_errors", {}).values())
    return {
        "documents": docs,
        "parsed": stats.get("parsed", 0),
        "parse_failure_rate": (
            _num((outputs - stats.get("parsed", 0)) / outputs) if outputs else None
        ),
        "parse_failures": dict(sorted(stats.get("parse_failures", {}).items())),
        "backend_error_rate": _num(errors / docs) if docs else None,
        "backend_errors": dict(sorted(stats.get("backend_errors", {}).items())),
        "generated_tokens": stats.get("generated_tokens", 0),
        "tokens_per_document": _num(stats.get("generated_tokens", 0) / docs) if docs else None,
        "seconds_per_document": _num(stats.get("wall_seconds", 0.0) / docs) if docs else None,
        "mean_latency_seconds": _num(stats.get("latency_seconds", 0.0) / docs) if docs else None,
    }


def plot_agreement(pairs: Mapping[str, PairAgreement], path: str | Path) -> Path:
    """A bar chart of label and per-category kappa for every teacher pair (undefined kappa drawn
    as 0, hatched)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = ["label", *CATEGORIES]
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(groups), 3.6), dpi=110)
    width = 0.8 / max(1, len(pairs))
    for k, (name, entry) in enumerate(pairs.items()):
        values = [entry["label_kappa"]] + [entry["per_category"][c]["kappa"] for c in CATEGORIES]
        xs = [g + (k - (len(pairs) - 1) / 2) * width for g in range(len(groups))]
        heights = [v if v is not None else 0.0 for v in values]
        bars = ax.bar(xs, heights, width, label=f"{name} (n={entry['documents']})")
        for bar, v in zip(bars, values, strict=True):
            if v is None:
                bar.set_hatch("//")
    ax.axhline(0.6, color="grey", lw=0.8, ls="--")
    ax.axhline(0.8, color="grey", lw=0.8, ls=":")
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylim(min(-0.2, ax.get_ylim()[0]), 1.05)
    ax.set_ylabel("Cohen's kappa")
    ax.set_title(
        "Teacher agreement per category (dashed 0.6 good, dotted 0.8 excellent)", fontsize=9
    )
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
