"""Cross-validation of the screen on real labelled data, beside the char n-gram TF-IDF + LinearSVC
baseline.

Folds are stratified by language and label and grouped by near-duplicate clusters
(:func:`spcl.screen.train.near_duplicate_groups`), so near-duplicates never straddle train and test.
Augmentation records (synthetic) are added to every training fold and never evaluated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NotRequired, TypedDict

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedGroupKFold
from sklearn.svm import LinearSVC

from spcl.screen.model import CATEGORIES
from spcl.screen.train import (
    Record,
    TrainSettings,
    fit_screen,
    near_duplicate_groups,
    threshold_for_recall,
)

log = logging.getLogger(__name__)


@dataclass
class CVResult:
    """Out-of-fold predictions of a cross-validation on real records (arrays aligned with
    ``records``)."""

    records: list[Record]
    fold: np.ndarray
    lgbm_score: np.ndarray
    lgbm_flag: np.ndarray
    svc_score: np.ndarray
    svc_flag: np.ndarray
    flag: np.ndarray
    categories: dict[str, np.ndarray]
    baseline_score: np.ndarray
    baseline_flag: np.ndarray
    baseline_flag_at_recall: np.ndarray

    @property
    def labels(self) -> np.ndarray:
        """Gold labels."""
        return np.array([r.label for r in self.records])

    @property
    def langs(self) -> np.ndarray:
        """Languages."""
        return np.array([r.lang for r in self.records])


class FlagMetrics(TypedDict):
    """Quality of a set of flags against labels (:func:`flag_metrics`); NaN where no such label
    was scored."""

    precision: float
    recall: float
    f1: float
    scpi_recall: float
    related_recall: float
    none_flag_rate: float
    n: int


def flag_metrics(
    flag: np.ndarray, labels: np.ndarray, positive: Sequence[str] = ("SCPI", "RELATED")
) -> FlagMetrics:
    """Topic precision/recall/F1 (positive labels vs NONE), SCPI recall, NONE flag rate."""
    flag = np.asarray(flag, bool)
    y = np.isin(labels, positive)
    tp = float((flag & y).sum())
    prec = tp / max(float(flag.sum()), 1.0)
    rec = tp / max(float(y.sum()), 1.0)
    f1 = 2 * prec * rec / max(prec + rec, 1e-12)
    scpi = labels == "SCPI"
    none = labels == "NONE"
    return {
        "precision": round(prec, 4),
        "recall": round(rec, 4),
        "f1": round(f1, 4),
        "scpi_recall": round(float(flag[scpi].mean()) if scpi.any() else float("nan"), 4),
        "related_recall": round(
            float(flag[labels == "RELATED"].mean()) if (labels == "RELATED").any() else 0, 4
        ),
        "none_flag_rate": round(float(flag[none].mean()) if none.any() else float("nan"), 4),
        "n": int(flag.size),
    }


def baseline_scores(
    train_texts: list[str], train_y: np.ndarray, test_texts: list[str], seed: int
) -> np.ndarray:
    """The baseline: character n-gram (1–3, word-bounded) TF-IDF + LinearSVC; returns test
    margins."""
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), sublinear_tf=True, min_df=1)
    xtr = vec.fit_transform(train_texts)
    svc = LinearSVC(C=1.0, random_state=seed, max_iter=5000).fit(xtr, train_y)
    return svc.decision_function(vec.transform(test_texts)).astype(np.float32)


def cross_validate(
    real: Sequence[Record],
    extra: Sequence[Record] = (),
    settings: TrainSettings | None = None,
    folds: int = 5,
    baseline_recall: float = 0.93,
    on_fold: Callable[[int], None] | None = None,
    on_fit: Callable[[int], None] | None = None,
) -> CVResult:
    """Grouped stratified ``folds``-fold CV of the full screen on ``real``; ``extra`` joins every
    train fold.

    ``on_fold`` (e.g. a progress bar) is told the number of training documents of each finished
    fold, ``on_fit`` those of every model fit inside it (see :func:`fit_screen`).

    The baseline is trained on the real training fold only (as in the issue's reference) and scored
    at its default margin 0 and at the margin that reaches ``baseline_recall`` SCPI recall on the
    train fold (out-of-fold is not needed to show how many NONE documents it must flag).
    """
    settings = settings or TrainSettings()
    real = list(real)
    n = len(real)
    strata = np.array([f"{r.lang}:{r.label}" for r in real])
    groups = near_duplicate_groups([r.text for r in real])
    out: dict[str, np.ndarray] = {
        "fold": np.zeros(n, np.int64),
        "lgbm_score": np.zeros(n, np.float32),
        "lgbm_flag": np.zeros(n, bool),
        "svc_score": np.zeros(n, np.float32),
        "svc_flag": np.zeros(n, bool),
        "flag": np.zeros(n, bool),
        "baseline_score": np.zeros(n, np.float32),
        "baseline_flag_at_recall": np.zeros(n, bool),
    }
    cats = {c: np.zeros(n, np.float32) for c in CATEGORIES}
    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=settings.seed)
    for k, (tr, te) in enumerate(splitter.split(np.zeros(n), strata, groups)):
        train = [real[i] for i in tr] + list(extra)
        screen = fit_screen(train, settings, on_fit=on_fit)
        test_texts = [real[i].text for i in te]
        res = screen.predict(test_texts, [real[i].lang for i in te])
        out["fold"][te] = k
        for key in ("lgbm_score", "lgbm_flag", "svc_score", "svc_flag", "flag"):
            out[key][te] = getattr(res, key)
        for c in CATEGORIES:
            cats[c][te] = res.categories[c]
        y_tr = np.array([real[i].label in settings.positive_labels for i in tr])
        tr_texts = [real[i].text for i in tr]
        out["baseline_score"][te] = baseline_scores(tr_texts, y_tr, test_texts, settings.seed)
        # Margin reaching the SCPI recall target, estimated on inner out-of-fold margins of the
        # train fold.
        inner = np.zeros(len(tr), np.float32)
        inner_split = StratifiedGroupKFold(n_splits=5, shuffle=True, random_state=settings.seed)
        for itr, ite in inner_split.split(np.zeros(len(tr)), strata[tr], groups[tr]):
            inner[ite] = baseline_scores(
                [tr_texts[i] for i in itr], y_tr[itr], [tr_texts[i] for i in ite], settings.seed
            )
        scpi_tr = np.array([real[i].label == "SCPI" for i in tr])
        t = threshold_for_recall(inner, scpi_tr, baseline_recall)
        out["baseline_flag_at_recall"][te] = out["baseline_score"][te] >= t
        log.info("CV fold %d/%d done", k + 1, folds)
        if on_fold is not None:
            on_fold(len(train))
    return CVResult(
        records=real,
        categories=cats,
        baseline_flag=out["baseline_score"] >= 0,
        **out,
    )


class CategoryRecall(TypedDict):
    """Documents of one screen category, the union's recall on them and how well the category score
    ranks them (``score_auc``: only when some documents lack the category)."""

    n: int
    union_recall: float
    score_auc: NotRequired[float]


class CVReport(TypedDict):
    """``cv_report.json`` and the model card's ``cv_metrics`` (:func:`cv_report`; ``spcl train``
    adds ``folds`` and ``seconds``)."""

    overall: dict[str, FlagMetrics]
    per_lang: dict[str, dict[str, FlagMetrics]]
    union_recall_gain: float
    union_scpi_recall_gain: float
    per_category: dict[str, CategoryRecall]
    confusion_union: dict[str, dict[str, int]]
    positives: int
    folds: NotRequired[int]
    seconds: NotRequired[float]


def cv_report(cv: CVResult) -> CVReport:
    """Metrics of a :class:`CVResult`: overall and per language for LightGBM, SVC, union and
    baseline."""
    labels, langs = cv.labels, cv.langs
    systems = {
        "lgbm": cv.lgbm_flag,
        "svc": cv.svc_flag,
        "union": cv.flag,
        "baseline_char_svc": cv.baseline_flag,
        "baseline_char_svc_at_scpi_recall_0.93": cv.baseline_flag_at_recall,
    }
    overall: dict[str, FlagMetrics] = {}
    per_lang: dict[str, dict[str, FlagMetrics]] = {}
    for name, flag in systems.items():
        overall[name] = flag_metrics(flag, labels)
        for lang in sorted(set(langs.tolist())):
            m = langs == lang
            per_lang.setdefault(lang, {})[name] = flag_metrics(flag[m], labels[m])
    best_single = max(overall["lgbm"]["recall"], overall["svc"]["recall"])
    best_single_scpi = max(overall["lgbm"]["scpi_recall"], overall["svc"]["scpi_recall"])
    per_cat: dict[str, CategoryRecall] = {}
    for c in CATEGORIES:
        m = np.array([c in r.categories for r in cv.records])
        if m.any():
            per_cat[c] = {"n": int(m.sum()), "union_recall": round(float(cv.flag[m].mean()), 4)}
            if (~m).any():
                # How well the category score ranks this category's documents above all others.
                per_cat[c]["score_auc"] = round(float(roc_auc_score(m, cv.categories[c])), 4)
    y = np.isin(labels, ("SCPI", "RELATED"))
    return {
        "overall": overall,
        "per_lang": per_lang,
        "union_recall_gain": round(overall["union"]["recall"] - best_single, 4),
        "union_scpi_recall_gain": round(overall["union"]["scpi_recall"] - best_single_scpi, 4),
        "per_category": per_cat,
        "confusion_union": {
            lab: {
                "flagged": int((cv.flag & (labels == lab)).sum()),
                "clean": int((~cv.flag & (labels == lab)).sum()),
            }
            for lab in ("SCPI", "RELATED", "NONE")
        },
        "positives": int(y.sum()),
    }
