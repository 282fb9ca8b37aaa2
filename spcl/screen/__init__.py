"""The screen: a cheap model over every document that flags possible special-care personal information.

Hashed TF-IDF over MeCab words (Japanese) and SentencePiece pieces (Korean, English, other), plus
category-lexicon counts, feeds LightGBM (on chi²-selected columns) and LinearSVC (on all columns);
a document is flagged when either model passes its threshold (the union). Category scores
(MEDICAL, CRIME, DISABILITY, OTHER) come from one-vs-rest logistic regressions on the same features.

    from spcl.screen import load_screen
    screen = load_screen("models/screen-default")     # once per worker
    res = screen.predict(texts, langs)                # langs: ja|ko|en|other, or None to guess
    res.flag, res.lgbm_score, res.lgbm_flag, res.svc_score, res.svc_flag, res.categories["CRIME"]
"""

from spcl.screen.model import CATEGORIES, Screen, ScreenModelError, ScreenResult, load_screen

__all__ = ["CATEGORIES", "Screen", "ScreenModelError", "ScreenResult", "load_screen"]
