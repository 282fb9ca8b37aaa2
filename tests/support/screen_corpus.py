"""Small seeded screen training settings and records (synthetic: no real text in tests)."""

from __future__ import annotations

from spcl.screen.features import FeatureSettings
from spcl.screen.train import (
    Record,
    TrainSettings,
    record_from_dict,
)
from spcl.synth.screen_data import generate

SMALL = TrainSettings(
    features=FeatureSettings(bits=16, sp_vocab_size=1000),
    threshold_folds=3,
    lgbm_trees=30,
    lgbm_top_k=500,
    seed=0,
)


def small_records(n_per_label: int = 30, seed: int = 0) -> list[Record]:
    """A small seeded ja/ko/en training set (synthetic: no real text in tests)."""
    return [record_from_dict(r) for r in generate(n_per_label, seed=seed)]
