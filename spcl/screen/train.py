"""Training of the screen: SentencePiece, IDF, LinearSVC, chi²-selected LightGBM, category models.

Thresholds come from out-of-fold scores (grouped, stratified k-fold inside the training data): each
model's threshold is the highest score that still reaches ``target_recall`` on the real
(non-synthetic) positive documents of the folds. The final models are then fitted on all the
training data.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import StratifiedGroupKFold

from spcl import __version__
from spcl.labels import LABELS
from spcl.screen.features import Featurizer, fit_idf, tfidf
from spcl.screen.fit_models import fit_categories, fit_models, score_models
from spcl.screen.lexicon import default_lexicon
from spcl.screen.model import CATEGORIES, Screen
from spcl.screen.thresholds import (
    choose_thresholds,
    min_positives,
    threshold_for_recall,
    thresholds_for_fewest_none,
    thresholds_for_none_budget,
    tune_thresholds,
)
from spcl.screen.tokenize import JA_TOKENS, Tokenizers, train_sentencepiece
from spcl.screen.train_data import (
    LGBM_OFF,
    Record,
    TrainSettings,
    lang_values,
    near_duplicate_groups,
    read_records,
    record_from_dict,
    source_group,
)

log = logging.getLogger(__name__)

__all__ = [
    "LGBM_OFF",
    "Record",
    "TrainSettings",
    "choose_thresholds",
    "fit_screen",
    "lang_values",
    "min_positives",
    "near_duplicate_groups",
    "oof_thresholds",
    "read_records",
    "record_from_dict",
    "source_group",
    "threshold_for_recall",
    "thresholds_for_fewest_none",
    "thresholds_for_none_budget",
    "too_few_positives",
    "tune_thresholds",
]
"""The screen's training API (data and threshold choice live in :mod:`spcl.screen.train_data` and
:mod:`spcl.screen.thresholds`; their names are re-exported here)."""


@dataclass
class _Data:
    counts: sp.csr_matrix
    lex: np.ndarray
    y: np.ndarray
    cats: np.ndarray
    real: np.ndarray
    weight: np.ndarray
    target: np.ndarray
    strata: np.ndarray
    groups: np.ndarray
    langs: np.ndarray


def _prepare(records: Sequence[Record], featurizer: Featurizer, settings: TrainSettings) -> _Data:
    texts = [r.text for r in records]
    langs = [r.lang for r in records]
    y = np.array([r.label in settings.positive_labels for r in records], bool)
    cats = np.array([[c in r.categories for c in CATEGORIES] for r in records], bool).reshape(-1, 4)
    real = np.array([not r.synthetic for r in records], bool)
    weak = np.array([r.weak for r in records], bool)
    target = np.array([r.label in settings.threshold_labels for r in records], bool) & real
    strata = np.array([f"{r.lang}:{r.label}:{int(r.synthetic)}" for r in records])
    groups = near_duplicate_groups(texts)
    # real records fold by kind of text; extras by near-duplicates
    if settings.threshold_split == "source":
        groups = np.array(
            [
                f"src:{source_group(r)}" if not r.synthetic else f"dup:{g}"
                for r, g in zip(records, groups.tolist(), strict=True)
            ],
            dtype=object,
        )
    elif settings.threshold_split != "cv":
        raise ValueError(
            f"threshold_split must be 'cv' or 'source', not {settings.threshold_split!r}"
        )
    counts, lex = featurizer.featurize(texts, langs)
    return _Data(
        counts=counts,
        lex=lex,
        y=y,
        cats=cats,
        real=real,
        weight=np.where(
            real, 1.0, np.where(weak, settings.weak_weight, settings.synthetic_weight)
        ).astype(np.float64),
        target=target,
        strata=strata,
        groups=groups,
        langs=np.array(langs, dtype=object),
    )


def oof_thresholds(
    data: _Data,
    settings: TrainSettings,
    hashed_width: int,
    on_fit: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Out-of-fold scores on the training data and the per-model thresholds reaching the target
    recall (``on_fit`` is told the training documents of each fold's fit)."""
    n = data.y.size
    lg_oof = np.zeros(n, np.float32)
    svc_oof = np.zeros(n, np.float32)
    fold = np.zeros(n, np.int16)
    folds = StratifiedGroupKFold(
        n_splits=settings.threshold_folds, shuffle=True, random_state=settings.seed
    )
    for k, (tr, te) in enumerate(folds.split(np.zeros(n), data.strata, data.groups)):
        fold[te] = k
        idf = fit_idf(data.counts[tr])
        xtr = tfidf(data.counts[tr], idf, data.lex[tr], settings.features.sublinear_tf)
        xte = tfidf(data.counts[te], idf, data.lex[te], settings.features.sublinear_tf)
        w, b, cols, model = fit_models(xtr, data.y[tr], data.weight[tr], settings, hashed_width)
        lg_oof[te], svc_oof[te] = score_models(xte, w, b, cols, model)
        if on_fit is not None:
            on_fit(len(tr))
    lg_t, svc_t, per_lang = choose_thresholds(
        lg_oof, svc_oof, data.target, data.y, data.real, data.langs, settings
    )
    return {
        "lgbm": lg_t,
        "svc": svc_t,
        "lang": per_lang,
        "oof_lgbm": lg_oof,
        "oof_svc": svc_oof,
        "oof_fold": fold,
    }


def too_few_positives(records: Sequence[Record], settings: TrainSettings) -> list[str]:
    """Warnings (counts only) where the real documents of ``threshold_labels`` are fewer than
    :func:`min_positives` for ``target_recall``: overall, and per language with per-language
    thresholds (such a language falls back to the global thresholds)."""
    need = min_positives(settings.target_recall)
    labels = "+".join(settings.threshold_labels)
    counts: dict[str, int] = {}
    for r in records:
        if not r.synthetic and r.label in settings.threshold_labels:
            counts[r.lang] = counts.get(r.lang, 0) + 1
    total = sum(counts.values())
    out = []
    if total < need:
        out.append(
            f"only {total} real {labels} documents for target recall {settings.target_recall} (at"
            f" least {need} advised): one or two documents decide the thresholds; add labelled data"
            " or lower --target-recall"
        )
    if settings.per_lang_thresholds:
        short = {
            lang: counts.get(lang, 0)
            for lang in sorted(settings.per_lang_thresholds)
            if counts.get(lang, 0) < need
        }
        if short:
            out.append(
                "per-language thresholds: "
                + ", ".join(f"{lang} has {n}" for lang, n in short.items())
                + f" real {labels} documents (< {need}); those languages use the global thresholds"
            )
    return out


def _sha256_records(records: Sequence[Record]) -> str:
    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps([r.id, r.text, r.lang, r.label, list(r.categories), r.source]).encode())
        h.update(b"\n")
    return h.hexdigest()


def _training_card(
    records: Sequence[Record], settings: TrainSettings, lgbm_columns: int, seconds: float
) -> dict[str, Any]:
    """The model card's training part: data counts and hash, settings, threshold rule,
    tokenizers, models."""
    counts_by: dict[str, int] = {}
    for r in records:
        key = f"{'synthetic' if r.synthetic else 'real'}:{r.lang}:{r.label}"
        counts_by[key] = counts_by.get(key, 0) + 1
    return {
        "spcl_version": __version__,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "training_seconds": round(seconds, 2),
        "label_set": list(LABELS),
        "positive_labels": list(settings.positive_labels),
        "train_settings": settings.to_json(),
        "training_records": len(records),
        "training_records_sha256": _sha256_records(records),
        "training_counts": dict(sorted(counts_by.items())),
        "threshold_rule": (
            f"mode {settings.threshold_mode}: recall {settings.target_recall} of real "
            f"{'+'.join(settings.threshold_labels)} documents, out-of-fold "
            + (
                f"({settings.threshold_folds} folds of whole source groups: scores of models that"
                " never saw the document's kind of text)"
                if settings.threshold_split == "source"
                else f"({settings.threshold_folds}-fold grouped stratified CV on the training data)"
            )
            + (
                f"; own thresholds for {', '.join(settings.per_lang_thresholds)} where a language"
                f" has ≥ {min_positives(settings.target_recall)} such documents"
                if settings.per_lang_thresholds
                else ""
            )
            + (
                f"; global thresholds tuned on the {', '.join(settings.global_threshold_langs)}"
                " documents"
                if settings.global_threshold_langs
                else ""
            )
            + (
                f"; {', '.join(settings.fewest_none_langs)}: the pair with the fewest real NONE"
                " flagged at the target"
                if settings.fewest_none_langs
                else ""
            )
            + (
                f"; {', '.join(settings.lang_svc_only)} flagged by the SVC alone (LightGBM"
                f" threshold {LGBM_OFF})"
                if settings.lang_svc_only
                else ""
            )
        ),
        "tokenizers": {
            "ja": JA_TOKENS[settings.features.mecab_dic],
            "ko/en/other": (
                "SentencePiece unigram trained on the training texts (spm.model), lower-cased"
            ),
        },
        "models": {
            "svc": (
                f"LinearSVC(C={settings.svc_c}, class_weight=balanced) on all hashed + lexicon"
                " columns"
                + (
                    ", NB-SVM: columns scaled by their log-count ratio (alpha"
                    f" {settings.svc_nb_alpha}), stored weights r·w"
                    if settings.svc_nb_alpha > 0
                    else ""
                )
            ),
            "lgbm": (
                f"LightGBM {settings.lgbm_trees} trees, {settings.lgbm_leaves} leaves on chi² top "
                f"{settings.lgbm_top_k} hashed columns + lexicon columns ({lgbm_columns} columns)"
            ),
            "categories": "one-vs-rest LogisticRegression per category (liblinear, balanced)",
        },
    }


def fit_screen(
    records: Sequence[Record],
    settings: TrainSettings | None = None,
    lexicon: dict[str, dict[str, list[str]]] | None = None,
    on_fit: Callable[[int], None] | None = None,
) -> Screen:
    """Train a complete screen on labelled records; deterministic for the same records and settings.

    The returned :class:`Screen` predicts exactly as the artifact it saves to. ``on_fit`` (a
    progress bar) is told the training documents of every model fit: ``threshold_folds`` out-of-fold
    fits, then the final one.
    """
    settings = settings or TrainSettings()
    if not records:
        raise ValueError("no training records")
    t0 = time.perf_counter()
    lexicon = lexicon if lexicon is not None else default_lexicon()
    fs = settings.features
    sp_model = train_sentencepiece([r.text for r in records], fs.sp_vocab_size, settings.seed)
    featurizer = Featurizer(fs, Tokenizers(sp_model), lexicon)
    data = _prepare(records, featurizer, settings)
    if data.y.all() or not data.y.any():
        raise ValueError("training data needs both positive and negative documents")
    hashed_width = 1 << fs.bits
    th = oof_thresholds(data, settings, hashed_width, on_fit)
    idf = fit_idf(data.counts)
    x = tfidf(data.counts, idf, data.lex, fs.sublinear_tf)
    w, b, cols, model = fit_models(x, data.y, data.weight, settings, hashed_width)
    if on_fit is not None:
        on_fit(len(records))
    cat_w, cat_b = fit_categories(x, data.cats, data.weight, settings)
    arrays = {
        "idf": idf,
        "svc_coef": w,
        "svc_intercept": np.array([b], np.float32),
        "lgbm_columns": cols,
        "cat_coef": cat_w,
        "cat_intercept": cat_b,
    }
    card = _training_card(records, settings, int(cols.size), time.perf_counter() - t0)
    screen = Screen(
        settings=fs,
        sp_model=sp_model,
        lexicon=lexicon,
        arrays=arrays,
        lgbm_model=model,
        thresholds={"lgbm": th["lgbm"], "svc": th["svc"]},
        lang_thresholds=th["lang"],
        card=card,
    )
    screen.card["training_seconds"] = round(time.perf_counter() - t0, 2)
    screen.oof_scores = {"lgbm": th["oof_lgbm"], "svc": th["oof_svc"], "fold": th["oof_fold"]}
    log.info(
        "trained screen on %d records in %.1fs (thresholds lgbm=%.4f svc=%.4f)",
        len(records),
        screen.card["training_seconds"],
        th["lgbm"],
        th["svc"],
    )
    return screen
