"""The tier's trained head: a small dense network (or a linear model) over standardised features, as
NumPy arrays.

Features of a document: its embedding, then (when the head was trained with them) the screen's
scores (one per screen head, as the screen lists them, and the four category scores), then a one-hot
language (ja, ko, en, other). Arrays (``tier.npz``): ``mean``, ``scale`` (standardisation), ``w1``,
``b1`` (hidden layer, ReLU; absent for ``linear``), ``w2``, ``b2`` (output logit). Nothing is
pickled; inference is NumPy only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

HEAD_KINDS: tuple[str, ...] = ("mlp", "linear")
LANGS: tuple[str, ...] = ("ja", "ko", "en", "other")


def lang_onehot(langs: Sequence[str | None]) -> np.ndarray:
    """``(n, 4)`` one-hot of ja/ko/en/other."""
    out = np.zeros((len(langs), len(LANGS)), np.float32)
    for i, lang in enumerate(langs):
        out[i, LANGS.index(lang) if lang in LANGS else LANGS.index("other")] = 1.0
    return out


def head_logits(kind: str, arrays: Mapping[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The head's logit for each row of the raw feature matrix ``x``."""
    z = (x - arrays["mean"]) / arrays["scale"]
    if kind == "mlp":
        z = np.maximum(z @ arrays["w1"] + arrays["b1"], 0.0)
    elif kind != "linear":
        raise ValueError(f"unknown head kind {kind!r}")
    return (z @ arrays["w2"] + arrays["b2"]).reshape(-1).astype(np.float32)


def fit_head(
    kind: str,
    x: np.ndarray,
    y: np.ndarray,
    *,
    seed: int = 0,
    hidden: int = 64,
    alpha: float = 1e-2,
    weight: np.ndarray | None = None,
    max_iter: int = 100,
) -> dict[str, np.ndarray]:
    """Train a head on features ``x`` and 0/1 labels ``y``; its arrays (scikit-learn does the
    fitting, the result is plain arrays). ``weight``: per-row weights (linear head only; the network
    repeats rows instead)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    mean = x.mean(0).astype(np.float32)
    scale = np.maximum(x.std(0), 1e-6).astype(np.float32)
    z = (x - mean) / scale
    if kind == "linear":
        lr = LogisticRegression(C=0.1, max_iter=2000, class_weight="balanced", random_state=seed)
        lr.fit(z, y, sample_weight=weight)
        return {
            "mean": mean,
            "scale": scale,
            "w2": lr.coef_.T.astype(np.float32),
            "b2": lr.intercept_.astype(np.float32),
        }
    if kind != "mlp":
        raise ValueError(f"unknown head kind {kind!r}")
    # balance the classes by repeating positives (MLPClassifier takes no sample weights)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    reps = max(1, round(len(neg) / max(len(pos), 1)))
    idx = np.concatenate([neg, np.repeat(pos, reps)])
    mlp = MLPClassifier(
        hidden_layer_sizes=(hidden,),
        alpha=alpha,
        solver="lbfgs",
        max_iter=max_iter,
        random_state=seed,
    )
    mlp.fit(z[idx], y[idx])
    return {
        "mean": mean,
        "scale": scale,
        "w1": mlp.coefs_[0].astype(np.float32),
        "b1": mlp.intercepts_[0].astype(np.float32),
        "w2": mlp.coefs_[1].astype(np.float32),
        "b2": mlp.intercepts_[1].astype(np.float32),
    }
