"""The extractor contract parser (issue 4 §2)."""

from __future__ import annotations

import unicodedata

from spcl.extract import DEFAULT_TYPES, ParseResult, parse_extraction

SRC = "신청인 김가상(900101-1234560), 연락처 010 0000 1234, 메일 kim1@mailbox.com."


def test_accepts_rows_found_in_source_in_output_order() -> None:
    raw = "PERSON\t김가상\nPHONE\t010-0000-1234\nEMAIL\tkim1@mailbox.com\n"
    r = parse_extraction(raw, SRC)
    assert r.candidates == [
        ("PERSON", "김가상"),
        ("PHONE", "010-0000-1234"),
        ("EMAIL", "kim1@mailbox.com"),
    ]
    assert (
        r.parse_success and r.hallucinated_rows == [] and r.rows_read == 3 and r.rows_rejected == {}
    )


def test_trims_and_normalizes_type_and_value() -> None:
    nfd_name = unicodedata.normalize("NFD", "김가상")
    r = parse_extraction(f"  person \t  {nfd_name}  \r\n", unicodedata.normalize("NFD", SRC))
    assert r.candidates == [("PERSON", "김가상")]


def test_think_blocks_removed_only_when_complete() -> None:
    r = parse_extraction("<think>PERSON\t김가상\n</think>\nEMAIL\tkim1@mailbox.com", SRC)
    assert r.candidates == [("EMAIL", "kim1@mailbox.com")] and r.think_blocks == 1
    r = parse_extraction("<think>\nPERSON\t김가상", SRC)  # unterminated: rows are still read
    assert r.candidates == [("PERSON", "김가상")]
    r = parse_extraction("<think>a</think>PERSON\t김가상<think>b\n</think>", SRC)
    assert r.candidates == [("PERSON", "김가상")] and r.think_blocks == 2


def test_rejections_by_reason() -> None:
    raw = "\n".join(
        [
            "Here is what I found:",  # no tab: not a row
            "PERSON\t김가상",
            "PERSON\t김가상",  # duplicate
            "ORG\t가상은행",  # type not allowed
            "PHONE\t   ",  # empty value
            "ACCOUNT\talias123456",  # not in source
            "CARD\t4111-1111-1111-1111",  # not in source
        ]
    )
    r = parse_extraction(raw, SRC)
    assert r.candidates == [("PERSON", "김가상")]
    assert r.hallucinated_rows == [("ACCOUNT", "alias123456"), ("CARD", "4111-1111-1111-1111")]
    assert r.rows_read == 6 and r.lines_without_tab == 1
    assert r.rows_rejected == {
        "type_not_allowed": 1,
        "empty_value": 1,
        "duplicate": 1,
        "not_in_source": 2,
    }
    assert r.checked_rows == 3 and r.parse_success


def test_value_keeps_later_tabs() -> None:
    r = parse_extraction("ADDRESS\tA\tB", "주소 A\tB 입니다")
    assert r.candidates == [("ADDRESS", "A\tB")]


def test_variants_and_digit_boundary_shared_with_masker() -> None:
    r = parse_extraction("PERSON\t김 가 상\nRRN\t9001011234560\nACCOUNT\t0101234", SRC)
    assert r.candidates == [("PERSON", "김 가 상"), ("RRN", "9001011234560")]
    assert r.hallucinated_rows == [("ACCOUNT", "0101234")]  # "0101234" occurs only glued to digits


def test_parse_success_rules() -> None:
    assert parse_extraction("", SRC).parse_success
    assert parse_extraction("  \n<think>nothing here</think>\n", SRC).parse_success
    assert not parse_extraction("I cannot help with that.", SRC).parse_success
    assert not parse_extraction("PERSON\t박없음", SRC).parse_success
    assert not parse_extraction("ORG\t가상은행", SRC).parse_success
    assert parse_extraction("PERSON\t박없음\nPERSON\t김가상", SRC).parse_success


def test_allowed_types_configurable() -> None:
    r = parse_extraction("PERSON\t김가상\nEMAIL\tkim1@mailbox.com", SRC, allowed_types=("email",))
    assert r.candidates == [("EMAIL", "kim1@mailbox.com")]
    assert r.rows_rejected == {"type_not_allowed": 1}
    assert "PERSON" in DEFAULT_TYPES and len(DEFAULT_TYPES) == 14


def test_repr_never_shows_values() -> None:
    r = parse_extraction("PERSON\t김가상\nACCOUNT\talias123456", SRC)
    assert isinstance(r, ParseResult)
    assert "김가상" not in repr(r) and "alias123456" not in repr(r)
