"""Threshold choice of the screen from out-of-fold scores: the recall rule, per-language thresholds,
the pair with the fewest NONE documents flagged and the NONE budget."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spcl.screen.train_data import LGBM_OFF, TrainSettings


def min_positives(target: float) -> int:
    """Fewest positives for which a recall target is a stable threshold rule: at least two positives
    may be missed (``n·(1 − target) ≥ 2``) and never fewer than 20. Below it one document decides
    the threshold (27 positives at 0.96 moved a threshold from 0.58 to 0.07).

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


def choose_thresholds(
    lg_oof: np.ndarray,
    svc_oof: np.ndarray,
    target: np.ndarray,
    y: np.ndarray,
    real: np.ndarray,
    langs: np.ndarray,
    settings: TrainSettings,
) -> tuple[float, float, dict[str, dict[str, float]]]:
    """(global lgbm, global svc, per-language pairs) from out-of-fold scores by the rules of
    ``settings``; ``target``: real documents of the threshold labels, ``y``: topic-positive,
    ``real``: not training-only. Applied to a subset of the training documents it cross-fits the
    rule (tools/screen_source_folds.py)."""
    data = _Labels(target=target, y=y, real=real, langs=langs)
    pos = data.target if data.target.any() else data.y
    tuning = (
        np.isin(data.langs, settings.global_threshold_langs)
        if settings.global_threshold_langs
        else None
    )
    if tuning is not None and (pos & tuning).any():
        lg_t, svc_t = tune_thresholds(
            lg_oof[tuning],
            svc_oof[tuning],
            pos[tuning],
            settings.target_recall,
            settings.threshold_mode,
        )
    else:
        lg_t, svc_t = tune_thresholds(
            lg_oof, svc_oof, pos, settings.target_recall, settings.threshold_mode
        )
    per_lang: dict[str, dict[str, float]] = {}
    targets = dict(settings.lang_target_recall)
    if settings.per_lang_thresholds:
        for lang in sorted(set(data.langs.tolist()) & set(settings.per_lang_thresholds)):
            m = data.langs == lang
            lang_target = targets.get(lang, settings.target_recall)
            if int((pos & m).sum()) >= min_positives(lang_target):
                if lang in settings.fewest_none_langs:
                    none = data.real & ~data.y
                    t_l, t_s = thresholds_for_fewest_none(
                        lg_oof[m], svc_oof[m], pos[m], none[m], lang_target
                    )
                else:
                    t_l, t_s = tune_thresholds(
                        lg_oof[m], svc_oof[m], pos[m], lang_target, settings.threshold_mode
                    )
                per_lang[lang] = {"lgbm": t_l, "svc": t_s}
    for lang, budget in sorted(settings.lang_none_budget):
        m = (data.langs == lang) & data.real
        none = m & ~data.y
        if (
            lang not in per_lang
            and int(none.sum()) >= min_positives(1.0 - budget)
            and (m & data.y).any()
        ):
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
        return threshold_for_recall(lg, positive, target), threshold_for_recall(
            svc, positive, target
        )
    if mode != "union":
        raise ValueError(f"threshold_mode must be 'union' or 'each', not {mode!r}")
    for level in np.arange(0.50, target + 1e-9, 0.005):
        t_l = threshold_for_recall(lg, positive, float(level))
        t_s = threshold_for_recall(svc, positive, float(level))
        union = ((lg >= t_l) | (svc >= t_s))[positive]
        if union.size and union.mean() >= target:
            return t_l, t_s
    return threshold_for_recall(lg, positive, target), threshold_for_recall(svc, positive, target)


def thresholds_for_fewest_none(
    lg: np.ndarray,
    svc: np.ndarray,
    positive: np.ndarray,
    negative: np.ndarray,
    target: float,
    levels: int = 101,
) -> tuple[float, float]:
    """The (lgbm, svc) pair, each model's threshold one of ``levels`` quantiles (0–1) of its scores
    on the ``negative`` documents or just above their maximum, whose union reaches ``target`` recall
    of ``positive`` and flags the fewest negatives (ties: the first found, lowest thresholds first);
    the union's common-level pair (:func:`tune_thresholds`) when no grid pair reaches the target or
    there are no negatives. Deterministic.

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
    cand_l, cand_s = (
        [*np.quantile(x[negative], qs).tolist(), float(np.nextafter(x[negative].max(), above))]
        for x in (np.asarray(lg, np.float32), np.asarray(svc, np.float32))
    )
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


def thresholds_for_none_budget(
    lg: np.ndarray, svc: np.ndarray, positive: np.ndarray, budget: float, levels: int = 41
) -> tuple[float, float]:
    """The (lgbm, svc) pair, each model's threshold one of ``levels`` quantiles (0.8–1.0) of its
    scores on the negative documents or +inf (that model off), whose union flags at most ``budget``
    of the negatives with the most recall of ``positive``; ties go to fewer negatives flagged.
    Deterministic.

    >>> lg, svc = np.array([0.9, 0.8, 0.1, 0.2, 0.3]), np.array([0.0, 2.0, -1.0, -1.0, -1.0])
    >>> positive = np.array([1, 1, 0, 0, 0], bool)
    >>> [round(t, 2) for t in thresholds_for_none_budget(lg, svc, positive, 0.34)]
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
