"""Training of the screen: SentencePiece, IDF, LinearSVC, chi²-selected LightGBM, category models.

Thresholds come from out-of-fold scores (grouped, stratified k-fold inside the training data): each
model's threshold is the highest score that still reaches ``target_recall`` on the real (non-synthetic)
positive documents of the folds. The final models are then fitted on all the training data.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import scipy.sparse as sp
from sklearn.feature_selection import chi2
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold
from sklearn.svm import LinearSVC

from spcl import __version__
from spcl.labels import LABELS
from spcl.screen.features import FeatureSettings, Featurizer, fit_idf, tfidf
from spcl.screen.lexicon import default_lexicon
from spcl.screen.model import CATEGORIES, Screen
from spcl.screen.tokenize import JA_TOKENS, Tokenizers, train_sentencepiece
from spcl.text import LANGS, guess_lang

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Record:
    """One labelled document."""

    id: str
    text: str
    lang: str
    label: str
    categories: tuple[str, ...] = ()
    source: str = ""

    @property
    def synthetic(self) -> bool:
        """True for training-only augmentation: generated (``source`` starts with ``synth``) or weakly
        labelled real text (``weak:``, e.g. ``tools.datasets.weak_none``); never scored in CV."""
        return self.source.startswith(("synth", "weak:"))

    @property
    def weak(self) -> bool:
        """True for weakly labelled real text (``source`` starts with ``weak:``); a subset of :attr:`synthetic`."""
        return self.source.startswith("weak:")


@dataclass(frozen=True)
class TrainSettings:
    """Everything that decides a trained screen (stored in the model card)."""

    features: FeatureSettings = field(default_factory=FeatureSettings)
    positive_labels: tuple[str, ...] = ("SCPI", "RELATED")
    target_recall: float = 0.95
    """Recall the thresholds must reach on real documents of ``threshold_labels`` (out-of-fold)."""
    threshold_labels: tuple[str, ...] = ("SCPI",)
    """Labels whose recall the thresholds target: SCPI by default (the screen's promise is SCPI recall;
    RELATED documents are flagged as far as the same thresholds reach them)."""
    threshold_mode: str = "union"
    """``union``: both models at one common per-model recall level, the lowest at which their union
    reaches ``target_recall`` (fewest flags); ``each``: every model alone reaches ``target_recall``."""
    synthetic_weight: float = 0.2
    """Sample weight of synthetic (augmentation) records relative to real ones."""
    weak_weight: float = 0.2
    """Sample weight of weakly labelled real records (``source`` starting ``weak:``) relative to real ones."""
    per_lang_thresholds: tuple[str, ...] = ()
    """Languages that get their own thresholds, tuned on their own out-of-fold scores, when they have
    enough real target positives (:func:`min_positives`); every other language uses the global ones."""
    global_threshold_langs: tuple[str, ...] = ()
    """Languages whose real target positives tune the global thresholds (default: every language). With
    ``("ja", "ko")`` English, whose few SCPI documents are mostly hard first-person posts, does not pull the
    thresholds that it (and any other language without its own) uses down to a 47 % NONE flag rate."""
    lang_target_recall: tuple[tuple[str, float], ...] = ()
    """``(lang, target)`` pairs: a per-language threshold language tuned to its own recall target instead of
    ``target_recall`` (Korean at 0.97 reached 0.966 held-out SCPI recall where 0.94 left it at 0.932)."""
    lang_none_budget: tuple[tuple[str, float], ...] = ()
    """``(lang, budget)`` pairs: that language's thresholds are the pair with the most out-of-fold topic
    recall (``positive_labels``) whose union flags at most ``budget`` of its real NONE documents — for a
    language whose few SCPI documents cannot tune a recall target (English: 25 % of its NONE flagged at the
    ja/ko-tuned global thresholds, 10 % held-out at budget 0.12, SCPI recall unchanged)."""
    fewest_none_langs: tuple[str, ...] = ()
    """Per-language threshold languages whose pair is, of the pairs reaching that language's own recall target
    out-of-fold, the one that flags the fewest of its real NONE documents (:func:`thresholds_for_fewest_none`)
    instead of the union's common recall level (Korean: held-out NONE flags 16.7 → 14.8 %, same SCPI recall)."""
    lang_svc_only: tuple[str, ...] = ()
    """Languages flagged by the LinearSVC alone, at the SVC threshold they would otherwise get (their LightGBM
    threshold is :data:`LGBM_OFF`): on English the LightGBM added no SCPI passage out-of-fold (20 of 26 with or
    without it) but flagged more NONE."""
    threshold_folds: int = 5
    threshold_split: str = "cv"
    """How the out-of-fold scores that choose the thresholds are split: ``cv`` — grouped (near-duplicate)
    stratified folds, every source in every fold; ``source`` — whole source groups (:func:`source_group`) per
    fold, so a threshold is chosen on scores of models that never saw that kind of text (what transfers to a
    new kind, rather than what holds inside a known one)."""
    svc_c: float = 0.5
    svc_nb_alpha: float = 0.0
    """0: the LinearSVC trains on the TF-IDF columns. > 0: NB-SVM — it trains on the columns scaled by their
    log-count ratio (:func:`nb_log_ratio`, smoothing ``svc_nb_alpha``) and stores ``r · w``, so the artifact and
    inference are unchanged (fewer NONE flags at the same SCPI recall on the held-out quarter)."""
    lgbm_top_k: int = 3000
    lgbm_trees: int = 200
    lgbm_max_bin: int = 63
    lgbm_leaves: int = 15
    lgbm_learning_rate: float = 0.05
    lgbm_min_child_samples: int = 5
    category_c: float = 4.0
    num_threads: int = 1
    """LightGBM threads; 1 by default: OpenMP spinning on a busy shared machine slowed training 40×."""
    seed: int = 0

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form for the model card."""
        d = asdict(self)
        d["features"] = self.features.to_json()
        d["positive_labels"] = list(self.positive_labels)
        d["threshold_labels"] = list(self.threshold_labels)
        d["per_lang_thresholds"] = list(self.per_lang_thresholds)
        d["global_threshold_langs"] = list(self.global_threshold_langs)
        d["lang_target_recall"] = dict(self.lang_target_recall)
        d["lang_none_budget"] = dict(self.lang_none_budget)
        d["fewest_none_langs"] = list(self.fewest_none_langs)
        d["lang_svc_only"] = list(self.lang_svc_only)
        return d


LGBM_OFF = 2.0
"""LightGBM threshold of a language flagged by the SVC alone: above any LightGBM probability, so that model
never flags it (a finite number keeps ``model_card.json`` plain JSON)."""


def lang_values(text: str, flag: str) -> tuple[tuple[str, float], ...]:
    """``"ko=0.97,en=0.12"`` → ``(("en", 0.12), ("ko", 0.97))``; a clear ``ValueError`` naming ``flag`` else."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        lang, sep, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not sep or not lang.strip() or not 0.0 < number < 1.0:
            raise ValueError(f"{flag}: expected lang=number with 0 < number < 1, got {part!r}")
        out[lang.strip()] = number
    return tuple(sorted(out.items()))


def record_from_dict(row: dict[str, Any], where: str = "<record>") -> Record:
    """Validate one labelled row into a :class:`Record`; errors name ``where``, never the text."""
    label = row.get("label")
    if label not in LABELS:
        raise ValueError(f"{where}: label {label!r} not in {list(LABELS)}")
    text = row.get("text")
    if not isinstance(text, str):
        raise ValueError(f"{where}: field 'text' missing or not a string")
    lang = str(row["lang"]) if row.get("lang") in LANGS else guess_lang(text)
    return Record(
        id=str(row.get("id", where)),
        text=text,
        lang=lang,
        label=label,
        categories=tuple(c for c in row.get("categories") or () if c in CATEGORIES),
        source=str(row.get("source", "")),
    )


def read_records(paths: Iterable[str | Path]) -> list[Record]:
    """Read labelled JSONL files (``id, text, lang?, label, categories?, source?``).

    Unknown labels raise ``ValueError`` naming the file and line (never the text).
    """
    out: list[Record] = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    raise ValueError(f"{path}:{lineno}: not valid JSON") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{path}:{lineno}: not a JSON object")
                out.append(record_from_dict(row, f"{path}:{lineno}"))
    return out


_SOURCE_PREFIXES = ("masc", "klue-dp", "klue-nli", "webtext", "20news")


def source_group(record: Record) -> str:
    """``lang:source`` with related sub-sources merged (``masc-blog`` → ``masc``, ``klue-dp-wikitree`` →
    ``klue-dp``, ``20news-sci.med`` → ``20news``), so each group is one kind of text large enough to score."""
    src = record.source or "-"
    for prefix in _SOURCE_PREFIXES:
        if src.startswith(prefix + "-"):
            src = prefix
    return f"{record.lang}:{src}"


def near_duplicate_groups(texts: Sequence[str], threshold: float = 0.5) -> np.ndarray:
    """Group ids such that texts whose character-trigram Jaccard similarity ≥ ``threshold`` share one.

    Connected components over the similarity graph, so chains of near-duplicates stay together.
    """
    n = len(texts)
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, t in enumerate(texts):
        grams = {t[j : j + 3] for j in range(max(1, len(t) - 2))}
        for g in grams:
            rows.append(i)
            cols.append(vocab.setdefault(g, len(vocab)))
    m = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(n, max(1, len(vocab))))
    inter = (m @ m.T).tocoo()
    sizes = np.asarray(m.sum(axis=1)).ravel()
    union = sizes[inter.row] + sizes[inter.col] - inter.data
    keep = (inter.row < inter.col) & (inter.data >= threshold * np.maximum(union, 1))
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in zip(inter.row[keep].tolist(), inter.col[keep].tolist(), strict=True):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([find(i) for i in range(n)], np.int64)


def min_positives(target: float) -> int:
    """Fewest positives for which a recall target is a stable threshold rule: at least two positives may be
    missed (``n·(1 − target) ≥ 2``) and never fewer than 20. Below it one document decides the threshold
    (27 positives at 0.96 moved a threshold from 0.58 to 0.07).

    >>> min_positives(0.96), min_positives(0.95), min_positives(0.5)
    (50, 40, 20)
    """
    return max(20, int(np.ceil(2.0 / max(1.0 - target, 1e-9) - 1e-9)))


def threshold_for_recall(scores: np.ndarray, positive: np.ndarray, target: float) -> float:
    """The highest threshold ``t`` such that ``mean(scores[positive] >= t) >= target``.

    >>> threshold_for_recall(np.array([0.1, 0.4, 0.8, 0.9]), np.array([0, 1, 1, 1], bool), 0.66)
    0.8
    """
    pos = np.sort(np.asarray(scores, np.float64)[positive])[::-1]
    if pos.size == 0:
        return float("inf")
    k = int(np.ceil(target * pos.size - 1e-9))
    k = min(max(k, 1), pos.size)
    return float(pos[k - 1])


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
    if settings.threshold_split == "source":  # real records fold by kind of text; extras by near-duplicates
        groups = np.array([f"src:{source_group(r)}" if not r.synthetic else f"dup:{g}"
                           for r, g in zip(records, groups.tolist(), strict=True)], dtype=object)
    elif settings.threshold_split != "cv":
        raise ValueError(f"threshold_split must be 'cv' or 'source', not {settings.threshold_split!r}")
    counts, lex = featurizer.featurize(texts, langs)
    return _Data(
        counts=counts,
        lex=lex,
        y=y,
        cats=cats,
        real=real,
        weight=np.where(real, 1.0, np.where(weak, settings.weak_weight, settings.synthetic_weight)).astype(np.float64),
        target=target,
        strata=strata,
        groups=groups,
        langs=np.array(langs, dtype=object),
    )


def _select_columns(x: sp.csr_matrix, y: np.ndarray, top_k: int, hashed_width: int) -> np.ndarray:
    """chi² top-k hashed columns (stable order by score, then index), plus every lexicon column."""
    df = np.bincount(x.indices, minlength=x.shape[1])
    scores, _ = chi2(x, y)
    scores = np.nan_to_num(scores, nan=0.0)
    cand = np.flatnonzero((df[:hashed_width] >= 2) & (scores[:hashed_width] > 0))
    order = cand[np.lexsort((cand, -scores[cand]))][:top_k]
    lex_cols = np.arange(hashed_width, x.shape[1])
    return np.sort(np.concatenate([order, lex_cols])).astype(np.int32)


def nb_log_ratio(x: sp.csr_matrix, y: np.ndarray, w: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """Per-column log-count ratio of NB-SVM (Wang & Manning 2012): ``log(p/|p|₁) − log(q/|q|₁)`` with
    ``p = α + Σ w·[x > 0]`` over the positive rows and ``q`` the same over the negative ones (float32).

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


def _fit_svc(x: sp.csr_matrix, y: np.ndarray, w: np.ndarray, settings: TrainSettings) -> tuple[np.ndarray, float]:
    """LinearSVC weights and intercept on ``x`` (NB-SVM with ``svc_nb_alpha`` > 0: weights ``r · w``)."""
    svc = LinearSVC(C=settings.svc_c, class_weight="balanced", random_state=settings.seed, max_iter=5000)
    if settings.svc_nb_alpha <= 0:
        svc.fit(x, y, sample_weight=w)
        return svc.coef_.ravel().astype(np.float32), float(np.float32(svc.intercept_[0]))
    r = nb_log_ratio(x, y, w, settings.svc_nb_alpha)
    svc.fit(x.multiply(r).tocsr(), y, sample_weight=w)
    return (svc.coef_.ravel() * r).astype(np.float32), float(np.float32(svc.intercept_[0]))


def _fit_models(
    x: sp.csr_matrix, y: np.ndarray, w: np.ndarray, settings: TrainSettings, hashed_width: int
) -> tuple[np.ndarray, float, np.ndarray, str]:
    """SVC weights, SVC intercept, LightGBM columns and LightGBM model text for one training set."""
    svc_w, svc_b = _fit_svc(x, y, w, settings)
    cols = _select_columns(x, y, settings.lgbm_top_k, hashed_width)
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
    ds = lgb.Dataset(x[:, cols], label=y.astype(np.float32), weight=w, params=params, free_raw_data=True)
    booster = lgb.train(params, ds, num_boost_round=settings.lgbm_trees)
    return svc_w, svc_b, cols, booster.model_to_string()


def _score(x: sp.csr_matrix, svc_w: np.ndarray, svc_b: float, cols: np.ndarray, model: str) -> tuple[
    np.ndarray, np.ndarray
]:
    booster = lgb.Booster(model_str=model)
    lg = np.asarray(booster.predict(x[:, cols], num_threads=1), dtype=np.float32)
    svc = (x @ svc_w + np.float32(svc_b)).astype(np.float32)
    return lg, svc


def _fit_categories(
    x: sp.csr_matrix, cats: np.ndarray, w: np.ndarray, settings: TrainSettings
) -> tuple[np.ndarray, np.ndarray]:
    coef = np.zeros((len(CATEGORIES), x.shape[1]), np.float32)
    intercept = np.full(len(CATEGORIES), -10.0, np.float32)
    for i in range(len(CATEGORIES)):
        yc = cats[:, i]
        if yc.sum() < 2 or (~yc).sum() < 2:
            continue
        lr = LogisticRegression(
            C=settings.category_c, class_weight="balanced", solver="liblinear", random_state=settings.seed
        )
        lr.fit(x, yc, sample_weight=w)
        coef[i] = lr.coef_.ravel()
        intercept[i] = lr.intercept_[0]
    return coef, intercept


def oof_thresholds(data: _Data, settings: TrainSettings, hashed_width: int,
                   on_fit: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Out-of-fold scores on the training data and the per-model thresholds reaching the target recall
    (``on_fit`` is told the training documents of each fold's fit)."""
    n = data.y.size
    lg_oof = np.zeros(n, np.float32)
    svc_oof = np.zeros(n, np.float32)
    fold = np.zeros(n, np.int16)
    folds = StratifiedGroupKFold(n_splits=settings.threshold_folds, shuffle=True, random_state=settings.seed)
    for k, (tr, te) in enumerate(folds.split(np.zeros(n), data.strata, data.groups)):
        fold[te] = k
        idf = fit_idf(data.counts[tr])
        xtr = tfidf(data.counts[tr], idf, data.lex[tr], settings.features.sublinear_tf)
        xte = tfidf(data.counts[te], idf, data.lex[te], settings.features.sublinear_tf)
        w, b, cols, model = _fit_models(xtr, data.y[tr], data.weight[tr], settings, hashed_width)
        lg_oof[te], svc_oof[te] = _score(xte, w, b, cols, model)
        if on_fit is not None:
            on_fit(len(tr))
    lg_t, svc_t, per_lang = choose_thresholds(lg_oof, svc_oof, data.target, data.y, data.real, data.langs,
                                              settings)
    return {"lgbm": lg_t, "svc": svc_t, "lang": per_lang, "oof_lgbm": lg_oof, "oof_svc": svc_oof,
            "oof_fold": fold}


def choose_thresholds(lg_oof: np.ndarray, svc_oof: np.ndarray, target: np.ndarray, y: np.ndarray,
                      real: np.ndarray, langs: np.ndarray, settings: TrainSettings
                      ) -> tuple[float, float, dict[str, dict[str, float]]]:
    """(global lgbm, global svc, per-language pairs) from out-of-fold scores by the rules of ``settings``;
    ``target``: real documents of the threshold labels, ``y``: topic-positive, ``real``: not training-only.
    Applied to a subset of the training documents it cross-fits the rule (tools/screen_source_folds.py)."""
    data = _Labels(target=target, y=y, real=real, langs=langs)
    pos = data.target if data.target.any() else data.y
    tuning = np.isin(data.langs, settings.global_threshold_langs) if settings.global_threshold_langs else None
    if tuning is not None and (pos & tuning).any():
        lg_t, svc_t = tune_thresholds(lg_oof[tuning], svc_oof[tuning], pos[tuning], settings.target_recall,
                                      settings.threshold_mode)
    else:
        lg_t, svc_t = tune_thresholds(lg_oof, svc_oof, pos, settings.target_recall, settings.threshold_mode)
    per_lang: dict[str, dict[str, float]] = {}
    targets = dict(settings.lang_target_recall)
    if settings.per_lang_thresholds:
        for lang in sorted(set(data.langs.tolist()) & set(settings.per_lang_thresholds)):
            m = data.langs == lang
            lang_target = targets.get(lang, settings.target_recall)
            if int((pos & m).sum()) >= min_positives(lang_target):
                if lang in settings.fewest_none_langs:
                    none = data.real & ~data.y
                    t_l, t_s = thresholds_for_fewest_none(lg_oof[m], svc_oof[m], pos[m], none[m], lang_target)
                else:
                    t_l, t_s = tune_thresholds(lg_oof[m], svc_oof[m], pos[m], lang_target, settings.threshold_mode)
                per_lang[lang] = {"lgbm": t_l, "svc": t_s}
    for lang, budget in sorted(settings.lang_none_budget):
        m = (data.langs == lang) & data.real
        none = m & ~data.y
        if lang not in per_lang and int(none.sum()) >= min_positives(1.0 - budget) and (m & data.y).any():
            t_l, t_s = thresholds_for_none_budget(lg_oof[m], svc_oof[m], data.y[m], budget)
            per_lang[lang] = {"lgbm": t_l, "svc": t_s}
    for lang in settings.lang_svc_only:
        per_lang[lang] = {"lgbm": LGBM_OFF, "svc": per_lang.get(lang, {"svc": svc_t})["svc"]}
    return lg_t, svc_t, per_lang


@dataclass(frozen=True)
class _Labels:
    target: np.ndarray
    y: np.ndarray
    real: np.ndarray
    langs: np.ndarray


def tune_thresholds(
    lg: np.ndarray, svc: np.ndarray, positive: np.ndarray, target: float, mode: str = "union"
) -> tuple[float, float]:
    """Per-model thresholds from validation scores (see :attr:`TrainSettings.threshold_mode`).

    In ``union`` mode the union's recall on ``positive`` is at least ``target`` whenever each model
    alone could reach it, and never lower than in ``each`` mode's guarantee for the union.
    """
    if mode == "each":
        return threshold_for_recall(lg, positive, target), threshold_for_recall(svc, positive, target)
    if mode != "union":
        raise ValueError(f"threshold_mode must be 'union' or 'each', not {mode!r}")
    for level in np.arange(0.50, target + 1e-9, 0.005):
        t_l = threshold_for_recall(lg, positive, float(level))
        t_s = threshold_for_recall(svc, positive, float(level))
        union = ((lg >= t_l) | (svc >= t_s))[positive]
        if union.size and union.mean() >= target:
            return t_l, t_s
    return threshold_for_recall(lg, positive, target), threshold_for_recall(svc, positive, target)


def thresholds_for_fewest_none(lg: np.ndarray, svc: np.ndarray, positive: np.ndarray, negative: np.ndarray,
                               target: float, levels: int = 101) -> tuple[float, float]:
    """The (lgbm, svc) pair, each model's threshold one of ``levels`` quantiles (0–1) of its scores on the
    ``negative`` documents or just above their maximum, whose union reaches ``target`` recall of ``positive``
    and flags the fewest negatives (ties: the first found, lowest thresholds first); the union's common-level pair
    (:func:`tune_thresholds`) when no grid pair reaches the target or there are no negatives. Deterministic.

    >>> lg, svc = np.array([0.9, 0.2, 0.8, 0.1]), np.array([0.0, 2.0, 1.5, -1.0])
    >>> pos = np.array([1, 1, 0, 0], bool)
    >>> flags = lambda t: (lg >= t[0]) | (svc >= t[1])
    >>> t = thresholds_for_fewest_none(lg, svc, pos, ~pos, 1.0)
    >>> flags(t).tolist()
    [True, True, False, False]
    """
    fallback = tune_thresholds(lg, svc, positive, target)
    if not negative.any() or not positive.any():
        return fallback
    qs = np.linspace(0.0, 1.0, levels)
    above = np.float32(np.inf)
    cand_l, cand_s = ([*np.quantile(x[negative], qs).tolist(), float(np.nextafter(x[negative].max(), above))]
                      for x in (np.asarray(lg, np.float32), np.asarray(svc, np.float32)))
    best: tuple[float, float, float] | None = None
    for t_l in cand_l:
        lf = lg >= t_l
        for t_s in cand_s:
            f = lf | (svc >= t_s)
            if f[positive].mean() < target - 1e-12:
                continue
            flagged = float(f[negative].mean())
            if best is None or flagged < best[0] - 1e-12:
                best = (flagged, float(t_l), float(t_s))
    return fallback if best is None else (best[1], best[2])


def thresholds_for_none_budget(lg: np.ndarray, svc: np.ndarray, positive: np.ndarray, budget: float,
                               levels: int = 41) -> tuple[float, float]:
    """The (lgbm, svc) pair, each model's threshold one of ``levels`` quantiles (0.8–1.0) of its scores on
    the negative documents or +inf (that model off), whose union flags at most ``budget`` of the negatives
    with the most recall of ``positive``; ties go to fewer negatives flagged. Deterministic.

    >>> lg, svc = np.array([0.9, 0.8, 0.1, 0.2, 0.3]), np.array([0.0, 2.0, -1.0, -1.0, -1.0])
    >>> [round(t, 2) for t in thresholds_for_none_budget(lg, svc, np.array([1, 1, 0, 0, 0], bool), 0.34)]
    [0.26, inf]
    """
    neg = ~positive
    qs = np.linspace(0.8, 1.0, levels)
    cand_l = [*np.quantile(lg[neg], qs).tolist(), float("inf")] if neg.any() else [float("inf")]
    cand_s = [*np.quantile(svc[neg], qs).tolist(), float("inf")] if neg.any() else [float("inf")]
    best = (-1.0, 0.0, float("inf"), float("inf"))
    for t_l in cand_l:
        lf = lg >= t_l
        for t_s in cand_s:
            f = lf | (svc >= t_s)
            flagged = float(f[neg].mean()) if neg.any() else 0.0
            if flagged > budget + 1e-12:
                continue
            recall = float(f[positive].mean()) if positive.any() else 0.0
            if (recall, -flagged) > (best[0], best[1]):
                best = (recall, -flagged, float(t_l), float(t_s))
    return best[2], best[3]


def too_few_positives(records: Sequence[Record], settings: TrainSettings) -> list[str]:
    """Warnings (counts only) where the real documents of ``threshold_labels`` are fewer than
    :func:`min_positives` for ``target_recall``: overall, and per language with per-language thresholds
    (such a language falls back to the global thresholds)."""
    need = min_positives(settings.target_recall)
    labels = "+".join(settings.threshold_labels)
    counts: dict[str, int] = {}
    for r in records:
        if not r.synthetic and r.label in settings.threshold_labels:
            counts[r.lang] = counts.get(r.lang, 0) + 1
    total = sum(counts.values())
    out = []
    if total < need:
        out.append(f"only {total} real {labels} documents for target recall {settings.target_recall} "
                   f"(at least {need} advised): one or two documents decide the thresholds; add labelled data "
                   "or lower --target-recall")
    if settings.per_lang_thresholds:
        short = {lang: counts.get(lang, 0) for lang in sorted(settings.per_lang_thresholds)
                 if counts.get(lang, 0) < need}
        if short:
            out.append("per-language thresholds: " + ", ".join(f"{lang} has {n}" for lang, n in short.items())
                       + f" real {labels} documents (< {need}); those languages use the global thresholds")
    return out


def _sha256_records(records: Sequence[Record]) -> str:
    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps([r.id, r.text, r.lang, r.label, list(r.categories), r.source]).encode())
        h.update(b"\n")
    return h.hexdigest()


def _training_card(records: Sequence[Record], settings: TrainSettings, lgbm_columns: int,
                   seconds: float) -> dict[str, Any]:
    """The model card's training part: data counts and hash, settings, threshold rule, tokenizers, models."""
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
            + (f"({settings.threshold_folds} folds of whole source groups: scores of models that never saw "
               "the document's kind of text)" if settings.threshold_split == "source" else
               f"({settings.threshold_folds}-fold grouped stratified CV on the training data)")
            + (f"; own thresholds for {', '.join(settings.per_lang_thresholds)} where a language has "
               f"≥ {min_positives(settings.target_recall)} such documents"
               if settings.per_lang_thresholds else "")
            + (f"; global thresholds tuned on the {', '.join(settings.global_threshold_langs)} documents"
               if settings.global_threshold_langs else "")
            + (f"; {', '.join(settings.fewest_none_langs)}: the pair with the fewest real NONE flagged at the target"
               if settings.fewest_none_langs else "")
            + (f"; {', '.join(settings.lang_svc_only)} flagged by the SVC alone (LightGBM threshold {LGBM_OFF})"
               if settings.lang_svc_only else "")
        ),
        "tokenizers": {
            "ja": JA_TOKENS[settings.features.mecab_dic],
            "ko/en/other": "SentencePiece unigram trained on the training texts (spm.model), lower-cased",
        },
        "models": {
            "svc": f"LinearSVC(C={settings.svc_c}, class_weight=balanced) on all hashed + lexicon columns"
                   + (f", NB-SVM: columns scaled by their log-count ratio (alpha {settings.svc_nb_alpha}), "
                      "stored weights r·w" if settings.svc_nb_alpha > 0 else ""),
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

    The returned :class:`Screen` predicts exactly as the artifact it saves to. ``on_fit`` (a progress
    bar) is told the training documents of every model fit: ``threshold_folds`` out-of-fold fits, then
    the final one.
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
    w, b, cols, model = _fit_models(x, data.y, data.weight, settings, hashed_width)
    if on_fit is not None:
        on_fit(len(records))
    cat_w, cat_b = _fit_categories(x, data.cats, data.weight, settings)
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
