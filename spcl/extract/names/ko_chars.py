"""Character-level features and labels of the Korean person-name CRF
(``models/names-crf/ko.crfsuite``).

KLUE marks person spans on characters, not on morphemes or eojeols: ``김`` of ``김씨``, ``최영`` of
``최영장군``, ``유느`` … A CRF over morphemes loses every name whose edge mecab-ko puts inside a
morpheme (names glued to words in reviews, unknown foreign names split oddly). This CRF labels each
non-space character ``B``/``I``/``O``; what the morphemes know is projected onto their characters:
part of speech, the ``인명`` class, the place of the character in its morpheme and in its eojeol,
the tags of the morphemes before and after, and whether the rule finders (``spcl.extract.names.ko``)
put the character in a name. Context characters and character n-grams at ±2 (a space is ``_``) and a
gazetteer built from the **training split only** (:func:`build_gazetteer`: how often a syllable
starts or lies inside a person span, bucketed) complete the features. A run of ``B``/``I``
characters is one name span (it may cross a space: ``리암 니슨``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

# start, end, surface, "POS|semantic" (spcl.extract.names.tagger.Morph)
Morph = tuple[int, int, str, str]

_TITLES_AFTER = frozenset(
    (
        "씨",
        "님",
        "군",
        "양",
        "선수",
        "감독",
        "의원",
        "대표",
        "회장",
        "교수",
        "기자",
        "대통령",
        "총리",
        "장관",
        "작가",
        "배우",
        "가수",
        "형사",
        "장군",
        "역",
        "역의",
        "전",
        "당선인",
        "후보",
        "위원장",
        "사장",
        "박사",
        "선생",
        "선생님",
        "오빠",
        "언니",
        "누나",
        "형",
        "아저씨",
        "여사",
        "대변인",
        "실장",
        "조합원",
    )
)
_ROLES_BEFORE = frozenset(
    (
        "배우",
        "가수",
        "감독",
        "대통령",
        "총리",
        "장관",
        "작가",
        "선수",
        "대표",
        "의원",
        "회장",
        "교수",
        "기자",
        "씨",
        "주연",
        "대배우",
        "총격범",
        "용의자",
        "피의자",
        "어머니",
        "아버지",
        "남편",
        "아내",
        "신청인",
        "보호자",
        "성명",
    )
)


@lru_cache(maxsize=4096)
def _ctype(ch: str) -> str:
    if "가" <= ch <= "힣":
        return "H"
    if "\u1100" <= ch <= "\u11ff" or "\u3131" <= ch <= "\u318e":
        return "J"  # jamo: ᄏᄏ, ᅳᅳ
    if ch.isascii() and ch.isalpha():
        return "U" if ch.isupper() else "L"
    if ch.isdigit():
        return "D"
    if "\u4e00" <= ch <= "\u9fff":
        return "C"
    if ch.isspace():
        return "_"
    return "P"


def _bucket(n: int, total: int) -> str:
    if total < 3:
        return "r"  # rare
    p = n / total
    return "0" if p == 0 else "1" if p < 0.05 else "2" if p < 0.2 else "3" if p < 0.5 else "4"


def build_gazetteer(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """``{"first": {syllable: [starts, total]}, "inside": {syllable: [inside, total]}}`` of gold
    records.

    ``starts``: person spans starting with the syllable; ``inside``: occurrences inside a span;
    ``total``: all occurrences in the records' text. Only syllables seen three times or more are
    kept (no rare strings: a syllable is no entity value). Pass the training split only.
    """
    first: Counter[str] = Counter()
    inside: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for r in records:
        text = r["text"]
        total.update(ch for ch in text if _ctype(ch) == "H")
        for s, e in r["persons"]:
            if s < e and _ctype(text[s]) == "H":
                first[text[s]] += 1
            inside.update(ch for ch in text[s:e] if _ctype(ch) == "H")
    keep = sorted(ch for ch, n in total.items() if n >= 3)
    return {
        "first": {ch: [first[ch], total[ch]] for ch in keep if first[ch]},
        "inside": {ch: [inside[ch], total[ch]] for ch in keep if inside[ch]},
        "seen": {ch: [0, total[ch]] for ch in keep if not inside[ch]},
    }


def technical_words(texts: Iterable[str], parse: Any, min_count: int = 2) -> list[str]:
    """Nouns of two or more syllables (mecab-ko ``NN*``, glued noun runs joined) seen ``min_count``
    times or more in person-free technical ``texts`` (the training negatives): ``드로우``,
    ``레이어``, ``정규식`` … A CRF span that is one of them is no name (help text and manuals name
    programs, not people)."""
    counts: Counter[str] = Counter()
    for text in texts:
        parsed = parse(text) or []
        run: list[Any] = []
        for m in [*parsed, None]:
            if (
                m is not None
                and m.feature.pos.startswith("NN")
                and (not run or run[-1].span.end == m.span.start)
            ):
                run.append(m)
                continue
            # every glued noun run and each noun alone: 드로우, 레이블 필드
            for k in range(len(run)):
                for j in range(k + 1, len(run) + 1):
                    word = text[run[k].span.start : run[j - 1].span.end]
                    if len(word) >= 2 and all("가" <= c <= "힣" for c in word):
                        counts[word] += 1
            run = [m] if m is not None and m.feature.pos.startswith("NN") else []
    return sorted(w for w, n in counts.items() if n >= min_count)


def gaz_lookup(gaz: dict[str, dict[str, list[int]]]) -> dict[str, tuple[str, str]]:
    """Per syllable, its (starts-a-name, inside-a-name) buckets of a :func:`build_gazetteer`
    table."""
    out: dict[str, tuple[str, str]] = {}
    for ch in gaz.get("seen", {}):
        out[ch] = ("0", "0")
    for ch, (n, total) in gaz.get("inside", {}).items():
        out[ch] = ("0", _bucket(n, total))
    for ch, (n, total) in gaz.get("first", {}).items():
        out[ch] = (_bucket(n, total), out.get(ch, ("0", "0"))[1])
    return out


_SPACE = re.compile(r"\s")


def tokens(text: str, start: int, end: int) -> list[int]:
    """Offsets of the non-space characters of ``text[start:end]`` (the CRF's tokens)."""
    return [i for i in range(start, end) if not text[i].isspace()]


def features(
    text: str,
    idx: list[int],
    morphs: list[Morph],
    rule_spans: list[tuple[int, int]],
    gaz: dict[str, tuple[str, str]],
) -> list[list[str]]:
    """The CRF features of each character at the offsets ``idx`` (see the module docstring)."""
    n = len(text)
    if not idx:
        return []
    # the window of the tokens and one character around
    base, top = max(0, idx[0] - 1), min(n, idx[-1] + 2)
    owner = [-1] * (top - base)  # index of the morpheme covering each character of the window
    for k in range(bisect_right(_ends(morphs), base), len(morphs)):
        s, e = morphs[k][0], morphs[k][1]
        if s >= top:
            break
        for i in range(max(s, base), min(e, top)):
            owner[i - base] = k
    rule = ["O"] * (top - base)
    for s, e in rule_spans:
        for i in range(max(s, base), min(e, top)):
            rule[i - base] = "B" if i == s else "I"

    def ch(i: int) -> str:
        return "^" if i < 0 else "$" if i >= n else ("_" if text[i].isspace() else text[i])

    # eojeol end -> start, end and its context features
    words: dict[int, tuple[int, int, list[str]]] = {}
    out = []
    ws = we = -1
    for i in idx:
        c = text[i]
        if i >= we:  # a new eojeol: its bounds and the words around it, once
            ws = i
            while ws > 0 and not text[ws - 1].isspace():
                ws -= 1
            we = i + 1
            while we < n and not text[we].isspace():
                we += 1
            words[we] = (ws, we, _around(text, ws, we))
        cm1, cm2, cp1, cp2 = ch(i - 1), ch(i - 2), ch(i + 1), ch(i + 2)
        g = gaz.get(c, ("r", "r"))
        f = [
            "b",
            "c=" + c,
            "t=" + _ctype(c),
            "c-1=" + cm1,
            "c+1=" + cp1,
            "c-2=" + cm2,
            "c+2=" + cp2,
            "c-1c=" + cm1 + c,
            "cc+1=" + c + cp1,
            "c-1cc+1=" + cm1 + c + cp1,
            "c-2c-1=" + cm2 + cm1,
            "c+1c+2=" + cp1 + cp2,
            "t-1t+1=" + _ctype(cm1[0]) + _ctype(cp1[0]),
            "wp=" + str(min(i - ws, 4)),
            "we=" + str(min(we - i - 1, 4)),
            "wl=" + str(min(we - ws, 7)),
            "gf=" + g[0],
            "gi=" + g[1],
            "rule=" + rule[i - base],
            "rule-1=" + (rule[i - 1 - base] if i > 0 else "^"),
            "rule+1=" + (rule[i + 1 - base] if i + 1 < n else "$"),
        ]
        gp, gn = gaz.get(cm1, ("r", "r")), gaz.get(cp1, ("r", "r"))
        f += ["gi-1=" + gp[1], "gi+1=" + gn[1], "gf/gi+1=" + g[0] + gn[1]]
        k = owner[i - base]
        if k >= 0:
            ms, me, surface, pos = morphs[k]
            tag, _, sem = pos.partition("|")
            tag0 = tag.split("+")[0]
            place = "S" if me - ms == 1 else "B" if i == ms else "E" if i == me - 1 else "M"
            f += [
                "p=" + tag0,
                "sem=" + sem,
                "mp=" + place,
                "p/mp=" + tag0 + place,
                "p/c=" + tag0 + c,
                "ml=" + str(min(me - ms, 5)),
            ]
            if len(surface) <= 4:
                f.append("m=" + surface)
            prev = morphs[k - 1] if k > 0 else None
            nxt = morphs[k + 1] if k + 1 < len(morphs) else None
            f.append(
                "p-1="
                + (
                    prev[3].split("|")[0].split("+")[0] + ("_" if prev[1] < ms else "")
                    if prev
                    else "^"
                )
            )
            f.append(
                "p+1="
                + (
                    nxt[3].split("|")[0].split("+")[0] + ("_" if nxt[0] > me else "")
                    if nxt
                    else "$"
                )
            )
            if nxt is not None and len(nxt[2]) <= 4:
                f.append("m+1=" + nxt[2])
            if prev is not None and len(prev[2]) <= 4:
                f.append("m-1=" + prev[2])
        f += words[we][2]
        tail = text[i + 1 : we]
        if len(tail) <= 3:
            f.append("tail=" + tail)
        out.append(f)
    return out


def _ends(morphs: list[Morph]) -> list[int]:
    return [m[1] for m in morphs]


def _around(text: str, ws: int, we: int) -> list[str]:
    """Features of the eojeol ``[ws, we)`` from the words around it: titles and roles (김 의원,
    가수 아이유)."""
    n = len(text)
    f = []
    after = _SPACE.split(text[we : we + 12].lstrip(), maxsplit=1)[0] if we < n else ""
    before_end = ws - 1
    while before_end > 0 and text[before_end - 1].isspace():
        before_end -= 1
    before = text[max(0, before_end - 12) : before_end].split()[-1:] if before_end > 0 else []
    if after in _TITLES_AFTER or after[:2] in _TITLES_AFTER:
        f.append("title+")
    if before and before[0] in _ROLES_BEFORE:
        f.append("role-")
    return f


def labels(text: str, idx: list[int], gold: list[tuple[int, int]]) -> list[str]:
    """``B``/``I``/``O`` of each character at ``idx`` for gold spans (``B`` at a span's first
    character)."""
    out = []
    for i in idx:
        span = next(((s, e) for s, e in gold if s <= i < e), None)
        out.append("O" if span is None else ("B" if i == span[0] else "I"))
    return out


def decode(text: str, idx: list[int], tags: list[str]) -> list[tuple[int, int]]:
    """Spans of the runs of ``B``/``I`` characters (a ``B`` starts a new span; a run may cross
    spaces)."""
    spans: list[tuple[int, int]] = []
    open_ = False
    for i, tag in zip(idx, tags, strict=True):
        if tag == "B" or (tag == "I" and not open_):
            spans.append((i, i + 1))
            open_ = True
        elif tag == "I":
            gap = text[spans[-1][1] : i]
            if gap.strip():
                # a non-space gap (cannot happen: every non-space is a token)
                spans.append((i, i + 1))
            else:
                spans[-1] = (spans[-1][0], i + 1)
        else:
            open_ = False
    return [t for t in (_trim(text, s, e) for s, e in spans) if t is not None]


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A span without the punctuation at its edges (``정도!`` → ``정도``), None when nothing is
    left."""
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return (start, end) if start < end else None
