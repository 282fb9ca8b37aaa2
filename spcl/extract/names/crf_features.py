"""The CRF features of the Japanese and Korean name tagger (``spcl.extract.names.tagger``): per
morpheme its surface, part of speech, script class, rule hit, honorific and surname flags, its
neighbours, its unit (a Korean eojeol or a run of glued katakana), and, with a gazetteer, the
gazetteer classes of its unit's parts.
"""

from __future__ import annotations

import re
from functools import lru_cache

Morph = tuple[int, int, str, str]  # start, end, surface, pos string

_HONORIFICS = frozenset(
    (
        "さん",
        "様",
        "さま",
        "氏",
        "君",
        "くん",
        "ちゃん",
        "殿",
        "先生",
        "容疑者",
        "被告",
        "監督",
        "選手",
        "社長",
        "首相",
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
        "씨는",
        "씨가",
        "씨의",
    )
)


_SURNAME_CHARS = frozenset(
    "김이박최정강조윤장임한오서신권황안송류유전홍고문양손배백허남심노하곽성차주우"
    "구민진나지엄채원천방공현함변염여추도소석선설마길연위표명기반라왕금옥육인맹제"
    "모탁국어은편용예경봉사부가복태목형계피두감음빈동온호범좌팽승간상갈단견당"
)  # Korean one-syllable surnames (spcl.extract.names.ko.KO_SURNAMES)


@lru_cache(maxsize=65536)
def char_type(s: str) -> str:
    """The script class of a morpheme's surface: kata, hira, kanji, hangul, latin, digit or
    other."""
    if re.fullmatch(r"[\u30a0-\u30ffー・]+", s):
        return "kata"
    if re.fullmatch(r"[\u3041-\u309f]+", s):
        return "hira"
    if re.fullmatch(r"[\u4e00-\u9fff々]+", s):
        return "kanji"
    if re.fullmatch(r"[가-힣]+", s):
        return "hangul"
    if re.fullmatch(r"[A-Za-zＡ-Ｚａ-ｚ]+", s):
        return "latin"
    if re.fullmatch(r"[0-9０-９]+", s):
        return "digit"
    return "other"


_UNIT_TYPES = frozenset(("kata", "dot"))
_DOT_CHARS = frozenset("・＝=･")


def _units(text: str, morphs: list[Morph], types: list[str], korean: bool) -> list[tuple[int, int]]:
    """For each morpheme, the index range ``[first, last]`` of its unit: a Korean eojeol (morphemes
    glued between spaces), or a Japanese run of glued katakana and name dots
    (``コンスタンチン・ポシエト``)."""
    out: list[tuple[int, int]] = []
    n, i = len(morphs), 0
    while i < n:
        j = i
        if korean or types[i] in _UNIT_TYPES:
            while (
                j + 1 < n
                and morphs[j][1] == morphs[j + 1][0]
                and (korean or types[j + 1] in _UNIT_TYPES)
            ):
                j += 1
        out += [(i, j)] * (j - i + 1)
        i = j + 1
    return out


def features(
    text: str,
    morphs: list[Morph],
    rule_spans: list[tuple[int, int]],
    gaz: dict[str, str] | None = None,
) -> list[list[str]]:
    """The CRF features of each morpheme (see the module docstring); ``gaz``: the Japanese katakana
    name gazetteer (:func:`ja_gazetteer`), whose classes of each katakana part of a unit are
    features (:func:`_gaz_features`)."""
    rows: list[tuple[str, ...]] = []
    k = 0
    spans = sorted(rule_spans)
    # mecab-ko tags (NNP, JKS …); unidic's are kanji
    korean = any(m[3][:1].isupper() for m in morphs[:3])
    for start, end, surface, pos in morphs:
        while k < len(spans) and spans[k][1] <= start:
            k += 1
        rule = "O"
        if k < len(spans) and spans[k][0] <= start and end <= spans[k][1]:
            rule = "B" if spans[k][0] == start else "I"
        ct = "dot" if surface in _DOT_CHARS else char_type(surface)
        rows.append(
            (
                surface,
                pos,
                pos[: pos.find("|", pos.find("|") + 1)],
                ct,
                rule,
                "1" if surface in _HONORIFICS else "0",
                "1" if start > 0 and text[start - 1].isspace() else "0",
                "1" if surface[:1] in _SURNAME_CHARS and len(surface) <= 3 else "0",
            )
        )
    units = _units(text, morphs, [r[3] for r in rows], korean)
    out = []
    n = len(rows)
    for i, row in enumerate(rows):
        f = list(_own(row))
        for d in (-2, -1, 1, 2):
            j = i + d
            if 0 <= j < n:
                f += _near(rows[j], d)
            elif abs(d) == 1:
                f.append(f"{d}edge")
        if i + 1 < n:
            f.append(f"pp/pp={row[2]}/{rows[i + 1][2]}")
        if i > 0:
            f.append(f"w-1/w={rows[i - 1][0]}/{row[0]}")
        first, last = units[i]
        if last > first or korean:
            f += _unit(rows, first, last, i)
        out.append(f)
    if gaz:
        _gaz_features(rows, units, gaz, out)
        _gaz_kanji(morphs, rows, gaz, out)
    return out


_KANJI_NAME_MAX = 8  # characters of the longest kanji full name of the gazetteer (class ``k``)


def _gaz_kanji(
    morphs: list[Morph], rows: list[tuple[str, ...]], gaz: dict[str, str], out: list[list[str]]
) -> None:
    """Mark ``gk=B``/``gk=I`` on the glued kanji morphemes whose surfaces make up a kanji full name
    of the gazetteer (class ``k``: names unidic does not tag 人名 alone, ``薄熙来``), the longest
    match from each start."""
    n, i = len(rows), 0
    while i < n:
        if rows[i][3] != "kanji":
            i += 1
            continue
        best, text, j = -1, rows[i][0], i
        while len(text) <= _KANJI_NAME_MAX:
            if "k" in gaz.get(text, ""):
                best = j
            if j + 1 >= n or rows[j + 1][3] != "kanji" or morphs[j][1] != morphs[j + 1][0]:
                break
            j += 1
            text += rows[j][0]
        if best < 0:
            i += 1
            continue
        out[i].append("gk=B")
        for m in range(i + 1, best + 1):
            out[m].append("gk=I")
        i = best + 1


# ja.gazetteer.json: given, surname, unclassified, part of a full name, full name
_NAME_CLASSES = frozenset("gsupP")


def _gaz_features(
    rows: list[tuple[str, ...]],
    units: list[tuple[int, int]],
    gaz: dict[str, str],
    out: list[list[str]],
) -> None:
    """Add the gazetteer features of each katakana morpheme to ``out``: the classes of its part (the
    katakana between two name dots of its unit, whatever MeCab's cut: ``トビ|アス`` reads as
    ``トビアス``), of the parts before and after it in the unit, of the whole unit without dots
    (``アーサーケストラー``), and whether every part of a dotted unit is a known name part
    (``gall``) or none is (``gnone``)."""
    done: set[int] = set()
    for first, last in units:
        if first in done or rows[first][3] not in _UNIT_TYPES:
            continue
        done.add(first)
        parts: list[tuple[int, int]] = []  # index ranges of the parts between dots
        k = first
        while k <= last:
            if rows[k][3] == "dot":
                k += 1
                continue
            j = k
            while j + 1 <= last and rows[j + 1][3] != "dot":
                j += 1
            parts.append((k, j))
            k = j + 1
        classes = [gaz.get("".join(rows[m][0] for m in range(a, b + 1)), "") for a, b in parts]
        whole = gaz.get(
            "".join(rows[m][0] for m in range(first, last + 1) if rows[m][3] != "dot"), ""
        )
        named = [bool(_NAME_CLASSES.intersection(c)) for c in classes]
        unit_f = [f"gw={c}" for c in whole]
        if len(parts) > 1:
            unit_f.append("gall" if all(named) else ("gnone" if not any(named) else "gsome"))
        for n, (a, b) in enumerate(parts):
            f = [f"gp={c}" for c in classes[n]] or ["gp=-"]
            if n > 0:
                f += [f"gp-1={c}" for c in classes[n - 1]] or ["gp-1=-"]
            if n + 1 < len(parts):
                f += [f"gp+1={c}" for c in classes[n + 1]] or ["gp+1=-"]
            for m in range(a, b + 1):
                out[m] += f + unit_f
        for m in range(first, last + 1):
            if rows[m][3] == "dot":
                out[m] += unit_f


@lru_cache(maxsize=65536)
def _own(row: tuple[str, ...]) -> tuple[str, ...]:
    w, pos, pp, ct, rule, hon, sp, sur = row
    return (
        "bias",
        "w=" + w,
        "pos=" + pos,
        "pp=" + pp,
        "ct=" + ct,
        "rule=" + rule,
        "hon=" + hon,
        "sp=" + sp,
        "l1=" + w[-1:],
        "l2=" + w[-2:],
        "l3=" + w[-3:],
        "f1=" + w[:1],
        "f2=" + w[:2],
        "len=" + str(min(len(w), 5)),
        "sur=" + sur,
        "ct/pp=" + ct + "/" + pp,
    )


@lru_cache(maxsize=131072)
def _near(row: tuple[str, ...], d: int) -> tuple[str, ...]:
    if abs(d) == 1:
        return (
            f"{d}w={row[0]}",
            f"{d}pos={row[1]}",
            f"{d}rule={row[4]}",
            f"{d}hon={row[5]}",
            f"{d}sp={row[6]}",
            f"{d}ct={row[3]}",
            f"{d}l1={row[0][-1:]}",
        )
    return (f"{d}pp={row[2]}", f"{d}hon={row[5]}", f"{d}w={row[0]}", f"{d}ct={row[3]}")


def _unit(rows: list[tuple[str, ...]], first: int, last: int, i: int) -> list[str]:
    """Features of a morpheme's unit (:func:`_units`): its place in the unit, the unit's size,
    whether it has a name dot, the words just before and after the unit, and (Korean) the tags that
    follow in the eojeol."""
    place = "S" if first == last else ("B" if i == first else ("E" if i == last else "M"))
    f = [f"u={place}", f"ulen={min(last - first + 1, 6)}"]
    if any(rows[k][3] == "dot" for k in range(first, last + 1)):
        f.append("udot")
    if any(rows[k][4] != "O" for k in range(first, last + 1)):
        f.append("urule")
    f.append("u-1w=" + (rows[first - 1][0] if first > 0 else "^"))
    f.append("u+1w=" + (rows[last + 1][0] if last + 1 < len(rows) else "$"))
    f.append("u+1pp=" + (rows[last + 1][2] if last + 1 < len(rows) else "$"))
    if i < last:
        f.append(
            "tail=" + "+".join(rows[k][1].split("|")[0] for k in range(i + 1, min(last, i + 2) + 1))
        )
    return f
