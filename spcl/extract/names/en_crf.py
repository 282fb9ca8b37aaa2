"""The English person-name CRF (python-crfsuite): word tokens labelled ``B``/``I``/``O``.

Features of a word and of its neighbours at ±1 and ±2: the lower-cased word, its shape (``Xx``,
``x``, ``X``, ``X.``, digits), prefixes and suffixes, the case of the whole line (none, mixed,
capitals), whether it starts a sentence, is an ``@handle``, ``#hashtag`` or URL, whether it is a
known given name or surname of the multi-cultural gazetteer (``en.gazetteer.json``: Latin-script
names of many cultures, so that ``Priya Raman`` or ``Oluwaseun Adeyemi`` read as names), whether a
title (``Mr``, ``Dr``, ``President``) precedes it or a verb of saying (``said``, ``tweeted``)
follows it, and whether the English rule finder (:func:`spcl.extract.names.en.en_name_spans`) put it
in a name. Trained on names-gold-v2 (English tweets, YouTube and forum comments, Wikipedia) by
``spcl train-names --lang en``; the model is ``models/names-crf/en.crfsuite`` and its threshold is
in the model card. Tagging needs python-crfsuite only (no morphological analyser):
:func:`en_scored_spans` is None where the model or python-crfsuite is missing.
"""

from __future__ import annotations

import json
import logging
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from spcl.extract.names.en import en_name_spans
from spcl.extract.names.tagger import MODEL_DIR, decode, threshold, threshold_tags
from spcl.extract.names.tagger import _model as load
from spcl.resources import resolve_path

log = logging.getLogger("spcl.extract.names")

EN_GAZETTEER = "en.gazetteer.json"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOKEN = re.compile(
    r"https?://\S+|www\.\S+|[@#][\w.]+|[^\W\d_]+(?:['\u2019\-][^\W\d_]{2,})*\.?|\d+|\S"
)
_TITLES = _words(
    """mr mrs ms miss mx dr prof sir dame lord lady president senator sen rep governor gov mayor
    judge justice minister chancellor king queen prince princess pope father rev reverend saint st
    coach captain capt general gen colonel col lieutenant lt sgt sergeant officer detective agent
    chairman ceo director professor doctor uncle aunt auntie grandma grandpa brother sister bro sis
    mom mum dad"""
)
_SAYING = _words(
    """said says say told tells asked asks wrote writes tweeted tweets posted posts added adds
    replied explained noted announced claimed stated argued insisted according"""
)
_SENT_END = frozenset('.!?:;"')


def tokens(text: str) -> list[tuple[int, int]]:
    """Word tokens of ``text`` as ``(start, end)``; a word's closing full stop is split off unless
    the word is one letter or a title (``J.``, ``Dr.``), and a possessive ``'s`` stands alone."""
    out: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        s, e = m.span()
        w = m.group(0)
        if w.endswith(".") and len(w) > 2 and w[:-1].lower() not in _TITLES and w[0] not in "@#h":
            out += [(s, e - 1), (e - 1, e)]
        else:
            out.append((s, e))
    return out


def _shape(w: str) -> str:
    if w.startswith("@"):
        return "@"
    if w.startswith("#"):
        return "#"
    if w.startswith(("http", "www.")):
        return "url"
    s = re.sub(r"[A-Z\u00c0-\u00de]", "X", w)
    s = re.sub(r"[a-z\u00df-\u024f]", "x", s)
    s = re.sub(r"\d", "d", s)
    return re.sub(r"(.)\1+", r"\1\1", s)[:6]


@lru_cache(maxsize=4)
def en_gazetteer(model_dir: str | None = None) -> tuple[frozenset[str], frozenset[str]]:
    """(given names, surnames) of ``en.gazetteer.json`` beside the model, lower-cased; empty
    where missing."""
    try:
        table = json.loads(
            resolve_path(Path(model_dir or MODEL_DIR) / EN_GAZETTEER).read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        log.info("no English names gazetteer: the tagger runs without it")
        return frozenset(), frozenset()
    return (
        frozenset(w.lower() for w in table.get("given", ())),
        frozenset(w.lower() for w in table.get("surname", ())),
    )


def _row(text: str, s: int, e: int, gaz: tuple[frozenset[str], frozenset[str]]) -> tuple[str, ...]:
    w = text[s:e]
    low = w.lower().strip(".")
    g = ("g" if low in gaz[0] else "") + ("s" if low in gaz[1] else "")
    return (low, _shape(w), g or "-", low[:3], low[-3:])


def features(
    text: str,
    toks: list[tuple[int, int]],
    rule_spans: list[tuple[int, int]],
    gaz: tuple[frozenset[str], frozenset[str]],
) -> list[list[str]]:
    """The CRF features of each token of ``toks`` (see the module docstring)."""
    rows = [_row(text, s, e, gaz) for s, e in toks]
    rule = []
    for s, e in toks:
        span = next(((a, b) for a, b in rule_spans if a <= s and e <= b), None)
        rule.append("O" if span is None else ("B" if span[0] == s else "I"))
    n = len(rows)
    letters = "".join(
        text[s:e] for s, e in toks if not text[s:e].startswith(("@", "#", "http", "www."))
    )
    upper = sum(c.isupper() for c in letters)
    case = (
        "none"
        if upper == 0
        else ("caps" if upper > 0.6 * sum(c.isalpha() for c in letters) else "mixed")
    )
    out = []
    for i, (low, shape, g, pre, suf) in enumerate(rows):
        first = i == 0 or rows[i - 1][0] in _SENT_END or "\n" in text[toks[i - 1][1] : toks[i][0]]
        f = [
            "bias",
            "w=" + low,
            "sh=" + shape,
            "g=" + g,
            "p3=" + pre,
            "s3=" + suf,
            "s2=" + low[-2:],
            "rule=" + rule[i],
            "first=" + ("1" if first else "0"),
            f"sh/g={shape}/{g}",
            f"sh/first={shape}/{int(first)}",
            "len=" + str(min(len(low), 8)),
            "case=" + case,
            f"case/g={case}/{g}",
            f"case/sh={case}/{shape}",
            "p4=" + low[:4],
            "s4=" + low[-4:],
        ]
        if 0 < i < n - 1:
            f.append(f"g-1/g/g+1={rows[i - 1][2]}/{g}/{rows[i + 1][2]}")
        for d in (-2, -1, 1, 2):
            j = i + d
            if not 0 <= j < n:
                f.append(f"{d}edge")
                continue
            jl, jsh, jg = rows[j][:3]
            f += [f"{d}w={jl}", f"{d}sh={jsh}", f"{d}g={jg}"]
            if abs(d) == 1:
                f += [f"{d}rule={rule[j]}", f"{d}sh/sh={jsh}/{shape}"]
        if i > 0 and rows[i - 1][0] in _TITLES:
            f.append("title-1")
        if i > 1 and rows[i - 2][0] in _TITLES:
            f.append("title-2")
        if any(0 <= i + d < n and rows[i + d][0] in _SAYING for d in (1, 2, 3)):
            f.append("saying+")
        if any(0 <= i - d < n and rows[i - d][0] in _SAYING for d in (1, 2)):
            f.append("saying-")
        out.append(f)
    return out


def labels(toks: list[tuple[int, int]], gold: list[tuple[int, int]]) -> list[str]:
    """``B``/``I``/``O`` of each token for gold spans (a token starting inside a span is inside
    it)."""
    out = []
    for s, _ in toks:
        span = next(((a, b) for a, b in gold if a <= s < b), None)
        out.append("O" if span is None else ("B" if span[0] == s else "I"))
    return out


@lru_cache(maxsize=4)
def _model(model_dir: str | None = None) -> Any | None:

    return load("en", model_dir)


_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")
_NOT_LATIN = re.compile(r"[\u0370-\u1dbf\u3000-\ufaff\uac00-\ud7af]")  # Greek on: no English name


def en_scored_spans(
    text: str, model_dir: str | None = None, floor: float | None = None
) -> tuple[list[tuple[int, int, float]], list[tuple[int, int]]] | None:
    """``(CRF spans with their score, rule-finder spans)`` of NFC ``text``, or None where the
    English model or python-crfsuite is missing. A span is a run of tokens whose marginal P(B) +
    P(I) reaches ``floor`` (default: the card's ``en`` threshold); its score is the lowest marginal
    in it. Lines are tagged one by one."""

    model = _model(model_dir)
    if model is None:
        return None
    rules = en_name_spans(text)
    if not _LETTER.search(text):
        return [], rules
    cut = threshold("en", model_dir) if floor is None else floor
    gaz = en_gazetteer(model_dir)
    spans: list[tuple[int, int, float]] = []
    pos = 0
    for line in text.split("\n"):
        toks = [(s + pos, e + pos) for s, e in tokens(line)]
        pos += len(line) + 1
        if not toks or not any(_LETTER.search(text, s, e) for s, e in toks):
            continue
        tags = model.tag(features(text, toks, rules, gaz))
        probs: list[float] = []
        tags = threshold_tags(model, tags, cut, probs)
        morphs = [(s, e, "", "") for s, e in toks]
        for s, e in decode(morphs, tags):
            if _NOT_LATIN.search(text, s, e):
                # a Korean or Japanese word inside English text is the other finders' to read
                continue
            score = min(p for (a, _), p in zip(toks, probs, strict=True) if s <= a < e)
            spans.append((s, e, score))
    return spans, rules


def en_crf_spans(
    text: str, model_dir: str | None = None, cut: float | None = None
) -> list[tuple[int, int]] | None:
    """English name spans of the CRF at its threshold (``cut``: another), or None where it cannot
    run here."""
    scored = en_scored_spans(text, model_dir, cut)
    return None if scored is None else [(s, e) for s, e, _ in scored[0]]
