"""Whether a span of text stands as a whole word: the masker's and the name finders' one definition.

A span ``[start, end)`` is a whole word when both of its edges are word boundaries:

- **Script change or non-letter**: an edge between two different scripts (Latin/digits, Hangul,
  Japanese) or next to a character that is no letter or digit is a boundary, except that a Latin
  span never starts right after ``letter + apostrophe`` (``Brien`` inside ``O'Brien``); ``John`` in
  ``John's`` ends at a boundary.
- **Latin and digits** (English): two letters or digits side by side are inside one word.
- **Japanese** (kana, kanji): an edge between two Japanese characters is a boundary only where MeCab
  (fugashi + unidic) puts a morpheme boundary. Line breaks between two Japanese characters (with the
  indentation around them) are removed before parsing and before judging the edge, because wrapped
  text breaks words anywhere: ``オプ`` is not a word in ``オプ\\nション``. A run of katakana is one
  word (``ローダ`` is no word in ``ブートローダ``; ``・`` separates words).
- **Korean** (Hangul): a span starts a word only at the start of an eojeol (no Hangul syllable
  before it) and ends one at the eojeol's end or before what may follow a name in the same eojeol —
  particles, the copula and its endings, honorifics, titles and kin words used as titles
  (``김연아의``, ``김연아씨는``, ``김연아였다``, ``원빈말고는``, ``성룡아저씨가``); ``표시`` does
  not end a word in ``표시되는``. Where python-mecab-ko is installed, a tail the tagger reads as
  grammatical morphemes only (particles, endings, copula, nominal suffixes) also counts.

Without fugashi every edge between two Japanese characters counts as a boundary (the masker then
behaves as before rather than leaking names).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_JA = re.compile(
    r"[\u3041-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3400-\u4dbf"
    r"\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f々〆]"
)
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc\uff66-\uff9f]")  # not ・ (U+30FB): it separates names
# not ㆍ (U+318D), a list separator
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3131-\u318c]")
_LATIN = re.compile(r"[0-9A-Za-z\u00c0-\u024f\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
_APOSTROPHES = frozenset("'\u2019")
# a line break (with the indentation around it) between two Japanese characters: wrapped text
_WRAP = re.compile(
    r"(?<=[\u3041-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff々ー])[ \t\u3000]*\r?\n[ \t\u3000]*"
    r"(?=[\u3041-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff々ー])"
)
_KO_PARTICLES = (
    "의|은|는|이|가|을|를|에|에게|에게서|에서|께|께서|한테|한테서|와|과|도|만|로|으로|로서|으로서|"
    "로부터|으로부터|이나|나|랑|이랑|까지|부터|보다|처럼|조차|마저|밖에|마다|뿐|이며|며|이고|고|"
    "이다|다|이었다|였다|이었고|였고|이었던|였던|이라고|라고|이라는|라는|이란|란|이라며|라며|이자|"
    "이든|든|입니다|이에요|예요|이야|야|아|여|이지만|지만|인|인데|이면|면|이니|이던|던|야말로|"
    "이야말로|이라도|라도|에서는|에서도|에게는|에게도|와의|과의|로는|으로는|에는|에도|께는|만의|들|"
    "들의|들은|들이|들을|들과|들도|들에게|같은|같이|씬|말고|때문에|땜에|덕에|덕분에"
)
_KO_HONORIFICS = (
    "씨|님|군|양|옹|여사|선생|선생님|선수|감독|의원|대표|회장|사장|교수|박사|기자|작가|대통령|총리|"
    "장관|측|씨측|부부|일가|가족|전|후보|변호사|위원장|목사|신부|스님|코치|아저씨|언니|형|누나|"
    "오빠|선배"
)
_KO_TAIL = re.compile(rf"(?:(?:{_KO_HONORIFICS})(?:님)?)?(?:(?:{_KO_PARTICLES}))*")
_KO_GRAMMAR_TAGS = ("J", "E", "VCP", "XSN")


def _script(ch: str) -> str:
    if _JA.match(ch):
        return "ja"
    if _HANGUL.match(ch):
        return "ko"
    if _LATIN.match(ch):
        return "latin"
    return ""


@dataclass(frozen=True, slots=True)
class _Layout:
    """The text with wrap gaps between Japanese characters removed, and the map back to the text."""

    joined: str
    removed_before: tuple[int, ...]  # gap starts (text offsets), sorted
    removed_total: tuple[int, ...]  # characters removed up to and including each gap
    gap_ends: tuple[int, ...]
    ja_bounds: frozenset[int] | None  # morpheme boundaries in ``joined`` (None: no tagger)

    def to_joined(self, pos: int) -> int:
        """The offset in ``joined`` of text offset ``pos`` (a position inside a gap maps to the
        gap's end)."""
        k = bisect_right(self.removed_before, pos) - 1
        if k < 0:
            return pos
        if pos < self.gap_ends[k]:  # inside gap k: the same joined position as its end
            return self.gap_ends[k] - self.removed_total[k]
        return pos - self.removed_total[k]


@lru_cache(maxsize=1)
def _ja_tagger() -> Any | None:
    try:
        import fugashi

        return fugashi.Tagger()
    except (ImportError, RuntimeError):
        return None


@lru_cache(maxsize=1)
def _ko_tagger() -> Any | None:
    try:
        from mecab import MeCab

        return MeCab()
    except (ImportError, RuntimeError):
        return None


def _ja_boundaries(joined: str) -> frozenset[int] | None:
    tagger = _ja_tagger()
    if tagger is None:
        return None
    bounds: set[int] = set()
    pos = 0
    for word in tagger(joined):
        surface = word.surface
        found = joined.find(surface, pos) if surface else -1
        if found < 0:
            continue
        bounds.add(found)
        bounds.add(found + len(surface))
        pos = found + len(surface)
    return frozenset(bounds)


@lru_cache(maxsize=8)
def _layout(text: str) -> _Layout:
    starts, totals, ends = [], [], []
    pieces, last, total = [], 0, 0
    for m in _WRAP.finditer(text):
        pieces.append(text[last : m.start()])
        total += m.end() - m.start()
        starts.append(m.start())
        ends.append(m.end())
        totals.append(total)
        last = m.end()
    pieces.append(text[last:])
    joined = "".join(pieces)
    bounds = _ja_boundaries(joined) if _JA.search(joined) else frozenset()
    return _Layout(joined, tuple(starts), tuple(totals), tuple(ends), bounds)


def _ko_tail_ok(tail: str, word: str, cut: int) -> bool:
    """Whether ``tail`` (the rest of the eojeol ``word`` after offset ``cut``) may follow a name."""
    if _KO_TAIL.fullmatch(tail):
        return True
    tagger = _ko_tagger()
    if tagger is None:
        return False
    morphs = tagger.parse(word)
    if not any(m.span.end == cut for m in morphs):
        return False
    after = [m for m in morphs if m.span.start >= cut]
    return bool(after) and all(
        all(part.startswith(_KO_GRAMMAR_TAGS) for part in m.feature.pos.split("+")) for m in after
    )


def _inside_katakana(s: str, pos: int) -> bool:
    """A run of katakana is one word (ブートローダ, クライアント), whatever MeCab's boundaries
    inside it."""
    return bool(_KATAKANA.match(s[pos - 1]) and _KATAKANA.match(s[pos]))


def _left_ok(lay: _Layout, start: int) -> bool:
    s = lay.joined
    if start <= 0 or start >= len(s):
        return True
    a, b = _script(s[start - 1]), _script(s[start])
    if not b:
        return True
    if not a:
        return not (
            b == "latin"
            and s[start - 1] in _APOSTROPHES
            and start >= 2
            and _script(s[start - 2]) == "latin"
        )
    if a != b:
        return True
    if a == "ja":
        return not _inside_katakana(s, start) and (lay.ja_bounds is None or start in lay.ja_bounds)
    return False  # latin or Hangul on both sides: inside one word


def _right_ok(lay: _Layout, end: int) -> bool:
    s = lay.joined
    if end <= 0 or end >= len(s):
        return True
    a, b = _script(s[end - 1]), _script(s[end])
    if not a or not b or a != b:
        return True
    if a == "ja":
        return not _inside_katakana(s, end) and (lay.ja_bounds is None or end in lay.ja_bounds)
    if a == "ko":
        word_start = end
        while word_start > 0 and _script(s[word_start - 1]) == "ko":
            word_start -= 1
        word_end = end
        while word_end < len(s) and _script(s[word_end]) == "ko":
            word_end += 1
        return _ko_tail_ok(s[end:word_end], s[word_start:word_end], end - word_start)
    return False


def is_whole_word(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` stands as a whole word of NFC ``text`` (see the module
    docstring).

    >>> is_whole_word("オプションを指定", 0, 2), is_whole_word("김연아의 경기", 0, 3)
    (False, True)
    >>> is_whole_word("Michael O'Brien", 10, 15), is_whole_word("표시되는 값", 0, 2)
    (False, False)
    """
    if not 0 <= start < end <= len(text):
        return False
    lay = _layout(text)
    js, je = lay.to_joined(start), lay.to_joined(end)
    if je <= js:
        return False
    return _left_ok(lay, js) and _right_ok(lay, je)


def starts_korean_word(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` starts a Korean eojeol (no Hangul right before it), starts and
    ends with a Hangul syllable and holds at least two: a name written glued to the next word
    (``소지섭하는듯``).

    >>> starts_korean_word("소지섭하는듯", 0, 3)
    True
    >>> starts_korean_word("이소지섭", 1, 4), starts_korean_word("박모", 0, 1)
    (False, False)
    """
    if not 0 <= start < end <= len(text) or (start > 0 and _HANGUL.match(text[start - 1])):
        return False
    span = text[start:end]
    syllables = sum("\uac00" <= ch <= "\ud7a3" for ch in span)
    return syllables >= 2 and "\uac00" <= span[0] <= "\ud7a3" and "\uac00" <= span[-1] <= "\ud7a3"
