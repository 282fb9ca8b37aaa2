"""Rows a real small model writes: an unknown or misspelled type, a type glued to its value. A value
that is in the source never vanishes: it is masked under the closest known type (or ``ID``) or the
document fails."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends import Extraction
from spcl.extract.contract import parse_extraction
from spcl.mask_stage.document import mask_document

PHONE_EXT = "001-212-555-0198 ext. 204"
DOC = f"Call the front desk at {PHONE_EXT} before noon. 担当は鈴木 七夏さんと田中 直人さんです。"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        (f"CALL\t{PHONE_EXT}", ("ID", PHONE_EXT)),  # resembles no type: the generic one
        ("PHOEN\t001-212-555-0198", ("PHONE", "001-212-555-0198")),  # misspelled: the closest
        ("EMIAL\t001-212-555-0198", ("EMAIL", "001-212-555-0198")),
        ("PERSN\t鈴木 七夏", ("PERSON", "鈴木 七夏")),
    ],
)
def test_an_unknown_type_whose_value_is_in_the_source_is_kept(
    raw: str, want: tuple[str, str]
) -> None:
    res = parse_extraction(raw, DOC)
    assert res.parse_success and res.candidates == [want] and res.retyped_rows == 1


def test_the_unknown_type_row_is_masked_not_released_in_clear() -> None:
    outcome = mask_document(DOC, Extraction(raw=f"CALL\t{PHONE_EXT}\n"), [], DEFAULT_TYPES, False)
    assert outcome.released is not None
    assert "212-555-0198" not in outcome.released.masked_text


def test_without_a_type_to_read_it_as_the_document_fails_closed() -> None:
    types = ("PHONE", "PERSON")  # no ID: nothing to read CALL as
    res = parse_extraction(f"PERSON\t鈴木 七夏\nCALL\t{PHONE_EXT}", DOC, types)
    assert not res.parse_success and res.unknown_type_rows == 1
    outcome = mask_document(
        DOC, Extraction(raw=f"PERSON\t鈴木 七夏\nCALL\t{PHONE_EXT}\n"), [], types, False
    )
    assert outcome.released is None and outcome.reason == "unknown_type_in_source"


def test_a_known_type_switched_off_is_still_ignored() -> None:
    res = parse_extraction("PERSON\t鈴木 七夏\nEMAIL\t001-212-555-0198", DOC, ("PERSON",))
    assert (
        res.parse_success
        and res.candidates == [("PERSON", "鈴木 七夏")]
        and res.unknown_type_rows == 0
    )


def test_an_unknown_type_not_in_the_source_is_not_a_candidate() -> None:
    res = parse_extraction("PERSON\t鈴木 七夏\nCURRENCY\t$5,000", DOC)
    assert res.candidates == [("PERSON", "鈴木 七夏")] and res.parse_success


@pytest.mark.parametrize(
    "line",
    [
        "PERSON 鈴木 七夏",
        "PERSON田中 直人",
        "PERSON\u3000鈴木 七夏",
        "- PERSON 鈴木 七夏",
        "**PERSON** 田中 直人",
        "NAME 鈴木 七夏",
    ],
)
def test_a_type_followed_by_one_space_or_none_is_read(line: str) -> None:
    res = parse_extraction(line, DOC)
    assert res.parse_success and len(res.candidates) == 1 and res.candidates[0][0] == "PERSON"


@pytest.mark.parametrize(
    "line", ["PERSONS are listed", "IDENTITY 鈴木", "Person 鈴木 七夏 is here", "鈴木 七夏"]
)
def test_lines_that_only_look_like_rows_stay_unread(line: str) -> None:
    res = parse_extraction(line, DOC)
    assert not res.parse_success and not res.candidates


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["PERSON", "PHONE", "EMAIL", "ADDRESS", "ID"]),
    st.sampled_from(["", " ", "  ", "\u3000", ":"]),
    st.sampled_from(["鈴木 七夏", "田中 直人", "001-212-555-0198"]),
)
def test_any_separator_reads_the_same_row_as_a_tab(type_: str, sep: str, value: str) -> None:
    tabbed = parse_extraction(f"{type_}\t{value}", DOC)
    glued = parse_extraction(f"{type_}{sep}{value}", DOC)
    assert (glued.candidates, glued.parse_success) == (tabbed.candidates, tabbed.parse_success)
