"""MATCH and selection (spcl.generalize.match / select): en/ko/ja cases and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.generalize import choose, matches
from spcl.generalize.ladders import MONTH_NAMES
from spcl.generalize.match import acronyms, content_lemmas


@pytest.mark.parametrize(
    ("original", "guess", "type_", "lang", "expected"),
    [
        # strict dates: every lemma of the original must be in the guess
        ("3 August 2003", "August 2003", "DATETIME", "en", False),
        ("3 August 2003", "the 3rd of August, 2003", "DATETIME", "en", True),
        ("3 August 2003", "2003-08-03", "DATETIME", "en", True),
        ("August 2003", "3 August 2003", "DATETIME", "en", True),
        ("1991년 6월 9일", "1991년 6월", "DOB", "ko", False),
        ("1991년 6월 9일", "1991-06-09", "DOB", "ko", True),
        # lemma sets cannot see the order (as in the paper)
        ("1991년 6월 9일", "1991년 9월 6일", "DOB", "ko", True),
        ("1991年6月9日", "1991年6月", "DOB", "ja", False),
        ("1991年6月9日", "1991年6月9日生まれ", "DOB", "ja", True),
        # acronyms and 4-grams for named entities
        ("European Court of Human Rights", "the ECHR", "ORG", "en", True),
        ("ECHR", "European Court of Human Rights", "ORG", "en", True),
        ("Turkey", "a Turkish city", "LOC", "en", True),
        ("Turkey", "a Turkish city", "MISC", "en", False),  # 4-grams only for named entities
        # stop-words and the type's frequent lemmas never match by themselves
        ("the Court", "European Court of Human Rights", "ORG", "en", False),
        ("Baker Street", "Oxford Street", "ADDRESS", "en", False),
        ("Baker Street", "baker streets", "ADDRESS", "en", True),
        ("John Smith", "Mr. Smith", "PERSON", "en", True),
        ("John Smith", "Mr. Jones", "PERSON", "en", False),
        # Korean morphemes
        ("서울특별시 강남구 테헤란로 123", "강남구에서", "ADDRESS", "ko", True),
        ("서울특별시 강남구 테헤란로 123", "부산광역시 해운대구", "ADDRESS", "ko", False),
        ("어머니", "어머니가", "REL", "ko", True),
        ("어머니", "아버지", "REL", "ko", False),
        ("김가상", "이철수", "PERSON", "ko", False),
        # Japanese morphemes
        ("東京都千代田区見本町1-2-3", "千代田区", "ADDRESS", "ja", True),
        ("東京都千代田区", "大阪府大阪市", "ADDRESS", "ja", False),
        ("山田太郎", "山田さん", "PERSON", "ja", True),
        ("山田太郎", "佐藤さん", "PERSON", "ja", False),
    ],
)
def test_matches_cases(original: str, guess: str, type_: str, lang: str, expected: bool) -> None:
    assert matches(original, guess, type_, lang) is expected


def test_content_lemmas_drop_particles_units_and_stop_words() -> None:
    assert content_lemmas("1991년 6월 9일", "DOB", "ko") == {"1991", "6", "9"}
    assert content_lemmas("1991年6月9日に", "DOB", "ja") == {"1991", "6", "9"}
    # court: frequent ORG lemma
    assert content_lemmas("the Courts of Leeds", "ORG", "en") == {"leed"}
    assert acronyms("Federal Bureau of Investigation") == {"fbi"}


def test_original_without_content_needs_equal_strings() -> None:
    assert matches("the", "the", "MISC")
    assert not matches("the", "a", "MISC")
    assert not matches("", "", "MISC")


def test_disclosed_lemmas_do_not_count_as_recovered() -> None:
    original = "서울특별시 강남구 테헤란로 123"
    # plain MATCH: shares 서울, 강남구
    assert matches(original, "서울특별시 강남구 역삼로 5", "ADDRESS", "ko")
    assert not matches(
        original, "서울특별시 강남구 역삼로 5", "ADDRESS", "ko", disclosed="서울특별시 강남구"
    )
    assert matches(original, "강남구 테헤란로", "ADDRESS", "ko", disclosed="서울특별시 강남구")
    assert matches("1991년 6월 9일", "1991년 6월 9일", "DOB", "ko", disclosed="1991년 6월")
    assert not matches("1991년 6월 9일", "1991년 6월 1일", "DOB", "ko", disclosed="1991년 6월")
    # a candidate that discloses everything
    assert matches("Leeds", "Leeds", "LOC", disclosed="Leeds")
    assert not matches(
        "Leeds General Infirmary", "Pinderfields Hospital", "ORG", disclosed="a hospital in Leeds"
    )
    guesses = [
        ["서울특별시 강남구 테헤란로 123"],
        ["서울특별시 강남구 역삼로 5", "서울특별시 강남구 논현로"],
    ]
    assert (
        choose(
            original, "ADDRESS", ["서울특별시 강남구 테헤란로", "서울특별시 강남구"], guesses, "ko"
        )
        == 1
    )


def test_choose_first_unmatched() -> None:
    cands = ["1991년 6월", "1991년", "1990년대"]
    assert choose("1991년 6월 9일", "DOB", cands, [["1991년 6월 9일"], ["1992년"]], "ko") == 1
    all_guessed = [["1991년 6월 9일"], ["1991년 6월 9일"], ["6월 9일, 1991"]]
    assert choose("1991년 6월 9일", "DOB", cands, all_guessed, "ko") is None
    assert choose("1991년 6월 9일", "DOB", cands, [["1990년 1월 1일", "1991년 6월 1일"]], "ko") == 0
    # an unattacked candidate, or one the attacker gave no guess for, is never chosen
    assert choose("Leeds", "LOC", ["Yorkshire", "England"], [], "en") is None
    assert choose("Leeds", "LOC", ["Yorkshire", "England"], [[], ["London"]], "en") == 1


WORD = st.text(
    alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd", "Lo")), min_size=1, max_size=12
)
TYPES = st.sampled_from(
    ["PERSON", "ORG", "LOC", "ADDRESS", "DATETIME", "DOB", "MISC", "QUANTITY", "CODE", "DEM"]
)
LANGS = st.sampled_from(["en", "ko", "ja"])


@settings(max_examples=150, deadline=None)
@given(words=st.lists(WORD, min_size=1, max_size=4), type_=TYPES, lang=LANGS)
def test_property_a_value_always_matches_itself(words: list[str], type_: str, lang: str) -> None:
    text = " ".join(words)
    if text.strip():
        assert matches(text, text, type_, lang)
        assert matches(text, f"maybe {text} ?", type_, lang) or not content_lemmas(
            text, type_, lang
        )


@settings(max_examples=150, deadline=None)
@given(y=st.integers(1900, 2030), m=st.integers(1, 12), d=st.integers(1, 28), lang=LANGS)
def test_property_strict_dates_need_the_day(y: int, m: int, d: int, lang: str) -> None:
    full = {
        "ko": f"{y}년 {m}월 {d}일",
        "ja": f"{y}年{m}月{d}日",
        "en": f"{d} {MONTH_NAMES[m - 1]} {y}",
    }[lang]
    month = {"ko": f"{y}년 {m}월", "ja": f"{y}年{m}月", "en": f"{y}-{m:02d}"}[lang]
    assert matches(full, full, "DOB", lang)
    assert matches(full, f"{y}-{m:02d}-{d:02d}", "DOB", lang)
    assert not matches(full, f"{y}", "DOB", lang)
    if d not in (y, m) and str(d) not in {str(y), str(m)}:
        assert not matches(full, month, "DOB", lang)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 5), data=st.data())
def test_property_choose_returns_the_first_safe_candidate(n: int, data: st.DataObject) -> None:
    original = "Leeds General Infirmary"
    risky = ["Leeds hospital", "an infirmary in Leeds", "General Infirmary"]
    safe = ["London", "a hospital", "somewhere"]
    rows = [
        data.draw(st.lists(st.sampled_from(risky + safe), min_size=1, max_size=3)) for _ in range(n)
    ]
    got = choose(original, "ORG", [f"c{i}" for i in range(n)], rows, "en")
    first_safe = next((i for i, r in enumerate(rows) if not set(r) & set(risky)), None)
    assert got == first_safe


@pytest.mark.parametrize("module", ["match", "select", "ladders", "spans", "prompts"])
def test_docstring_examples(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"spcl.generalize.{module}"))
    assert result.attempted > 0 and result.failed == 0


def test_acronyms_stop_at_punctuation_and_capital_words() -> None:
    assert acronyms("the European Court of Human Rights (ECHR)") == {"echr"}
    assert acronyms("Seoul, Korea") == set()
    assert matches("World Health Organization", "the WHO", "ORG")
