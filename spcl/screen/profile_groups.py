"""The screen's parts by where their time is spent, for profilers that group time by module.

``spcl bench filter`` sorts the filter's cProfile self time into these groups (then the rest of the
batch function's); a screen kind with other parts lists them here, so nothing outside the screen
names them.
"""

from __future__ import annotations

SCREEN_PROFILE_GROUPS: tuple[tuple[str, str], ...] = (
    ("fugashi", "MeCab (fugashi)"),
    ("sentencepiece", "SentencePiece"),
    ("lightgbm", "LightGBM predict"),
    ("spcl/screen/features", "features: keys, lexicon, TF-IDF"),
    ("spcl/screen/lexicon", "features: keys, lexicon, TF-IDF"),
    ("spcl/screen/tokenize", "MeCab parse (fugashi's Cython time lands in tokenize.py)"),
    ("scipy", "scipy.sparse"),
    ("sklearn", "scikit-learn"),
    ("spcl/screen/model", "screen model (Python)"),
)
"""``(substring of "file:function", group name)``: the first group whose substring a profiled
function's file and name hold takes its time."""
