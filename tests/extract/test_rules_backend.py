"""A value the rules backend finds across a line break is masked, not dropped from its answer.

The backend's extra rules (English street addresses, North American phones, Korean road-name
addresses) allow any whitespace inside a value, a line break included; the contract is one row per
line, so such a value was left out of the answer, and as these rules are not rule detectors the
release check did not miss it: the document was released with the address in clear.
"""

from __future__ import annotations

import pytest

from spcl.extract.backends.rules_backend import RulesExtractor
from spcl.mask_stage.candidates import rule_hits
from spcl.mask_stage.document import mask_document


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Ship it to 158 Sample\nStreet, Fairview today.", "Sample"),
        ("Call (335)\n555-0109 now.", "555-0109"),
        ("Ship it to 158 Sample Street,\nFairview today.", "Fairview"),
    ],
)
def test_a_value_across_a_line_break_is_masked(text: str, value: str) -> None:
    extraction = RulesExtractor().run([text])[0]
    out = mask_document(text, extraction, rule_hits(text), ("PERSON", "ADDRESS", "PHONE"), False)
    assert out.released is not None and value not in out.released.masked_text


@pytest.mark.parametrize("sep", [" ", "\n", "\r\n", "\t", "  \r\n ", "\n\n", "\n" + " " * 12])
def test_every_part_of_a_street_address_is_masked_whatever_whitespace_separates_them(
    sep: str,
) -> None:
    text = f"Ship it to 158{sep}Sample{sep}Street,{sep}Apt{sep}2,{sep}Fairview today."
    extraction = RulesExtractor().run([text])[0]
    out = mask_document(text, extraction, rule_hits(text), ("PERSON", "ADDRESS", "PHONE"), False)
    assert out.released is not None
    for part in ("158", "Sample", "Fairview"):
        assert part not in out.released.masked_text
