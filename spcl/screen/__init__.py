"""The screen: a cheap model over every document that flags possible special-care personal
information.

Hashed TF-IDF over MeCab words (Japanese) and SentencePiece pieces (Korean, English, other), plus
category-lexicon counts, feeds LightGBM (on chi²-selected columns) and LinearSVC (on all columns);
a document is flagged when either model passes its threshold (the union). Category scores
(MEDICAL, CRIME, DISABILITY, OTHER) come from one-vs-rest logistic regressions on the same features.

    from spcl.screen import load_screen
    screen = load_screen("models/screen-default")     # once per worker
    res = screen.predict(texts, langs)                # langs: ja|ko|en|other, or None to guess
    res.flag, res.lgbm_score, res.lgbm_flag, res.svc_score, res.svc_flag, res.categories["CRIME"]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spcl.screen.model import CATEGORIES, Screen, ScreenModelError, ScreenResult, load_screen

__all__ = ["CATEGORIES", "Screen", "ScreenModelError", "ScreenResult", "load_screen"]


def __getattr__(name: str) -> object:
    """The public names, from :mod:`spcl.screen.model` on first use: its LightGBM stack is heavy,
    and a module that only reads screen output (``spcl.screen.heads``, ``spcl.screen.kinds``) need
    not load it."""
    if name in __all__:
        from spcl.screen import model  # optional heavy dependency: LightGBM, SentencePiece, MeCab

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
