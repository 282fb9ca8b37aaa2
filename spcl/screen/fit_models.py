"""Fitting the screen's models on a TF-IDF matrix: chi²-selected columns and LightGBM, the
(NB-)LinearSVC, one logistic regression per category; and scoring a matrix with a fitted pair (the
out-of-fold scores)."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import scipy.sparse as sp
from sklearn.feature_selection import chi2
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from spcl.screen.model import CATEGORIES
from spcl.screen.train_data import TrainSettings


def select_columns(x: sp.csr_matrix, y: np.ndarray, top_k: int, hashed_width: int) -> np.ndarray:
    """chi² top-k hashed columns (stable order by score, then index), plus every lexicon column."""
    df = np.bincount(x.indices, minlength=x.shape[1])
    scores, _ = chi2(x, y)
    scores = np.nan_to_num(scores, nan=0.0)
    cand = np.flatnonzero((df[:hashed_width] >= 2) & (scores[:hashed_width] > 0))
    order = cand[np.lexsort((cand, -scores[cand]))][:top_k]
    lex_cols = np.arange(hashed_width, x.shape[1])
    return np.sort(np.concatenate([order, lex_cols])).astype(np.int32)


def nb_log_ratio(x: sp.csr_matrix, y: np.ndarray, w: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Per-column log-count ratio of NB-SVM (Wang & Manning 2012): ``log(p/|p|₁) − log(q/|q|₁)``
    with ``p = α + Σ w·[x > 0]`` over the positive rows and ``q`` the same over the negative ones
    (float32).

    >>> x = sp.csr_matrix(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]))
    >>> r = nb_log_ratio(x, np.array([True, True, False]), np.ones(3))
    >>> bool(r[0] > 0 > r[1])
    True
    """
    present = x.copy()
    present.data = np.ones_like(present.data)
    w = np.asarray(w, np.float64)
    p = np.asarray(present[y].T @ w[y]).ravel() + alpha
    q = np.asarray(present[~y].T @ w[~y]).ravel() + alpha
    return (np.log(p / p.sum()) - np.log(q / q.sum())).astype(np.float32)


def fit_svc(
    x: sp.csr_matrix, y: np.ndarray, w: np.ndarray, settings: TrainSettings
) -> tuple[np.ndarray, float]:
    """LinearSVC weights and intercept on ``x`` (NB-SVM with ``svc_nb_alpha`` > 0: weights ``r ·
    w``)."""
    svc = LinearSVC(
        C=settings.svc_c, class_weight="balanced", random_state=settings.seed, max_iter=5000
    )
    if settings.svc_nb_alpha <= 0:
        svc.fit(x, y, sample_weight=w)
        return svc.coef_.ravel().astype(np.float32), float(np.float32(svc.intercept_[0]))
    r = nb_log_ratio(x, y, w, settings.svc_nb_alpha)
    svc.fit(x.multiply(r).tocsr(), y, sample_weight=w)
    return (svc.coef_.ravel() * r).astype(np.float32), float(np.float32(svc.intercept_[0]))


def fit_models(
    x: sp.csr_matrix, y: np.ndarray, w: np.ndarray, settings: TrainSettings, hashed_width: int
) -> tuple[np.ndarray, float, np.ndarray, str]:
    """SVC weights, SVC intercept, LightGBM columns and LightGBM model text for one training set."""
    svc_w, svc_b = fit_svc(x, y, w, settings)
    cols = select_columns(x, y, settings.lgbm_top_k, hashed_width)
    pos = max(float(w[y].sum()), 1e-9)
    neg = max(float(w[~y].sum()), 1e-9)
    params = {
        "objective": "binary",
        "learning_rate": settings.lgbm_learning_rate,
        "num_leaves": settings.lgbm_leaves,
        "min_child_samples": settings.lgbm_min_child_samples,
        "min_sum_hessian_in_leaf": 1e-3,
        "feature_fraction": 0.5,
        "bagging_fraction": 0.8,
        "bagging_freq": 1,
        "lambda_l2": 1.0,
        "scale_pos_weight": neg / pos,
        "seed": settings.seed,
        "deterministic": True,
        "force_row_wise": True,
        "max_bin": settings.lgbm_max_bin,
        "feature_pre_filter": False,
        "num_threads": settings.num_threads,
        "verbosity": -1,
    }
    ds = lgb.Dataset(
        x[:, cols], label=y.astype(np.float32), weight=w, params=params, free_raw_data=True
    )
    booster = lgb.train(params, ds, num_boost_round=settings.lgbm_trees)
    return svc_w, svc_b, cols, booster.model_to_string()


def score_models(
    x: sp.csr_matrix, svc_w: np.ndarray, svc_b: float, cols: np.ndarray, model: str
) -> tuple[np.ndarray, np.ndarray]:
    """LightGBM probabilities and LinearSVC margins of ``x`` under one :func:`fit_models` result."""
    booster = lgb.Booster(model_str=model)
    lg = np.asarray(booster.predict(x[:, cols], num_threads=1), dtype=np.float32)
    svc = (x @ svc_w + np.float32(svc_b)).astype(np.float32)
    return lg, svc


def fit_categories(
    x: sp.csr_matrix, cats: np.ndarray, w: np.ndarray, settings: TrainSettings
) -> tuple[np.ndarray, np.ndarray]:
    """One logistic regression per category (``CATEGORIES``): weights and intercepts; a category
    with fewer than two positive or two negative rows keeps zero weights and a -10 intercept (never
    fires)."""
    coef = np.zeros((len(CATEGORIES), x.shape[1]), np.float32)
    intercept = np.full(len(CATEGORIES), -10.0, np.float32)
    for i in range(len(CATEGORIES)):
        yc = cats[:, i]
        if yc.sum() < 2 or (~yc).sum() < 2:
            continue
        lr = LogisticRegression(
            C=settings.category_c,
            class_weight="balanced",
            solver="liblinear",
            random_state=settings.seed,
        )
        lr.fit(x, yc, sample_weight=w)
        coef[i] = lr.coef_.ravel()
        intercept[i] = lr.intercept_[0]
    return coef, intercept
