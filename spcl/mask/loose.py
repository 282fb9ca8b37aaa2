"""Where a value the model printed *loosely* stands in the source: the source's own surfaces of it.

A model often prints a value the way it "should" look, not the way the document wrote it:
NFKC-folded (full-width Latin and digits, half-width katakana), in another case, with one space
where the source breaks the line or has two spaces, with no space where a CJK line was broken,
without a zero-width character or a soft hyphen. Such a row is not a hallucination, and dropping it
would release the value in clear.

``loose_surfaces(value, text)`` folds both sides character by character — each character of the NFC
source becomes ``NFKD(casefold(NFKD(ch)))``, format characters (Unicode category ``Cf``: zero-width
space/joiners, soft hyphen, BOM, bidi marks) vanish, a run of whitespace becomes one space — and
returns the source substrings whose fold equals the value's fold. If there is none, whitespace is
removed on both sides and the search is repeated. A match must start and end on whole source
characters (``タ`` never matches inside ``ダ``, whose voiced mark is part of the character) and
obeys the digit boundary (``123456`` never matches inside ``91234567``). The caller masks the
returned surfaces as literals, so what is replaced is exactly what the document holds. The contract
parser uses it twice: to locate a value that is not in the source as printed, and to find the other
forms of one that is (``JOHN SMITH`` beside ``John Smith``; as whole words only for PERSON and REL,
so ``John`` never adds ``JOHN`` from inside ``JOHNSON``).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from spcl.mask.words import is_whole_word

_DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uff0d", "-"))


@lru_cache(maxsize=65536)
def _fold_char(ch: str) -> str:
    """The fold of one character ('' for a format character, ' ' for whitespace)."""
    if ch.isspace():
        return " "
    if unicodedata.category(ch) == "Cf":
        return ""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold()).translate(
        _DASHES
    )
    return "".join(c for c in folded if unicodedata.category(c) != "Cf")


def _fold(text: str, keep_spaces: bool) -> tuple[str, list[int], list[bool]]:
    """``(folded, origin, starts)``: ``origin[j]`` is the source index of folded character ``j``,
    ``starts[j]`` whether it is the first folded character of its source character (``starts`` has
    one extra True at the end)."""
    out: list[str] = []
    origin: list[int] = []
    starts: list[bool] = []
    for i, ch in enumerate(text):
        f = _fold_char(ch)
        if f == " " or (f and f.isspace()):
            if not keep_spaces or (out and out[-1] == " "):
                continue
            f = " "
        for k, c in enumerate(f):
            out.append(c)
            origin.append(i)
            starts.append(k == 0)
    starts.append(True)
    return "".join(out), origin, starts


# one document's two folds serve all of its rows (values are folded uncached, so they never evict
# it); a fold holds ~20 bytes per character, and documents may reach input.max_text_chars
_fold_document = lru_cache(maxsize=2)(_fold)


def _spans(value: str, text: str, keep_spaces: bool) -> list[tuple[int, int]]:
    needle = _fold(value, keep_spaces)[0].strip()
    if not needle:
        return []
    hay, origin, starts = _fold_document(text, keep_spaces)
    found: list[tuple[int, int]] = []
    at = hay.find(needle)
    while at >= 0:
        end = at + len(needle)
        whole = starts[at] and starts[end]
        digits_ok = not (needle[0].isdigit() and at > 0 and hay[at - 1].isdigit()) and not (
            needle[-1].isdigit() and end < len(hay) and hay[end].isdigit()
        )
        if whole and digits_ok:
            found.append((origin[at], origin[end - 1] + 1))
        at = hay.find(needle, at + 1)
    return found


def loose_surfaces(
    value: str, text: str, whole_words: bool = False, unspaced: bool = True
) -> list[str]:
    """The distinct substrings of NFC ``text`` that equal ``value`` once both are folded (module
    docstring), in source order; ``[]`` when there is none. ``whole_words``: only those standing as
    whole words (``spcl.mask.words.is_whole_word``). ``unspaced``: when nothing matches with spaces
    kept, match with all whitespace removed.

    >>> text = "JONATHAN\\nSmithers, Ｊｏｎａｔｈａｎ  Ｓｍｉｔｈｅｒｓ"
    >>> loose_surfaces("Jonathan Smithers", text)
    ['JONATHAN\\nSmithers', 'Ｊｏｎａｔｈａｎ  Ｓｍｉｔｈｅｒｓ']
    """
    spans = _spans(value, text, keep_spaces=True)
    if not spans and unspaced:
        spans = _spans(value, text, keep_spaces=False)
    if whole_words and spans:
        spans = [(s, e) for s, e in spans if is_whole_word(text, s, e)]
    out: list[str] = []
    for start, end in spans:
        surface = text[start:end].strip()
        if surface and surface not in out:
            out.append(surface)
    return out
