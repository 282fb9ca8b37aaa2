"""Inter-annotator agreement: Cohen's kappa (two reviewers), Fleiss' kappa (three or more), per
category, a confusion matrix, the ids reviewers disagree on, the verdict, and adjudication.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from spcl.errors import RunFailed
from spcl.review.labels import CATEGORIES, LABELS
from spcl.review.reviews import Review

GOOD = 0.6
EXCELLENT = 0.8


def cohen_kappa(
    a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None = None
) -> float:
    """Cohen's kappa of two raters (``sklearn.metrics.cohen_kappa_score``); NaN when undefined (no
    items, or both raters used one and the same label for everything).

    >>> round(cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]), 3)
    0.5
    """
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    cats = list(labels) if labels is not None else sorted(set(a) | set(b), key=str)
    keep = [(x, y) for x, y in zip(a, b, strict=True) if x in cats and y in cats]
    if not keep:
        return math.nan
    # optional heavy dependency: only where kappa is computed
    from sklearn.metrics import cohen_kappa_score

    xs, ys = [str(x) for x, _ in keep], [str(y) for _, y in keep]
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")  # sklearn warns where kappa is undefined; NaN says so
        k = float(cohen_kappa_score(xs, ys, labels=[str(c) for c in cats]))
    return k if math.isfinite(k) else math.nan


def confusion_matrix(
    a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable]
) -> np.ndarray:
    """Counts ``m[i, j]`` of items rater ``a`` put in ``labels[i]`` and rater ``b`` in ``labels[j]``
    (items with other labels are left out; ``sklearn.metrics.confusion_matrix``)."""
    keep = [(str(x), str(y)) for x, y in zip(a, b, strict=True) if x in labels and y in labels]
    if not keep:
        return np.zeros((len(labels), len(labels)), dtype=np.int64)
    from sklearn.metrics import confusion_matrix as sk_confusion_matrix  # optional heavy dependency

    xs, ys = zip(*keep, strict=True)
    return sk_confusion_matrix(xs, ys, labels=[str(c) for c in labels]).astype(np.int64)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from an ``items × categories`` table of how many raters chose each category.

    Every item must have the same number of raters (at least two).
    """
    table = np.asarray(counts, dtype=float)
    raters = table.sum(axis=1)
    if (
        table.ndim != 2
        or table.shape[0] == 0
        or not np.allclose(raters, raters[0])
        or raters[0] < 2
    ):
        raise ValueError("every item needs the same number (>= 2) of ratings")
    n_items, r = table.shape[0], raters[0]
    p_j = table.sum(axis=0) / (n_items * r)
    p_i = ((table * table).sum(axis=1) - r) / (r * (r - 1))
    p_bar, pe = p_i.mean(), float((p_j * p_j).sum())
    if math.isclose(pe, 1.0):
        return math.nan
    return float((p_bar - pe) / (1.0 - pe))


def fleiss_from_ratings(ratings: Sequence[Sequence[Hashable]], labels: Sequence[Hashable]) -> float:
    """Fleiss' kappa from ``items × raters`` ratings (each row one item's labels)."""
    index = {c: i for i, c in enumerate(labels)}
    counts = np.zeros((len(ratings), len(labels)), dtype=np.int64)
    for i, row in enumerate(ratings):
        for v in row:
            counts[i, index[v]] += 1
    return fleiss_kappa(counts)


def kappa(ratings: Sequence[Sequence[Hashable]], labels: Sequence[Hashable]) -> float:
    """Cohen's kappa for two raters, Fleiss' for more; ``ratings`` is ``items × raters``."""
    if not ratings:
        return math.nan
    if len(ratings[0]) == 2:
        return cohen_kappa([r[0] for r in ratings], [r[1] for r in ratings], labels)
    return fleiss_from_ratings(ratings, labels)


LANDIS_KOCH: tuple[tuple[float, str], ...] = (
    (0.0, "slight"),
    (0.2, "fair"),
    (0.4, "moderate"),
    (0.6, "substantial"),
    (0.8, "almost perfect"),
)
"""Landis & Koch (1977) bands by their lower edge (half-open: 0.6 is substantial); below 0 is
poor."""


def verdict(k: float) -> str:
    """The Landis–Koch band of a kappa and what to do: below 0.6 (``GOOD``) rewrite the guideline.

    >>> verdict(0.55), verdict(0.85)
    ('moderate (Landis–Koch): below 0.6, rewrite the guideline and label again', 'almost perfect
    (Landis–Koch)')
    """
    if math.isnan(k):
        return "undefined (a single label throughout): review more varied documents"
    band = "poor"
    for edge, name in LANDIS_KOCH:
        if k >= edge:
            band = name
    text = f"{band} (Landis–Koch)"
    if k < GOOD:
        text += f": below {GOOD:g}, rewrite the guideline and label again"
    return text


def _nan_to_none(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


class AgreementJson(TypedDict):
    """``agreement.json``: an :class:`Agreement` as written, in field order."""

    raters: list[str]
    items: int
    method: str
    kappa: float | None
    verdict: str
    kappa_scpi_vs_rest: float | None
    per_category: dict[str, float | None]
    labels: list[str]
    confusion: list[list[int]]
    pairwise: dict[str, float | None]
    label_disagreements: list[str]
    category_disagreements: list[str]
    not_rated_by_all: list[str]


@dataclass
class Agreement:
    """Everything ``agreement`` measured (ids only, no text)."""

    raters: list[str]
    items: int
    method: str
    kappa: float | None
    verdict: str
    kappa_scpi_vs_rest: float | None
    per_category: dict[str, float | None]
    labels: list[str]
    confusion: list[list[int]]
    pairwise: dict[str, float | None]
    label_disagreements: list[str]
    category_disagreements: list[str]
    not_rated_by_all: list[str] = field(default_factory=list)

    def to_json(self) -> AgreementJson:
        """A plain dict for ``agreement.json`` (copies: later changes to this object do not show
        in it)."""
        return {
            "raters": list(self.raters),
            "items": self.items,
            "method": self.method,
            "kappa": self.kappa,
            "verdict": self.verdict,
            "kappa_scpi_vs_rest": self.kappa_scpi_vs_rest,
            "per_category": dict(self.per_category),
            "labels": list(self.labels),
            "confusion": [list(row) for row in self.confusion],
            "pairwise": dict(self.pairwise),
            "label_disagreements": list(self.label_disagreements),
            "category_disagreements": list(self.category_disagreements),
            "not_rated_by_all": list(self.not_rated_by_all),
        }


def agreement(reviews: Mapping[str, Mapping[str, Review]]) -> Agreement:
    """Agreement of two or more reviewers (``{reviewer name: {id: Review}}``) on the ids all
    labelled.

    The confusion matrix sums every reviewer pair (rows: the earlier reviewer). Per-category kappa
    treats each category as present/absent per document.
    """
    names = list(reviews)
    if len(names) < 2:
        raise ValueError("agreement needs at least two reviewers")
    all_ids = sorted(set().union(*(set(r) for r in reviews.values())))
    common = [i for i in all_ids if all(i in reviews[n] and reviews[n][i].label for n in names)]
    not_all = [i for i in all_ids if i not in set(common)]
    labels = [[reviews[n][i].label for n in names] for i in common]
    cats = [[reviews[n][i].categories for n in names] for i in common]
    k = kappa(labels, LABELS) if common else math.nan
    scpi = [["SCPI" if x == "SCPI" else "REST" for x in row] for row in labels]
    per_cat = {
        c: _nan_to_none(
            kappa([[c in s for s in row] for row in cats], [False, True]) if common else math.nan
        )
        for c in CATEGORIES
    }
    cm = np.zeros((len(LABELS), len(LABELS)), dtype=np.int64)
    pairwise = {}
    for i, j in itertools.combinations(range(len(names)), 2):
        a, b = [row[i] for row in labels], [row[j] for row in labels]
        cm += confusion_matrix(a, b, LABELS)
        pairwise[f"{names[i]}~{names[j]}"] = _nan_to_none(
            cohen_kappa(a, b, LABELS) if a else math.nan
        )
    return Agreement(
        raters=names,
        items=len(common),
        method="cohen" if len(names) == 2 else "fleiss",
        kappa=_nan_to_none(k),
        verdict=verdict(k),
        kappa_scpi_vs_rest=_nan_to_none(kappa(scpi, ["SCPI", "REST"]) if common else math.nan),
        per_category=per_cat,
        labels=list(LABELS),
        confusion=cm.tolist(),
        pairwise=pairwise,
        label_disagreements=[i for i, row in zip(common, labels, strict=True) if len(set(row)) > 1],
        category_disagreements=[
            i for i, row in zip(common, cats, strict=True) if len(set(row)) > 1
        ],
        not_rated_by_all=not_all,
    )


class PartialReview(RunFailed, ValueError):
    """Reviewer files do not cover the same labelled documents; the message names the ids."""


@dataclass(frozen=True)
class Coverage:
    """Which documents every reviewer labelled: ``ids`` seen in any file, ``labelled_by_all``, and
    per reviewer the ids they left out (absent from their file or with an empty label)."""

    ids: int
    labelled_by_all: int
    missing: dict[str, list[str]]

    def line(self) -> str:
        """``coverage: 57 of 60 documents labelled by every reviewer (95.0 %)``."""
        share = 100.0 * self.labelled_by_all / self.ids if self.ids else 0.0
        return (
            f"coverage: {self.labelled_by_all} of {self.ids} documents labelled by every reviewer"
            f" ({share:.1f} %)"
        )


def coverage(reviews: Mapping[str, Mapping[str, Review]]) -> Coverage:
    """The :class:`Coverage` of reviewer files (``{reviewer: {id: Review}}``)."""
    all_ids = sorted(set().union(*(set(r) for r in reviews.values()))) if reviews else []
    missing = {n: [i for i in all_ids if i not in r or not r[i].label] for n, r in reviews.items()}
    left_out = set().union(*(set(m) for m in missing.values())) if missing else set()
    return Coverage(
        len(all_ids), len(all_ids) - len(left_out), {n: m for n, m in missing.items() if m}
    )


def _some(ids: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" … and {len(ids) - limit} more" if len(ids) > limit else "")


def check_coverage(
    reviews: Mapping[str, Mapping[str, Review]], *, allow_partial: bool = False
) -> Coverage:
    """The coverage, or :class:`PartialReview` naming the ids: always when no document is labelled
    by every reviewer (disjoint files, empty labels); when some are left out by a reviewer, unless
    ``allow_partial`` (agreement is then measured on the documents all labelled)."""
    cov = coverage(reviews)
    if cov.labelled_by_all == 0:
        raise PartialReview(
            f"no document is labelled by every reviewer ({cov.ids} ids in the files; "
            "files for different documents, or labels left empty): nothing to measure"
        )
    if cov.missing and not allow_partial:
        doc_ids = {k: r.id for m in reviews.values() for k, r in m.items()}
        shown = {
            k: doc_ids[k] if doc_ids[k] == k else f"{doc_ids[k]} (row {k[:9]})" for k in doc_ids
        }
        parts = [
            f"{n} left {len(m)} unlabelled or absent: {_some([shown[k] for k in m])}"
            for n, m in cov.missing.items()
        ]
        raise PartialReview(
            f"{cov.line()}; "
            + "; ".join(parts)
            + "; pass --allow-partial to measure agreement on the documents all labelled"
        )
    return cov


ADJUDICATION_POLICIES: tuple[str, ...] = ("blank", "sensitive")


def adjudicate(
    reviews: Mapping[str, Mapping[str, Review]], policy: str = "blank"
) -> list[dict[str, Any]]:
    """Merge reviewers' files into rows for ``adjudicated.csv``.

    Where all reviewers agree the label and categories are kept. Disagreements are left blank for a
    person to decide (``policy="blank"``) or resolved toward the more sensitive label with the union
    of categories (``policy="sensitive"``, as for ``scpi-real-v1``). Each row keeps the first
    reviewer's export columns and adds ``agreed`` (``yes``/``no``).
    """
    if policy not in ADJUDICATION_POLICIES:
        raise ValueError(f"policy must be one of {', '.join(ADJUDICATION_POLICIES)}")
    names = list(reviews)
    first = reviews[names[0]]
    rows = []
    for doc_id in first:
        votes = [
            reviews[n][doc_id] for n in names if doc_id in reviews[n] and reviews[n][doc_id].label
        ]
        row = dict(first[doc_id].row)
        row["id"] = first[doc_id].id  # the document id (the mapping is keyed by row key)
        labels = {v.label for v in votes}
        cats = {v.categories for v in votes}
        agreed = len(votes) == len(names) and len(labels) == 1 and len(cats) == 1
        row["agreed"] = "yes" if agreed else "no"
        row["note"] = " | ".join(
            f"{n}: {reviews[n][doc_id].note}"
            for n in names
            if doc_id in reviews[n] and reviews[n][doc_id].note
        )
        if agreed or (policy == "sensitive" and votes):
            label = min(labels, key=LABELS.index)
            union = sorted(set().union(*cats)) if label != "NONE" else []
            row["label"], row["categories"] = label, ",".join(union)
        else:
            row["label"], row["categories"] = "", ""
        rows.append(row)
    return rows
