"""Rows a model decorated against the prompt (numbering, bullets, bold, quotes, a list in one row).

Before, such a row was dropped (``type_not_allowed`` or ``not_in_source``) and, as soon as one other
row of the answer matched, the document was released with the value in clear. The parser now reads
through the decoration; what is still not in the source stays a hallucination.
"""

from __future__ import annotations

import pytest

from spcl.extract.backends import Extraction
from spcl.extract.contract import parse_extraction
from spcl.mask_stage.candidates import rule_hits
from spcl.mask_stage.document import mask_document

SRC = "Contact Jonathan Smithers at 010-1234-5678, or Ann Lee."
NAME = "Jonathan Smithers"


@pytest.mark.parametrize(
    "row",
    [
        f"- PERSON\t{NAME}",
        f"* PERSON\t{NAME}",
        f"1. PERSON\t{NAME}",
        f"2) PERSON\t{NAME}",
        f"**PERSON**\t{NAME}",
        f"PERSON:\t{NAME}",
        f"`PERSON`\t`{NAME}`",
        f'PERSON\t"{NAME}"',
        f"PERSON\t“{NAME}”",
        f"PERSON\t'{NAME}'",
        f"PERSON\t**{NAME}**",
    ],
)
def test_decorated_rows_are_read(row: str) -> None:
    r = parse_extraction(f"{row}\nPHONE\t010-1234-5678\n", SRC)
    assert ("PERSON", NAME) in r.candidates and r.parse_success
    out = mask_document(
        SRC,
        Extraction(raw=f"{row}\nPHONE\t010-1234-5678\n"),
        rule_hits(SRC),
        ("PERSON", "PHONE"),
        False,
    )
    assert out.released is not None and NAME not in out.released.masked_text


def test_a_list_in_one_row_masks_each_item_found() -> None:
    r = parse_extraction(f"PERSON\t{NAME}, Ann Lee, Nobody Else\nPHONE\t010-1234-5678\n", SRC)
    assert ("PERSON", NAME) in r.candidates and ("PERSON", "Ann Lee") in r.candidates
    assert ("PERSON", "Nobody Else") not in r.candidates


def test_decoration_does_not_admit_other_types_or_invented_values() -> None:
    r = parse_extraction('- ORG\tAcme Bank\nPERSON\t"Jane Doe"\nPERSON\tJane Doe, John Roe\n', SRC)
    assert r.candidates == [] and not r.parse_success
    assert r.rows_rejected == {"type_not_allowed": 1, "not_in_source": 2}


def test_numbers_are_never_read_as_lists() -> None:
    r = parse_extraction("DOB\tMarch 5, 1990\n", "Born 5 March 1990; since 1990 here.")
    assert r.candidates == [] and r.hallucinated_rows == [("DOB", "March 5, 1990")]


@pytest.mark.parametrize(
    "row", [f"PERSON: {NAME}", f"PERSON    {NAME}", f"- **PERSON**: {NAME}", f"PERSON - {NAME}"]
)
def test_a_row_without_its_tab_is_read_when_it_names_an_allowed_type(row: str) -> None:
    raw = f"PHONE\t010-1234-5678\n{row}\n"
    r = parse_extraction(raw, SRC)
    assert ("PERSON", NAME) in r.candidates and r.lines_without_tab == 0
    out = mask_document(SRC, Extraction(raw=raw), rule_hits(SRC), ("PERSON", "PHONE"), False)
    assert out.released is not None and NAME not in out.released.masked_text


def test_chatter_without_a_tab_is_still_no_row() -> None:
    r = parse_extraction(
        "Here is what I found: nothing much\nNote: Ann Lee is public\nPHONE\t010-1234-5678\n", SRC
    )
    assert r.candidates == [("PHONE", "010-1234-5678")] and r.lines_without_tab == 2


@pytest.mark.parametrize(
    "printed", [f"{NAME}.", f"{NAME},", f"Mr. {NAME}", f"Dr {NAME}", f"{NAME} Jr"]
)
def test_a_name_with_punctuation_or_a_word_the_source_lacks_is_masked_where_it_stands(
    printed: str,
) -> None:
    raw = f"PERSON\t{printed}\nPHONE\t010-1234-5678\n"
    out = mask_document(SRC, Extraction(raw=raw), rule_hits(SRC), ("PERSON", "PHONE"), False)
    assert out.released is not None and "Smithers" not in out.released.masked_text


def test_a_dropped_word_reading_takes_whole_words_only() -> None:
    r = parse_extraction("PERSON\tMr Lee\n", "Leeds only, no names.")
    assert r.candidates == [] and r.hallucinated_rows == [("PERSON", "Mr Lee")]


def test_no_word_is_dropped_but_a_title_or_suffix_and_no_capital_is_lost() -> None:
    # "The Rural" is no "Mr. X": nothing is dropped, so "the" is never masked
    assert parse_extraction("PERSON\tThe Rural\n", "the sheep and the farm").candidates == []
    r = parse_extraction("PERSON\tBrown\n", "Ms Brown wore brown shoes. BROWN signed.")
    assert r.candidates == [("PERSON", "Brown"), ("PERSON", "BROWN")]


def test_an_extra_tab_column_is_read_as_the_value_and_a_note() -> None:
    raw = f"PERSON\t{NAME}\t0.97\nPHONE\t010-1234-5678\tmobile\n"
    r = parse_extraction(raw, SRC)
    assert r.candidates[:2] == [("PERSON", NAME), ("PHONE", "010-1234-5678")]


def test_a_reading_with_spaces_kept_wins_over_one_without_spaces() -> None:
    text = "see Ann Lee and Ann Lee . Bye"
    r = parse_extraction("PERSON\tAnn Lee.\n", text)
    out = mask_document(text, Extraction(raw="PERSON\tAnn Lee.\n"), [], ("PERSON",), False)
    assert ("PERSON", "Ann Lee") in r.candidates
    assert out.released is not None and "Ann Lee" not in out.released.masked_text


@pytest.mark.parametrize(
    ("type_", "value"),
    [
        ("NAME", NAME),
        ("FULL_NAME", NAME),
        ("Person Name", NAME),
        ("PHONE_NUMBER", "010-1234-5678"),
        ("E-MAIL", "kim@mailbox.com"),
        ("EMAIL_ADDRESS", "kim@mailbox.com"),
        ("DATE_OF_BIRTH", "1990-03-05"),
    ],
)
def test_a_common_synonym_of_a_type_is_read_as_the_type(type_: str, value: str) -> None:
    src = f"{SRC} Mail kim@mailbox.com, born 1990-03-05."
    r = parse_extraction(f"{type_}\t{value}\nPHONE\t010-1234-5678\n", src)
    assert value in [v for _, v in r.candidates] and "type_not_allowed" not in r.rows_rejected


def test_a_synonym_of_a_type_left_out_stays_out() -> None:
    r = parse_extraction(f"NAME\t{NAME}\n", SRC, allowed_types=("PHONE",))
    assert r.candidates == [] and r.rows_rejected == {"type_not_allowed": 1}
