"""A value as a model printed it, read against the source: where else it may sit, and what it points
at.

:func:`relocate` finds a value that does not occur in the source as printed under the readings the
extractor contract (``spcl.extract.contract``) accepts: without a column the model added, unquoted,
without punctuation, as a list, for PERSON without a title or suffix, in another compatibility form,
case or spacing (``spcl.mask.loose``). :func:`near_source` tells whether a value found under none of
them (a hallucination) still plausibly refers to text of the source, so that the document is not
released.
"""

from __future__ import annotations

import re

from spcl.mask.loose import loose_surfaces
from spcl.mask.variants import NUMERIC_TYPES, normalize_type, occurs

_QUOTES = {
    '"': '"',
    "'": "'",
    "`": "`",
    "“": "”",
    "‘": "’",
    "「": "」",
    "『": "』",
    "«": "»",
    "**": "**",
    "*": "*",
}
_LIST_SEPARATORS = re.compile(r"\s*[,;、，；]\s*")
_EDGE_PUNCTUATION = " .,;:!?。、，．！？"
_TITLES = frozenset(
    {"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "dame", "madam", "mister"}
)
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "phd", "md"})


def _unquote(value: str) -> str:
    """``value`` without one pair of quotes, backticks or markdown emphasis around it (as is when
    it has none)."""
    for left, right in _QUOTES.items():
        if len(value) > len(left) + len(right) and value.startswith(left) and value.endswith(right):
            return value[len(left) : -len(right)].strip()
    return value


def relocate(type_: str, value: str, text: str) -> list[tuple[str, str]]:
    """Rows for a value not in ``text`` as printed, from the first reading of it that occurs: the
    value (its first tab column) and its loose forms (``spcl.mask.loose``); it unquoted and without
    punctuation around it; each item of it read as a list (``A, B``; not for numeric types); for
    PERSON, it without a title or suffix the model added (``Mr. A B``, ``A B Jr``; whole words
    only). ``[]``: a hallucination."""
    printed = value
    # a further column the model added (a score, a note): the value is the first one
    if "\t" in value:
        value = value.split("\t", 1)[0].strip()
    bare = _unquote(value).strip(_EDGE_PUNCTUATION)
    # a list of names or addresses; never of numbers (``March 5, 1990`` is no list of ``1990``)
    items = (
        [_unquote(v).strip(_EDGE_PUNCTUATION) for v in _LIST_SEPARATORS.split(bare)]
        if type_ not in NUMERIC_TYPES
        else []
    )
    words = bare.split()
    # (values, whole words only, spaces optional); spaces are made optional last, so that ``A B.``
    # finds every ``A B`` before ``A B .`` alone
    readings: list[tuple[list[str], bool, bool]] = [
        ([value], False, False),
        ([bare], False, False),
        ([v for v in items if len(v) >= 2] if len(items) > 1 else [], False, False),
    ]
    if type_ == "PERSON" and len(words) >= 2:
        if words[0].rstrip(".").casefold() in _TITLES:
            readings.append(([" ".join(words[1:])], True, False))
        if words[-1].rstrip(".").casefold() in _SUFFIXES:
            readings.append(([" ".join(words[:-1])], True, False))
    readings.append(([value], False, True))
    tried: list[tuple[list[str], bool]] = []
    for reading, whole, unspaced in readings:
        if not reading or (reading, unspaced) in tried:
            continue
        tried.append((reading, unspaced))
        rows: list[tuple[str, str]] = []
        for v in reading:
            if v != printed and not whole and occurs(type_, v, text):
                rows.append((type_, v))
            rows += [
                (type_, surface)
                for surface in loose_surfaces(v, text, whole_words=whole, unspaced=unspaced)
            ]
        if rows:
            return rows
    return []


_CJK_RUN = re.compile(
    r"[\u3040-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    r"\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]{2,}"
)
_HAN_HANGUL_PAIR = re.compile(r"(?=([\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]{2}))")
_LETTERS = re.compile(r"[^\W\d_]+")
_FUNCTION_WORDS = frozenset(
    {
        "the",
        "an",
        "and",
        "or",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "from",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "we",
        "our",
        "you",
        "he",
        "she",
        "they",
        "his",
        "her",
        "their",
        "my",
        "is",
        "are",
        "was",
        "be",
        "as",
        "if",
        "but",
        "not",
        "no",
    }
)
"""Capitalised at a sentence start in almost any English text: shared, they point at nothing."""


def near_source(type_: str, value: str, text: str) -> bool:
    """Whether a hallucinated ``value`` plausibly refers to text of ``text``: for a non-numeric
    type, it shares with it a capitalised whole word of two or more letters (not a function word:
    ``The``), two adjacent Han/Hangul characters, or a whole kana word of two or more characters
    (``・`` separates words; kana pairs alone are too common).

    >>> near_source("PERSON", "Jonathan A. Smithers", "Jonathan Smithers wrote.")
    True
    >>> near_source("PERSON", "Ann", "Bo")
    False
    >>> near_source("PERSON", "김가산", "김가상 씨"), near_source("PHONE", "Smith 1", "Smith 2")
    (True, False)
    >>> near_source("PERSON", "ジョン・スミザース", "ジョン・スミス")
    True
    >>> near_source("PERSON", "ジョージ", "ジョン")
    False
    """
    if normalize_type(type_) in NUMERIC_TYPES:
        return False
    for run in _CJK_RUN.findall(value):
        if run in text or any(pair in text for pair in _HAN_HANGUL_PAIR.findall(run)):
            return True
    for word in _LETTERS.findall(_CJK_RUN.sub(" ", value)):
        if len(word) < 2 or not word[0].isupper() or word.casefold() in _FUNCTION_WORDS:
            continue
        if re.search(rf"(?<![^\W\d_]){re.escape(word)}(?![^\W\d_])", text):
            return True
    return False
