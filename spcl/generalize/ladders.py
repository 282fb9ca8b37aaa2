"""Rule ladders: true generalizations of dates, ages, addresses and kinship words, most → least
specific.

``ladder(entity_type, value, lang)`` returns a :class:`Ladder` (candidates and the rung ``--backend
rules`` takes by default) or ``None`` when no rule applies (the LLM proposes candidates, or a label
is used). Every candidate is built from parts of the parsed value and *subsumes* it (property-tested
per type):

- **Dates** (DOB, DATETIME, DATE) in standard forms — ``1991년 6월 9일``, ``1991. 6. 9.``,
  ``1991年6月9日``, ``平成3年6月9日``, ``1991-06-09``, ``1991/06/09``, ``June 9, 1991``, ``9 June
  1991``, ``June 1991`` — climb day → month → year → decade, written in the language's own format
  (``1991년 6월`` → ``1991년`` → ``1990년대``; ``1991年6月`` → ``1991年`` → ``1990年代``; ``June
  1991`` → ``1991`` → ``the 1990s``). A month and day without a year (``7月17日``, ``6월 9일``,
  ``June 9``) has one rung, the month. Default rung: the year (a date without a year gets a label
  under ``--backend rules``). A date that is not a real calendar date gets no ladder.
- **Ages** (AGE, QUANTITY when the value is an age) — ``33세``, ``33살``, ``33歳``, ``33 years
  old``, ``aged 33``, a bare ``33`` — become a 5-year band, then a 10-year band (``30~34세`` →
  ``30대``; ``30～34歳`` → ``30代``; ``30-34 years old`` → ``in their 30s``). Default rung: the
  10-year band.
- **Addresses** (ADDRESS, LOC): Korean and Japanese addresses are read big → small (province,
  city/district, town, road, number); English ones as comma-separated parts small → big. Rungs:
  without the building number → district → city → region → country (only rungs that exist; the
  country only for a Korean or Japanese address). Default rung: the district (Korean 시/군/구,
  Japanese 市区町村), else the city.
- **Kinship** (REL): the family rung (``가족``, ``家族``, ``family member``).

Identifiers (PHONE, EMAIL, RRN, MYNUMBER, CARD, ACCOUNT, POSTAL, CODE; ID, IP, CREDENTIAL and the
rule types SSN, ITIN, IBAN, PASSPORT, DRIVER_LICENSE) and PERSON always get labels:
:data:`LABEL_TYPES`. No part of an identifier is a truthful generalization that an attacker cannot
invert (an IBAN's country or an IP address's network still narrows the person down, and a
credential's prefix is public), so none is offered.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from dataclasses import dataclass

from spcl.rule_types import RULE_TYPES


def _registered(ladder: str) -> set[str]:
    """Rule types with this ladder, and entity types all of whose rule types have it."""
    names = {t.name for t in RULE_TYPES if t.ladder == ladder}
    entities = {t.entity for t in RULE_TYPES}
    return names | {
        e for e in entities if all(t.ladder == ladder for t in RULE_TYPES if t.entity == e)
    }


LABEL_TYPES: frozenset[str] = frozenset(
    {"PERSON", "CODE", "ID", "IP", "CREDENTIAL"} | _registered("label")
)
"""Types that always get labels: PERSON, CODE, the LLM stage's identifier types and every registered
rule type (and entity type) with ``ladder="label"`` (``spcl.rule_types``)."""
DATE_TYPES: frozenset[str] = frozenset({"DOB", "DATETIME", "DATE"} | _registered("date"))
AGE_TYPES: frozenset[str] = frozenset({"AGE", "QUANTITY"})
ADDRESS_TYPES: frozenset[str] = frozenset({"ADDRESS", "LOC"} | _registered("address"))

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTH_RE = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_MONTH_NUM = {name[:3].lower(): i for i, name in enumerate(MONTH_NAMES, 1)}
# era → (base year, last year number)
_ERAS = {
    "明治": (1867, 45),
    "大正": (1911, 15),
    "昭和": (1925, 64),
    "平成": (1988, 31),
    "令和": (2018, 99),
}
_DATE_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (lang, re.compile(p, re.IGNORECASE))
    for lang, p in (
        ("ko", r"(?P<y>\d{4}) ?년(?: ?(?P<m>\d{1,2}) ?월(?: ?(?P<d>\d{1,2}) ?일)?)?(?: ?생)?"),
        ("ko", r"(?P<y>\d{4})\. ?(?P<m>\d{1,2})\.(?: ?(?P<d>\d{1,2})\.?)?"),
        (
            "ja",
            r"(?P<y>\d{4}) ?年(?: ?(?P<m>\d{1,2}) ?月(?: ?(?P<d>\d{1,2}) ?日)?)?(?: ?生まれ| ?生)?",
        ),
        (
            "ja",
            r"(?P<era>明治|大正|昭和|平成|令和) ?(?P<ey>元|\d{1,2}) ?年"
            r"(?: ?(?P<m>\d{1,2}) ?月(?: ?(?P<d>\d{1,2}) ?日)?)?(?: ?生まれ| ?生)?",
        ),
        ("", r"(?P<y>\d{4})(?P<s>[-/])(?P<m>\d{1,2})(?:(?P=s)(?P<d>\d{1,2}))?"),
        ("en", r"(?:(?P<d>\d{1,2})(?:st|nd|rd|th)? (?:of )?)?" + _MONTH_RE + r",? (?P<y>\d{4})"),
        ("en", _MONTH_RE + r" (?P<d>\d{1,2})(?:st|nd|rd|th)?,? (?P<y>\d{4})"),
        # month and day without a year: only the month rung
        ("ko", r"(?P<m>\d{1,2}) ?월 ?(?P<d>\d{1,2}) ?일"),
        ("ja", r"(?P<m>\d{1,2}) ?月 ?(?P<d>\d{1,2}) ?日"),
        ("en", r"(?:(?P<d>\d{1,2})(?:st|nd|rd|th)? (?:of )?)" + _MONTH_RE),
        ("en", _MONTH_RE + r" (?P<d>\d{1,2})(?:st|nd|rd|th)?"),
    )
)
_AGE_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (lang, re.compile(p, re.IGNORECASE))
    for lang, p in (
        ("ko", r"(?:만 ?)?(?P<a>\d{1,3}) ?(?:세|살)"),
        ("ja", r"(?:満)?(?P<a>\d{1,3}) ?(?:歳|才)"),
        ("en", r"(?:aged |age )?(?P<a>\d{1,3})(?:[- ]years?[- ]old| years?| y/?o)?"),
    )
)
_KO_PROVINCE = re.compile(
    r"(?:서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충청|충북|충남|전라|전북|전남"
    r"|경상|경북|경남|제주)[가-힣]*"
)
_JP_ADDRESS = re.compile(
    r"(?P<pref>東京都|北海道|(?:大阪|京都)府|[一-鿿]{2,3}県)"
    r"(?P<muni>(?:[一-鿿ぁ-んァ-ヴー々ヶ]{1,7}?[市区町村郡]){1,3}?)"
    r"(?P<town>[一-鿿ぁ-んァ-ヴー々ヶ]*?)"
    r"(?P<num>(?:[0-9０-９一二三四五六七八九十]+(?:丁目|番地?|号|[-‐－−の]))*"
    r"[0-9０-９一二三四五六七八九十]*号?)$"
)
RUNG_ORDER: dict[str, tuple[str, ...]] = {
    "date": ("month", "year", "decade"),
    "age": ("band5", "band10"),
    "address": ("street", "district", "city", "region", "country"),
    "family": ("family",),
}
"""Rung names of each ladder kind, finest first (the names ``generalize.rules_rungs`` takes)."""
_FAMILY = {"ko": "가족", "ja": "家族", "en": "family member"}
_COUNTRY = {"ko": "대한민국", "ja": "日本"}


@dataclass(frozen=True, slots=True)
class Ladder:
    """Candidates from most to least specific, and the index ``--backend rules`` uses by default."""

    candidates: tuple[str, ...]
    default: int = 0
    kind: str = ""
    names: tuple[str, ...] = ()  # one rung name per candidate (see RUNG_ORDER)

    def rung(self, name: str) -> int | None:
        """Index of the rung called ``name``, else of the nearest coarser one (``RUNG_ORDER``),
        else None."""
        order = RUNG_ORDER.get(self.kind, ())
        if name not in order:
            return None
        for wanted in order[order.index(name) :]:
            if wanted in self.names:
                return self.names.index(wanted)
        return None


def _norm(value: str) -> str:
    return unicodedata.normalize("NFKC", value).strip()


def _format_date(lang: str, y: int, m: int | None) -> str:
    if lang == "ko":
        return f"{y}년 {m}월" if m else f"{y}년"
    if lang == "ja":
        return f"{y}年{m}月" if m else f"{y}年"
    return f"{MONTH_NAMES[m - 1]} {y}" if m else str(y)


def _decade(lang: str, y: int) -> str:
    d = y - y % 10
    return {"ko": f"{d}년대", "ja": f"{d}年代"}.get(lang, f"the {d}s")


def parse_date(value: str) -> tuple[str, int | None, int | None, int | None] | None:
    """``(form language, year, month, day)`` of a date in a standard form, or None (also for
    impossible dates).

    The form language is ``""`` for numeric ISO-like forms (``1991-06-09``), which every language
    writes. The year is None for a month and day without a year (``7月17日``, ``June 9``).

    >>> parse_date("1991년 6월 9일")
    ('ko', 1991, 6, 9)
    """
    text = _norm(value)
    for lang, rx in _DATE_FORMS:
        m = rx.fullmatch(text)
        if m is None:
            continue
        g = m.groupdict()
        if g.get("era"):
            base, last = _ERAS[g["era"]]
            era_year = 1 if g["ey"] == "元" else int(g["ey"])
            if not 1 <= era_year <= last:
                return None
            y = base + era_year
        elif g.get("y"):
            y = int(g["y"])
        else:
            y = None
        month = (
            _MONTH_NUM[g["mon"][:3].lower()]
            if g.get("mon")
            else (int(g["m"]) if g.get("m") else None)
        )
        day = int(g["d"]) if g.get("d") else None
        if (y is not None and not 1000 <= y <= 2999) or (
            month is not None and not 1 <= month <= 12
        ):
            return None
        leap = 2000  # a month and day without a year: Feb 29 is possible
        if day is not None and (
            month is None or not 1 <= day <= calendar.monthrange(y or leap, month)[1]
        ):
            return None
        return lang, y, month, day
    return None


def date_ladder(value: str, lang: str = "en") -> Ladder | None:
    """Day → month → year → decade of a standard-form date (only the rungs coarser than the
    value)."""
    parsed = parse_date(value)
    if parsed is None:
        return None
    form, y, month, day = parsed
    out_lang = form or lang
    if y is None:  # month and day: the month alone
        name = {"ko": f"{month}월", "ja": f"{month}月"}.get(out_lang, MONTH_NAMES[(month or 1) - 1])
        return Ladder((name,), default=0, kind="date", names=("month",))
    rungs: list[str] = []
    names: list[str] = []
    if day is not None:
        rungs.append(_format_date(out_lang, y, month))
        names.append("month")
    if month is not None:
        rungs.append(_format_date(out_lang, y, None))
        names.append("year")
    rungs.append(_decade(out_lang, y))
    names.append("decade")
    return Ladder(tuple(rungs), default=max(0, len(rungs) - 2), kind="date", names=tuple(names))


def parse_age(value: str) -> tuple[str, int] | None:
    """``(form language, age in years)`` of an age written as ``33세``/``33歳``/``33 years
    old``/``33``, or None."""
    text = _norm(value).strip("()（） ")
    for lang, rx in _AGE_FORMS:
        m = rx.fullmatch(text)
        if m is not None and int(m.group("a")) <= 130:
            return lang, int(m.group("a"))
    return None


def age_ladder(value: str, lang: str = "en") -> Ladder | None:
    """A 5-year band, then a 10-year band, holding the age (under 10 / 100 and over as their own
    bands)."""
    parsed = parse_age(value)
    if parsed is None:
        return None
    form, age = parsed
    out = lang if form == "en" and not re.search(r"[a-z]", value, re.IGNORECASE) else form
    lo5, lo10 = age - age % 5, age - age % 10
    if out == "ko":
        five, ten = f"{lo5}~{lo5 + 4}세", (f"{lo10}대" if 10 <= age < 100 else None)
        ten = ten or ("10세 미만" if age < 10 else "100세 이상")
    elif out == "ja":
        five, ten = f"{lo5}～{lo5 + 4}歳", (f"{lo10}代" if 10 <= age < 100 else None)
        ten = ten or ("10歳未満" if age < 10 else "100歳以上")
    else:
        five = f"{lo5}-{lo5 + 4} years old"
        ten = (
            f"in their {lo10}s" if 10 <= age < 100 else ("under 10" if age < 10 else "100 or older")
        )
    return Ladder((five, ten), default=1, kind="age", names=("band5", "band10"))


def _ko_rung_name(token: str, first: bool) -> str:
    if token.endswith(("로", "길", "동", "가", "리", "읍", "면")) or re.search(r"\d", token):
        return "street"
    if token.endswith(("구", "군")) or (token.endswith("시") and not first):
        return "district"
    if token.endswith("시") or (first and not token.endswith("도")):
        return "city"  # 서울특별시, 부산광역시, 세종시 or a bare 서울
    return "region"  # 경기도, 제주특별자치도


def _finish(rungs: list[str], names: list[str], default_name: str) -> Ladder:
    seen: dict[str, str] = {}
    for cand, name in zip(rungs, names, strict=True):
        seen.setdefault(cand, name)
    lad = Ladder(tuple(seen), kind="address", names=tuple(seen.values()))
    default = lad.rung(default_name)
    return Ladder(
        lad.candidates, default=0 if default is None else default, kind="address", names=lad.names
    )


def korean_address_ladder(value: str) -> Ladder | None:
    """``서울특별시 강남구 테헤란로 123`` → road, district, city/province, country
    (space-separated parts)."""
    parts = _norm(value).split()
    if len(parts) < 2 or not _KO_PROVINCE.fullmatch(parts[0]):
        return None
    named: list[str] = []
    for p in parts:
        if not re.fullmatch(r"[가-힣]+", p):
            break  # the building number (or a numbered road) and what follows it
        named.append(p)
    rungs: list[str] = []
    names: list[str] = []
    cur = list(named)
    if len(named) == len(parts):
        cur.pop()  # no number: the first rung drops the smallest named part
    while cur:
        rungs.append(" ".join(cur))
        names.append(_ko_rung_name(cur[-1], len(cur) == 1))
        cur.pop()
    rungs.append(_COUNTRY["ko"])
    names.append("country")
    return _finish(rungs, names, "district")


def japanese_address_ladder(value: str) -> Ladder | None:
    """``東京都千代田区見本町1-2-3`` → town, municipality, prefecture, country."""
    text = _norm(value).replace(" ", "")
    m = _JP_ADDRESS.fullmatch(text)
    if m is None:
        return None
    pref, muni, town, num = m.group("pref"), m.group("muni"), m.group("town"), m.group("num")
    rungs: list[str] = []
    names: list[str] = []
    if num and town:
        rungs.append(pref + muni + town)
        names.append("street")
    if town or num:
        rungs.append(pref + muni)
        names.append("district")
    rungs += [pref, _COUNTRY["ja"]]
    names += ["region", "country"]
    return _finish(rungs, names, "district")


def english_address_ladder(value: str) -> Ladder | None:
    """``221B Baker Street, London NW1 6XE, United Kingdom`` → parts without numbers, then
    dropping the smallest."""
    parts = [p.strip() for p in _norm(value).split(",") if p.strip()]
    if len(parts) < 2 or not re.search(r"[A-Za-z]", value):
        return None
    clean = [" ".join(w for w in p.split() if not re.search(r"\d", w)) for p in parts]
    clean = [c for c in clean if re.search(r"[A-Za-z]", c)]
    if not clean:
        return None
    rungs: list[str] = []
    names: list[str] = []
    if clean != parts:
        rungs.append(", ".join(clean))
        names.append("street")
    coarser = ["city", "region", "country"]
    for k in range(1, len(clean)):
        rungs.append(", ".join(clean[k:]))
        names.append(coarser[min(k - 1, 2)] if len(clean) - k < 3 else "city")
    if not rungs:
        return None
    return _finish(rungs, names, "city")


def address_ladder(value: str, lang: str = "en") -> Ladder | None:
    """The Korean, Japanese or English address ladder that parses ``value`` (by its script), or
    None."""
    del lang
    if re.search(r"[가-힣]", value):
        return korean_address_ladder(value)
    if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", value):
        return japanese_address_ladder(value)
    return english_address_ladder(value)


def ladder(entity_type: str, value: str, lang: str = "en") -> Ladder | None:
    """The rule ladder of ``value`` as ``entity_type`` in ``lang``, or None (no rule applies; labels
    included).

    >>> ladder("DOB", "1991년 6월 9일").candidates
    ('1991년 6월', '1991년', '1990년대')
    """
    type_ = entity_type.strip().upper()
    if type_ in LABEL_TYPES:
        return None
    if type_ in DATE_TYPES:
        return date_ladder(value, lang)
    if type_ in AGE_TYPES:
        return age_ladder(value, lang)
    if type_ in ADDRESS_TYPES:
        return address_ladder(value, lang)
    if type_ == "REL":
        script = "ko" if re.search(r"[가-힣]", value) else "en"
        script = "ja" if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", value) else script
        return Ladder((_FAMILY[script],), default=0, kind="family", names=("family",))
    return None
