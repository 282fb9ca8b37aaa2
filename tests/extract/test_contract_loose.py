"""LLM values that differ from the source only in compatibility form, case, spacing or invisible
characters.

A model often prints a value the way it "should" look: NFKC (full-width Latin, half-width katakana
folded), one space for a line break or a double space, without a zero-width character, in another
case. Such a row is not a hallucination: its value is in the document, and the source's own surface
must be masked. Before, these rows were dropped as ``not_in_source`` and, when any other row of the
answer matched, the document was released with the value in clear.
"""

from __future__ import annotations

import pytest

from spcl.extract.backends import Extraction
from spcl.extract.contract import parse_extraction
from spcl.mask_stage.candidates import rule_hits
from spcl.mask_stage.document import mask_document

PHONE = "010-1234-5678"
CASES = [
    # (source surface of the name, what the model printed)
    ("Jonathan\nSmithers", "Jonathan Smithers"),  # line break in the source
    ("Jonathan  Smithers", "Jonathan Smithers"),  # double space
    ("JONATHAN SMITHERS", "Jonathan Smithers"),  # case
    ("Ｊｏｎａｔｈａｎ Ｓｍｉｔｈｅｒｓ", "Jonathan Smithers"),  # full-width Latin (NFKC)
    ("ﾀﾅｶ ﾀﾛｳｻﾞｴﾓﾝ", "タナカ タロウザエモン"),  # half-width katakana, a voiced mark (NFKC)
    ("Jona\u200bthan Smi\u00adthers", "Jonathan Smithers"),  # zero-width space, soft hyphen
    # a line break where no space is
    ("東京都新宿区\n西新宿二丁目８番１号", "東京都新宿区西新宿二丁目8番1号"),
]


@pytest.mark.parametrize(("surface", "printed"), CASES)
def test_loose_value_is_located_and_its_source_surface_kept(surface: str, printed: str) -> None:
    text = f"Contact {surface} at {PHONE} today."
    type_ = "ADDRESS" if "東京" in printed else "PERSON"
    r = parse_extraction(f"{type_}\t{printed}\nPHONE\t{PHONE}\n", text)
    assert (type_, surface) in r.candidates
    assert r.hallucinated_rows == [] and r.parse_success


@pytest.mark.parametrize(("surface", "printed"), CASES)
def test_loose_value_is_masked_not_released(surface: str, printed: str) -> None:
    text = f"Contact {surface} at {PHONE} today."
    type_ = "ADDRESS" if "東京" in printed else "PERSON"
    hits = rule_hits(text)
    out = mask_document(
        text,
        Extraction(raw=f"{type_}\t{printed}\nPHONE\t{PHONE}\n"),
        hits,
        ("PERSON", "PHONE", "ADDRESS"),
        False,
    )
    assert out.released is not None
    masked = out.released.masked_text
    assert surface not in masked and PHONE not in masked
    assert surface in out.released.mapping.values()


def test_loose_match_never_cuts_a_character_or_glues_digits() -> None:
    # "タ" is not "ダ" (a voiced mark is part of the character), "123456" not inside "91234567"
    r = parse_extraction(
        "PERSON\tタナカ\nACCOUNT\t１２３４５６\nPERSON\tAnna\n", "ダナカ 91234567 Anna"
    )
    assert r.candidates == [("PERSON", "Anna")]
    assert sorted(r.hallucinated_rows) == [("ACCOUNT", "１２３４５６"), ("PERSON", "タナカ")]


def test_real_hallucinations_stay_rejected() -> None:
    r = parse_extraction("PERSON\tJane Doe\n", "Contact Jonathan Smithers today.")
    assert (
        r.candidates == []
        and r.hallucinated_rows == [("PERSON", "Jane Doe")]
        and not r.parse_success
    )


def test_other_loose_occurrences_of_a_found_value_are_masked_too() -> None:
    # the model lists a value once; the document also writes it in capitals, full width, across a
    # line
    text = (
        "John Smith wrote to us.\nSigned: JOHN SMITH, ｊｏｈｎ ｓｍｉｔｈ, John\nSmith."
        " Johnsmithers Co."
    )
    out = mask_document(text, Extraction(raw="PERSON\tJohn Smith\n"), [], ("PERSON",), False)
    assert out.released is not None
    masked = out.released.masked_text
    for surface in ("John Smith", "JOHN SMITH", "ｊｏｈｎ ｓｍｉｔｈ", "John\nSmith"):
        assert surface not in masked
    # not a whole word: a found value's loose forms are masked as words only
    assert "Johnsmithers" in masked
    assert len(out.released.mapping) == 4


def test_loose_forms_of_a_found_identifier_are_masked_anywhere() -> None:
    text = "Ref AB-12345 and ab-12345, also ＡＢ－１２３４５."
    out = mask_document(text, Extraction(raw="ACCOUNT\tAB-12345\n"), [], ("ACCOUNT",), False)
    assert out.released is not None
    assert out.released.masked_text == "Ref [ACCOUNT_1] and [ACCOUNT_2], also [ACCOUNT_3]."
