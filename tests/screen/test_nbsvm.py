"""NB-SVM option of the screen's LinearSVC (``TrainSettings.svc_nb_alpha``): the log-count ratio,
the folding of the ratio into the stored weights, and a trained artifact that round-trips."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from spcl.screen import load_screen
from spcl.screen.features import FeatureSettings
from spcl.screen.fit_models import fit_svc, nb_log_ratio
from spcl.screen.train import TrainSettings, fit_screen, record_from_dict
from spcl.synth.screen_data import generate

SMALL = TrainSettings(
    features=FeatureSettings(bits=16, sp_vocab_size=1000),
    threshold_folds=3,
    lgbm_trees=30,
    lgbm_top_k=500,
    seed=0,
)


def _random_problem(seed: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = sp.random(60, 40, density=0.2, random_state=seed, format="csr", dtype=np.float32)
    y = rng.random(60) < 0.4
    y[:2] = [True, False]
    w = rng.choice([1.0, 0.5, 0.2], 60)
    return x, y, w


def test_log_ratio_signs_follow_the_class_a_column_occurs_in() -> None:
    x = sp.csr_matrix(
        np.array([[1.0, 0.0, 2.0], [3.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 5.0, 1.0]], np.float32)
    )
    y = np.array([True, True, False, False])
    r = nb_log_ratio(x, y, np.ones(4), alpha=1.0)
    assert r.dtype == np.float32 and r.shape == (3,)
    assert r[0] > 0 > r[1]  # only in positives / only in negatives
    assert abs(float(r[2])) < 1e-6  # in every row: counts presence, not the values 2, 1, 1, 1
    # presence is weighted by the sample weights: down-weighting the positives moves column 2
    # negative
    assert nb_log_ratio(x, y, np.array([0.1, 0.1, 1.0, 1.0]))[2] < 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_folded_weights_score_exactly_as_the_svc_on_scaled_columns(seed: int) -> None:
    x, y, w = _random_problem(seed)
    settings = SMALL.replace(svc_nb_alpha=0.5)
    coef, intercept = fit_svc(x, y, w, settings)
    r = nb_log_ratio(x, y, w, 0.5)
    svc = LinearSVC(
        C=settings.svc_c, class_weight="balanced", random_state=settings.seed, max_iter=5000
    )
    svc.fit(x.multiply(r).tocsr(), y, sample_weight=w)
    expected = svc.decision_function(x.multiply(r).tocsr())
    np.testing.assert_allclose(x @ coef + intercept, expected, rtol=1e-4, atol=1e-4)
    # and it is not the plain SVC: the option changes the weights
    plain, _ = fit_svc(x, y, w, SMALL)
    assert not np.allclose(plain, coef)


def test_default_is_the_plain_svc() -> None:
    x, y, w = _random_problem(3)
    coef, intercept = fit_svc(x, y, w, SMALL)
    svc = LinearSVC(C=SMALL.svc_c, class_weight="balanced", random_state=SMALL.seed, max_iter=5000)
    svc.fit(x, y, sample_weight=w)
    np.testing.assert_array_equal(coef, svc.coef_.ravel().astype(np.float32))
    assert intercept == float(np.float32(svc.intercept_[0]))


def test_nb_svm_screen_records_the_setting_and_round_trips(tmp_path: Path) -> None:
    recs = [record_from_dict(r) for r in generate(20, seed=4)]
    screen = fit_screen(recs, SMALL.replace(svc_nb_alpha=1.0))
    assert screen.card["train_settings"]["svc_nb_alpha"] == 1.0
    assert "NB-SVM" in screen.card["models"]["svc"]
    texts, langs = [r.text for r in recs[:40]], [r.lang for r in recs[:40]]
    before = screen.predict(texts, langs)
    loaded = load_screen(screen.save(tmp_path / "screen-nb"))
    after = loaded.predict(texts, langs)
    np.testing.assert_array_equal(before.flag, after.flag)
    np.testing.assert_allclose(before.scores["svc"], after.scores["svc"], rtol=1e-6, atol=1e-6)
    plain = fit_screen(recs, SMALL)
    assert (
        "NB-SVM" not in plain.card["models"]["svc"]
        and plain.card["train_settings"]["svc_nb_alpha"] == 0.0
    )
