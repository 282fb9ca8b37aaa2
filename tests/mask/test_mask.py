"""The masker's rules (issue 4 §3), one test per rule, plus the worked example and
``alias123456``."""

from __future__ import annotations

import doctest
import unicodedata

import pytest

import spcl.extract.contract
import spcl.mask.masker
import spcl.mask.tokens
import spcl.mask.variant_forms
import spcl.mask.variants
from spcl.mask import Span, mask_text, reassemble_text
from spcl.mask.variants import alternatives, find_occurrences, occurs


def test_worked_example() -> None:
    src = "김가상 / 김 가 상 / [PERSON_1]"
    r = mask_text(src, [("PERSON", "김가상")])
    assert r.masked_text == "[PERSON_2] / [PERSON_3] / [PERSON_1]"
    assert r.mapping == {"[PERSON_2]": "김가상", "[PERSON_3]": "김 가 상"}
    assert r.spans == [Span("PERSON", 0, 3, "[PERSON_2]"), Span("PERSON", 6, 11, "[PERSON_3]")]
    assert reassemble_text(r.masked_text, r.mapping) == src


def test_alias_account_does_not_mask_its_digits() -> None:
    src = "계좌 123456 으로 입금"
    r = mask_text(src, [("ACCOUNT", "alias123456")])
    assert r.masked_text == src and r.mapping == {} and r.spans == []
    assert not occurs("ACCOUNT", "alias123456", src)


def test_literal_beats_variant_of_another_prediction() -> None:
    # "01000001234" (ACCOUNT) has a numeric variant matching "010-0000-1234"; the PHONE literal wins
    # there.
    src = "전화 010-0000-1234, 계좌 01000001234"
    r = mask_text(src, [("ACCOUNT", "01000001234"), ("PHONE", "010-0000-1234")])
    assert r.masked_text == "전화 [PHONE_1], 계좌 [ACCOUNT_1]"
    assert r.mapping == {"[PHONE_1]": "010-0000-1234", "[ACCOUNT_1]": "01000001234"}


def test_fixed_type_priority_for_one_value_with_several_types() -> None:
    src = "번호 900101-1234560 입니다"
    for cands in (
        [("ACCOUNT", "900101-1234560"), ("RRN", "900101-1234560")],
        [("PHONE", "900101-1234560"), ("RRN", "900101-1234560")],
    ):
        assert mask_text(src, cands).masked_text == "번호 [RRN_1] 입니다"
        assert mask_text(src, cands[::-1]).masked_text == "번호 [RRN_1] 입니다"
    assert (
        mask_text("Mina Park", [("REL", "Mina Park"), ("PERSON", "Mina Park")]).masked_text
        == "[PERSON_1]"
    )


@pytest.mark.parametrize(
    ("surface", "masked"),
    [
        ("김가상", True),
        ("김 가 상", True),
        ("김\t가\n상", True),
        ("김  가상", True),
        ("김\u3000가상", True),
        ("김   가상", False),
        ("김-가상", False),
    ],
)
def test_person_spacing_variants(surface: str, masked: bool) -> None:
    r = mask_text(f"이름: {surface}.", [("PERSON", "김가상")])
    assert (r.mapping == {"[PERSON_1]": surface}) is masked


def test_person_variant_length_limits() -> None:
    # 2..6 characters without spaces get spacing variants; 1 or 7+ only the literal.
    assert occurs("PERSON", "이가", "이 가")
    assert occurs("PERSON", "가나다라마바", "가 나 다 라 마 바")
    assert not occurs("PERSON", "가나다라마바사", "가 나 다 라 마 바 사")
    assert occurs("PERSON", "가나다라마바사", "가나다라마바사")
    assert [a.literal for a in alternatives("PERSON", "J")] == [True]
    assert [a.literal for a in alternatives("PERSON", "가 나 다 라 마 바 사")] == [True]
    # the compact form of a spaced candidate is a variant too
    assert occurs("PERSON", "김 가 상", "김가상")
    assert not occurs("PERSON", "JordanSample", "Jordan Sample")


def test_person_variant_only_for_person() -> None:
    assert not occurs("ADDRESS", "가상구", "가 상 구")
    assert not occurs("REL", "어머니", "어 머 니")


@pytest.mark.parametrize(
    ("surface", "hit"),
    [
        ("010-0000-1234", True),
        ("010 0000 1234", True),
        ("01000001234", True),
        ("010.0000.1234", True),
        ("010－0000－1234", True),
        ("０１０-００００-１２３４", True),
        ("(010) 0000-1234", True),
        ("010x0000x1234", False),
        ("010-0000-12345", False),
        ("9010-0000-1234", False),
        ("010 - - - 0000-1234", False),
    ],
)
def test_numeric_variants_only_digits_and_separators(surface: str, hit: bool) -> None:
    assert occurs("PHONE", "010-0000-1234", f"tel {surface} 끝") is hit


def test_numeric_variant_needs_a_numeric_value_and_type() -> None:
    assert not occurs("ACCOUNT", "KR-12345", "KR 12345")  # letters: literal only
    assert not occurs("EMAIL", "12345", "1 2 345")  # not a numeric type
    assert occurs("DOB", "1990-03-05", "1990.03.05")


def test_digit_boundary_on_literals_and_variants() -> None:
    for src in ("91234567", "1234567", "x123456７"):
        assert not occurs("ACCOUNT", "123456", src)
    assert occurs("ACCOUNT", "123456", "계좌123456번")  # digits glued to Hangul still match
    assert mask_text("id a123456b", [("ACCOUNT", "123456")]).masked_text == "id a[ACCOUNT_1]b"
    # a value that starts/ends with a letter has no boundary on that side
    assert occurs("ACCOUNT", "A12", "9A12")


def test_same_surface_same_token_other_surface_other_token() -> None:
    src = "010-0000-1234 / 010 0000 1234 / 010-0000-1234"
    r = mask_text(src, [("PHONE", "010-0000-1234")])
    assert r.masked_text == "[PHONE_1] / [PHONE_2] / [PHONE_1]"
    assert r.mapping == {"[PHONE_1]": "010-0000-1234", "[PHONE_2]": "010 0000 1234"}


def test_tokens_per_type_in_source_order() -> None:
    src = "B씨(010-0000-0002)와 A씨(010-0000-0001)"
    r = mask_text(
        src,
        [
            ("PERSON", "A씨"),
            ("PHONE", "010-0000-0001"),
            ("PERSON", "B씨"),
            ("PHONE", "010-0000-0002"),
        ],
    )
    assert r.masked_text == "[PERSON_1]([PHONE_1])와 [PERSON_2]([PHONE_2])"
    assert r.mapping["[PERSON_1]"] == "B씨"


def test_existing_token_names_never_reused_and_left_alone() -> None:
    src = "[PHONE_1] [PHONE_2] 010-0000-1234 [PHONE_3]x [EMAIL_1]"
    r = mask_text(src, [("PHONE", "010-0000-1234")])
    assert r.masked_text == "[PHONE_1] [PHONE_2] [PHONE_4] [PHONE_3]x [EMAIL_1]"
    assert reassemble_text(r.masked_text, r.mapping) == src


def test_longest_first_and_overlaps_merge() -> None:
    r = mask_text("김가상님 김가", [("PERSON", "김가"), ("PERSON", "김가상")])
    assert r.masked_text == "[PERSON_1]님 [PERSON_2]"
    assert r.mapping == {"[PERSON_1]": "김가상", "[PERSON_2]": "김가"}
    # overlapping occurrences of two candidates become one span: nothing stays in clear
    r = mask_text("xabcdx", [("PERSON", "abc"), ("ADDRESS", "bcd")])
    assert r.masked_text == "x[PERSON_1]x" and r.mapping == {"[PERSON_1]": "abcd"}
    # a variant longer than a literal at the same position wins (longest match)
    r = mask_text("김 가 상", [("PERSON", "김 가"), ("PERSON", "김가상")])
    assert r.masked_text == "[PERSON_1]"


def test_spans_are_half_open_offsets_into_nfc_source() -> None:
    decomposed = unicodedata.normalize("NFD", "한글 김가상 끝")
    r = mask_text(decomposed, [("PERSON", unicodedata.normalize("NFD", "김가상"))])
    nfc = unicodedata.normalize("NFC", decomposed)
    (span,) = r.spans
    assert nfc[span.start : span.end] == "김가상" == r.mapping[span.token]
    assert reassemble_text(r.masked_text, r.mapping) == nfc != decomposed


def test_reassemble_replaces_known_tokens_once_and_keeps_unknown() -> None:
    mapping = {"[PERSON_1]": "[PERSON_2]", "[PERSON_2]": "김가상"}
    assert (
        reassemble_text("[PERSON_1] [PERSON_2] [PERSON_9] [person_1]", mapping)
        == "[PERSON_2] 김가상 [PERSON_9] [person_1]"
    )


def test_candidates_are_normalized_and_empty_ignored() -> None:
    r = mask_text(
        "Mail user1@mailbox.com now",
        [(" email ", "  user1@mailbox.com\n"), ("PERSON", "  "), ("PHONE", "")],
    )
    assert r.masked_text == "Mail [EMAIL_1] now"


def test_no_candidates_and_bad_type_names() -> None:
    r = mask_text("e\u0301", [])
    assert r.masked_text == "é" and r.mapping == {} and r.spans == []
    with pytest.raises(ValueError, match="cannot name a token") as err:
        mask_text("secret-value", [("BAD TYPE", "secret-value")])
    assert "secret-value" not in str(err.value)


def test_find_occurrences_every_occurrence_longest() -> None:
    assert find_occurrences("PERSON", "김가상", "김가상 김 가 상 김가") == [(0, 3), (4, 9)]


@pytest.mark.parametrize(
    "module",
    [
        spcl.mask.masker,
        spcl.mask.tokens,
        spcl.mask.variants,
        spcl.mask.variant_forms,
        spcl.extract.contract,
    ],
)
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0
