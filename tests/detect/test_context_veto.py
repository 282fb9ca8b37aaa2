"""Words around a candidate decide what its validator cannot: a room, part, extension or order
number shaped like an SSN, test data, documentation examples ("e.g.", "例えば", "のように", "예:")
are no person's values; a value whose check digit confirms it stays found whatever the words around
it."""

from __future__ import annotations

import pytest

from spcl.detect import find_pii

NOT_VALUES = [
    "Room 536-90-4399 is on the left.",
    "The part number for the replacement kit: 536-90-4399.",
    "Dial extension 536-90-4399 from the lobby.",
    "Order no. 536-90-4399 shipped today.",
    "Suite 536 90 4399, second floor.",
    "test data: ITIN 912-70-1234",
    "Use 912-70-1234 as test data.",
    "電話番号は03-1234-5678のように書きます。",
    "例えば 090-1234-5678 と入力します。",
    "예: 010-1234-5678 형식으로 입력하세요.",
    "Enter your number, e.g. (212) 555-0147.",
    "Part no. 415-555-0132 fits the older model.",
    "예: 주민번호 900101-3234560",  # no check digit to confirm it (the 2020 scheme), and an example
]


@pytest.mark.parametrize("text", NOT_VALUES)
def test_a_shape_the_words_around_it_explain_is_not_reported(text: str) -> None:
    assert [(h.type, text[h.start : h.end]) for h in find_pii(text)] == []


STILL_VALUES = [
    ("card e.g. 4111 1111 1111 1111", "CARD", "4111 1111 1111 1111"),  # Luhn decides
    ("예: 주민번호 900101-1234568", "RRN", "900101-1234568"),  # the check digit decides
    ("SSN 536-90-4399, room 12", "SSN", "536-90-4399"),
    ("Room booked; my SSN is 536-90-4399.", "SSN", "536-90-4399"),  # the SSN word is closer
    ("電話 03-1234-5678 までご連絡ください", "PHONE", "03-1234-5678"),
    ("ITIN 912-70-1234 on the form", "ITIN", "912-70-1234"),
]


@pytest.mark.parametrize(("text", "type_", "value"), STILL_VALUES)
def test_a_value_its_validator_or_its_own_words_confirm_stays_found(
    text: str, type_: str, value: str
) -> None:
    assert (type_, value) in [(h.type, text[h.start : h.end]) for h in find_pii(text)]
