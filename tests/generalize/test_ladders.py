"""Rule ladders are true by construction: every candidate subsumes the original (one property per
type)."""

from __future__ import annotations

import calendar
import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.generalize import ladder
from spcl.generalize.ladders import LABEL_TYPES, RUNG_ORDER

MONTHS = [
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
]
ERAS = {"昭和": 1925, "平成": 1988, "令和": 2018}


def interval(candidate: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The first and last day a date candidate stands for (an oracle written apart from the
    ladder code)."""
    if m := re.fullmatch(r"(?:the )?(\d{4})(?:s|년대|年代)", candidate):
        y = int(m.group(1))
        return (y, 1, 1), (y + 9, 12, 31)
    if m := re.fullmatch(r"(\d{4})(?:년|年)?", candidate):
        y = int(m.group(1))
        return (y, 1, 1), (y, 12, 31)
    m = re.fullmatch(r"(\d{4})년 (\d{1,2})월", candidate) or re.fullmatch(
        r"(\d{4})年(\d{1,2})月", candidate
    )
    if m:
        y, mo = int(m.group(1)), int(m.group(2))
    else:
        name, year = candidate.split()
        y, mo = int(year), MONTHS.index(name) + 1
    return (y, mo, 1), (y, mo, calendar.monthrange(y, mo)[1])


DATE_FORMS = {
    "ko": lambda y, m, d: f"{y}년 {m}월 {d}일",
    "ko_dots": lambda y, m, d: f"{y}. {m}. {d}.",
    "ja": lambda y, m, d: f"{y}年{m}月{d}日",
    "iso": lambda y, m, d: f"{y}-{m:02d}-{d:02d}",
    "slash": lambda y, m, d: f"{y}/{m}/{d}",
    "en_mdy": lambda y, m, d: f"{MONTHS[m - 1]} {d}, {y}",
    "en_dmy": lambda y, m, d: f"{d} {MONTHS[m - 1]} {y}",
    "en_ord": lambda y, m, d: f"{d}th of {MONTHS[m - 1][:3]} {y}",
    "ko_month": lambda y, m, d: f"{y}년 {m}월",
    "en_month": lambda y, m, d: f"{MONTHS[m - 1]} {y}",
}


@settings(max_examples=300, deadline=None)
@given(
    y=st.integers(1900, 2030),
    m=st.integers(1, 12),
    data=st.data(),
    form=st.sampled_from(sorted(DATE_FORMS)),
    lang=st.sampled_from(["en", "ko", "ja"]),
    type_=st.sampled_from(["DOB", "DATETIME"]),
)
def test_property_date_ladders_are_true(
    y: int, m: int, data: st.DataObject, form: str, lang: str, type_: str
) -> None:
    d = data.draw(st.integers(1, calendar.monthrange(y, m)[1]))
    value = DATE_FORMS[form](y, m, d)
    lad = ladder(type_, value, lang)
    assert lad is not None and 1 <= len(lad.candidates) <= 5
    for cand in lad.candidates:
        lo, hi = interval(cand)
        assert lo <= (y, m, d) <= hi, (value, cand)
        assert cand != value
    # default rung keeps the year
    assert interval(lad.candidates[lad.rung("year")]) == ((y, 1, 1), (y, 12, 31))
    widths = [interval(c) for c in lad.candidates]
    assert all(a[0] >= b[0] and a[1] <= b[1] for a, b in pairwise(widths))  # most specific first


@pytest.mark.parametrize(
    ("value", "lang", "expected"),
    [
        ("1991년 6월 9일", "ko", ("1991년 6월", "1991년", "1990년대")),
        ("1991年6月9日", "ja", ("1991年6月", "1991年", "1990年代")),
        ("平成3年6月9日", "ja", ("1991年6月", "1991年", "1990年代")),
        ("June 9, 1991", "en", ("June 1991", "1991", "the 1990s")),
        ("1991-06-09", "ko", ("1991년 6월", "1991년", "1990년대")),
    ],
)
def test_date_ladder_in_each_language(value: str, lang: str, expected: tuple[str, ...]) -> None:
    lad = ladder("DOB", value, lang)
    assert (
        lad is not None
        and lad.candidates == expected
        and lad.candidates[lad.default] == expected[1]
    )


@settings(max_examples=100, deadline=None)
@given(
    m=st.integers(1, 12),
    d=st.integers(1, 31),
    form=st.sampled_from(["{m}월 {d}일", "{m}月{d}日", "{M} {d}", "{d} {M}", "{d}th of {M}"]),
)
def test_property_month_day_dates_keep_only_the_month(m: int, d: int, form: str) -> None:
    lad = ladder("DATETIME", form.format(m=m, d=d, M=MONTHS[m - 1]), "en")
    if d > calendar.monthrange(2000, m)[1]:
        assert lad is None
        return
    assert lad is not None and lad.candidates in ((f"{m}월",), (f"{m}月",), (MONTHS[m - 1],))
    assert lad.rung("year") is None  # no year rung: --backend rules labels it


@pytest.mark.parametrize(
    "value", ["1991-02-30", "2001년 13월 1일", "next Tuesday", "昭和65年1月1日", "17日"]
)
def test_impossible_or_free_form_dates_get_no_ladder(value: str) -> None:
    assert ladder("DOB", value, "en") is None


def age_range(candidate: str) -> tuple[int, int]:
    """The ages a band candidate stands for (oracle)."""
    if m := re.fullmatch(r"(\d+)(?:~|～|-)(\d+)(?:세|歳| years old)", candidate):
        return int(m.group(1)), int(m.group(2))
    if m := re.fullmatch(r"(?:in their )?(\d+)(?:대|代|s)", candidate):
        return int(m.group(1)), int(m.group(1)) + 9
    if re.fullmatch(r"10세 미만|10歳未満|under 10", candidate):
        return 0, 9
    assert re.fullmatch(r"100세 이상|100歳以上|100 or older", candidate), candidate
    return 100, 200


@settings(max_examples=200, deadline=None)
@given(
    age=st.integers(0, 120),
    form=st.sampled_from(
        ["{}세", "{}살", "만 {}세", "{}歳", "{} years old", "aged {}", "({})", "{}"]
    ),
    lang=st.sampled_from(["en", "ko", "ja"]),
)
def test_property_age_ladders_are_true(age: int, form: str, lang: str) -> None:
    lad = ladder("AGE", form.format(age), lang)
    assert lad is not None and lad.names == ("band5", "band10")
    for cand in lad.candidates:
        lo, hi = age_range(cand)
        assert lo <= age <= hi
    assert age_range(lad.candidates[1])[1] - age_range(lad.candidates[1])[0] >= 9 or age >= 100


KO_PROVINCES = ["서울특별시", "부산광역시", "경기도", "제주특별자치도", "서울"]
KO_DISTRICTS = ["강남구", "성남시", "해운대구", "마포구", "제주시"]
KO_ROADS = ["테헤란로", "정자동", "월드컵북로", "중앙로"]
JA_PREFS = ["東京都", "大阪府", "北海道", "神奈川県"]
JA_MUNIS = ["千代田区", "大阪市", "札幌市", "横浜市"]
JA_TOWNS = ["見本町", "梅田", "中央"]


@settings(max_examples=200, deadline=None)
@given(
    p=st.sampled_from(KO_PROVINCES),
    extra=st.lists(st.sampled_from(KO_DISTRICTS), min_size=1, max_size=2, unique=True),
    road=st.sampled_from(KO_ROADS),
    num=st.integers(1, 999),
    sub=st.integers(0, 30),
)
def test_property_korean_address_ladders_are_true(
    p: str, extra: list[str], road: str, num: int, sub: int
) -> None:
    parts = [p, *extra, road]
    value = " ".join(parts) + f" {num}" + (f"-{sub}" if sub else "")
    lad = ladder("ADDRESS", value, "ko")
    assert lad is not None
    for cand in lad.candidates[:-1]:  # each is a leading part of the hierarchy, without the number
        got = cand.split()
        assert got == parts[: len(got)] and str(num) not in cand
    assert lad.candidates[-1] == "대한민국"
    assert lad.candidates[lad.default].split()[-1] in extra  # default: a district (or the city)


@settings(max_examples=200, deadline=None)
@given(
    pref=st.sampled_from(JA_PREFS),
    muni=st.sampled_from(JA_MUNIS),
    town=st.sampled_from(JA_TOWNS),
    nums=st.lists(st.integers(1, 40), min_size=1, max_size=3),
)
def test_property_japanese_address_ladders_are_true(
    pref: str, muni: str, town: str, nums: list[int]
) -> None:
    value = pref + muni + town + "-".join(map(str, nums))
    lad = ladder("ADDRESS", value, "ja")
    assert lad is not None
    for cand in lad.candidates[:-1]:
        assert value.startswith(cand) and not re.search(r"\d", cand)
    assert lad.candidates[-1] == "日本" and lad.candidates[lad.default] == pref + muni


@settings(max_examples=200, deadline=None)
@given(
    num=st.integers(1, 9999),
    street=st.sampled_from(["Baker Street", "Main St", "Elm Road"]),
    places=st.lists(
        st.sampled_from(["London", "Springfield", "Ohio", "United Kingdom", "Leeds"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    postcode=st.sampled_from(["", " NW1 6XE", " 62701"]),
)
def test_property_english_address_ladders_are_true(
    num: int, street: str, places: list[str], postcode: str
) -> None:
    value = f"{num} {street}, " + ", ".join(places) + postcode
    lad = ladder("ADDRESS", value, "en")
    assert lad is not None
    originals = [street, *places]
    for cand in lad.candidates:
        got = cand.split(", ")
        # a tail of the parts: the larger places
        assert got == originals[len(originals) - len(got) :]
        assert str(num) not in cand


def test_labels_kinship_and_rung_names() -> None:
    for type_ in LABEL_TYPES:
        assert ladder(type_, "anything 123", "en") is None
    assert ladder("REL", "어머니", "ko").candidates == ("가족",)
    assert ladder("REL", "母", "ja").candidates == ("家族",)
    assert ladder("ORG", "Leeds General Infirmary", "en") is None  # the LLM's job
    lad = ladder("ADDRESS", "東京都千代田区", "ja")
    # no district rung: the nearest coarser one
    assert lad.rung("district") == lad.names.index("region")
    assert lad.rung("week") is None
    assert set(RUNG_ORDER) == {"date", "age", "address", "family"}
