"""A model row the source lacks that shares a name-like word with it fails the document closed.

``Jonathan A. Smithers`` for the source's ``Jonathan Smithers`` was a hallucination and, beside
another matching row, the document was released with the name in clear."""

from __future__ import annotations

from spcl.extract.backends import Extraction
from spcl.extract.contract import check_candidates, parse_extraction
from spcl.mask_stage.document import mask_document

SOURCE = "Jonathan Smithers met Ann Lee in Fairview. 김가상 씨가 왔다. ジョン・スミス氏も。"


def test_changed_inner_word_fails_closed_without_values() -> None:
    raw = "PERSON\tJonathan A. Smithers\nPERSON\tAnn Lee\n"
    parsed = parse_extraction(raw, SOURCE)
    assert parsed.near_source_rows == 1 and not parsed.parse_success
    out = mask_document(SOURCE, Extraction(raw=raw), [], ("PERSON",), False)
    assert out.released is None
    assert out.reason == "hallucinated_near_source"
    assert "Smithers" not in repr(parsed)


def test_korean_and_japanese_near_rows_fail() -> None:
    for value in ("김가산", "ジョン・スミザース"):
        parsed = parse_extraction(f"PERSON\t{value}\nPERSON\tAnn Lee\n", SOURCE)
        assert not parsed.parse_success, value


def test_unrelated_hallucination_still_releases() -> None:
    # no shared capitalised word (function words do not count), Han/Hangul pair or kana word:
    # harmless
    for value in ("Maria Gonzalez", "The Rural", "박민수", "ジョージ"):
        raw = f"PERSON\tAnn Lee\nPERSON\t{value}\n"
        out = mask_document(SOURCE, Extraction(raw=raw), [], ("PERSON",), False)
        assert out.released is not None, value
        assert "Ann Lee" not in out.released.masked_text


def test_numeric_types_and_candidate_lists() -> None:
    # a wrong digit is no name-like word; the evaluator's candidate lists follow the same rule
    assert check_candidates(
        [("PHONE", "555-0199"), ("PERSON", "Ann Lee")], "Ann Lee 555-0198"
    ).parse_success
    res = check_candidates([("ADDRESS", "12 Elm Street Fairview"), ("PERSON", "Ann Lee")], SOURCE)
    assert not res.parse_success and res.near_source_rows == 1
