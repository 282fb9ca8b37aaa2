"""Check-digit validators against python-stdnum as an independent oracle, plus the three-way
answers."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from stdnum import luhn
from stdnum.jp import in_ as jp_in
from stdnum.kr import rrn as kr_rrn

from spcl.detect.validators import (
    card_brand,
    digits_of,
    is_calendar_date,
    luhn_ok,
    mynumber_check_digit,
    rrn_check_digit,
    validate_card,
    validate_mynumber,
    validate_rrn,
)

FAST = settings(max_examples=300, deadline=None)
digit_strings = st.text(alphabet="0123456789", min_size=1, max_size=19)


def mutate(number: str, position: int, delta: int) -> str:
    """``number`` with one digit changed by ``delta`` (mod 10, never 0 so it really changes)."""
    i = position % len(number)
    return number[:i] + str((int(number[i]) + delta) % 10) + number[i + 1 :]


# --- Luhn / cards ---------------------------------------------------------------------------------


@FAST
@given(digit_strings)
@example("4111111111111111")
@example("0")
def test_luhn_agrees_with_stdnum(number: str) -> None:
    assert luhn_ok(number) == luhn.is_valid(number)


@FAST
@given(
    st.text(alphabet="0123456789", min_size=12, max_size=18), st.integers(0, 30), st.integers(1, 9)
)
def test_luhn_valid_numbers_and_single_digit_mutations(
    body: str, position: int, delta: int
) -> None:
    number = body + luhn.calc_check_digit(body)
    assert luhn_ok(number)
    # Luhn catches every single-digit error.
    assert not luhn_ok(mutate(number, position, delta))


@pytest.mark.parametrize(
    ("number", "brand"),
    [
        ("4111111111111111", "visa"),
        ("5555555555554444", "mastercard"),
        ("2223003122003222", "mastercard"),
        ("378282246310005", "amex"),
        ("3530111333300000", "jcb"),
        ("6011111111111117", "discover"),
        ("30569309025904", "diners"),
        ("6200000000000005", "unionpay"),
        ("2200000000000004", "mir"),
    ],
)
def test_known_test_cards_validate(number: str, brand: str) -> None:
    assert card_brand(number) == brand
    assert validate_card(number) is True


@pytest.mark.parametrize(
    "number",
    [
        "4111111111111112",  # Luhn fails
        "9784061234567",  # ISBN-13: no IIN
        "1234567812345670",  # Luhn passes, no IIN range starts with 1
        "378282246310",  # too short
        "5555555555554",  # Mastercard prefix, wrong length (13)
    ],
)
def test_not_cards(number: str) -> None:
    assert validate_card(number) is False


# --- Korean RRN -----------------------------------------------------------------------------------

rrn_dates = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2099, 12, 31))


def rrn_front(date: dt.date, foreigner: bool, male: bool) -> str:
    """YYMMDD + the G digit for ``date``'s century."""
    base = {(1900, False): 1, (2000, False): 3, (1900, True): 5, (2000, True): 7}[
        (date.year // 100 * 100, foreigner)
    ]
    return date.strftime("%y%m%d") + str(base + (0 if male else 1))


@FAST
@given(rrn_dates, st.text(alphabet="0123456789", min_size=5, max_size=5), st.booleans())
def test_rrn_check_digit_agrees_with_stdnum(date: dt.date, serial: str, male: bool) -> None:
    first12 = rrn_front(date, False, male) + serial
    assert str(rrn_check_digit(first12)) == kr_rrn.calc_check_digit(first12)
    number = first12 + kr_rrn.calc_check_digit(first12)
    assert validate_rrn(number) is True
    # stdnum also rejects region codes > 96 (pre-2020 rule); where it accepts, so do we.
    if kr_rrn.is_valid(number):
        assert validate_rrn(number) is True


@FAST
@given(rrn_dates, st.text(alphabet="0123456789", min_size=5, max_size=5), st.integers(1, 9))
def test_rrn_wrong_check_digit_is_cannot_tell(date: dt.date, serial: str, delta: int) -> None:
    first12 = rrn_front(date, False, True) + serial
    good = rrn_check_digit(first12)
    # post-2020 numbers look like this
    assert validate_rrn(first12 + str((good + delta) % 10)) is None


@FAST
@given(rrn_dates, st.text(alphabet="0123456789", min_size=5, max_size=5), st.booleans())
def test_foreigner_number_uses_its_own_formula(date: dt.date, serial: str, male: bool) -> None:
    first12 = rrn_front(date, True, male) + serial
    total = sum(
        w * int(c) for w, c in zip((2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5), first12, strict=True)
    )
    expected = (13 - total % 11) % 10
    assert rrn_check_digit(first12) == expected
    assert validate_rrn(first12 + str(expected)) is True
    native = (11 - total % 11) % 10
    if native != expected:
        assert validate_rrn(first12 + str(native)) is None


@pytest.mark.parametrize(
    "number",
    [
        "9002301234568",  # Feb 30
        "9013011234568",  # month 13
        "9001001234568",  # day 0
        "0102291234568",  # 1901-02-29 is not a leap day (G=1)
        "900101123456",  # 12 digits
        "90010112345689",  # 14 digits
        "90010a1234568",
    ],
)
def test_rrn_impossible(number: str) -> None:
    assert validate_rrn(number) is False


def test_rrn_leap_day_by_century() -> None:
    # 2000-02-29 exists (G=3/4), 1900-02-29 does not (G=1/2).
    first = "0002293" + "12345"
    assert validate_rrn(first + str(rrn_check_digit(first))) is True
    first = "0002291" + "12345"
    assert validate_rrn(first + str(rrn_check_digit(first))) is False


# --- Japanese My Number ---------------------------------------------------------------------------


@FAST
@given(st.text(alphabet="0123456789", min_size=11, max_size=11))
def test_mynumber_check_digit_agrees_with_stdnum(first11: str) -> None:
    assert str(mynumber_check_digit(first11)) == jp_in.calc_check_digit(first11)
    assert validate_mynumber(first11 + jp_in.calc_check_digit(first11)) is True


@FAST
@given(st.text(alphabet="0123456789", min_size=12, max_size=12))
@example("123456789018")
@example("123456789012")
def test_mynumber_random_numbers_agree_with_stdnum(number: str) -> None:
    assert validate_mynumber(number) == jp_in.is_valid(number)


@FAST
@given(
    st.text(alphabet="0123456789", min_size=11, max_size=11), st.integers(0, 10), st.integers(1, 9)
)
def test_mynumber_mutations_agree_with_stdnum(first11: str, position: int, delta: int) -> None:
    mutated = mutate(first11 + jp_in.calc_check_digit(first11), position, delta)
    assert validate_mynumber(mutated) == jp_in.is_valid(mutated)


def test_mynumber_wrong_length() -> None:
    assert validate_mynumber("12345678901") is False
    assert validate_mynumber("1234567890180") is False


# --- helpers --------------------------------------------------------------------------------------


def test_digits_of_handles_fullwidth_and_separators() -> None:
    assert digits_of("０９０－１２３４－５６７８") == "09012345678"
    assert digits_of("(02) 123-4567") == "021234567"


@FAST
@given(st.dates(min_value=dt.date(1, 1, 1)))
def test_calendar_dates(date: dt.date) -> None:
    assert is_calendar_date(date.year, date.month, date.day)


@pytest.mark.parametrize(
    ("y", "m", "d"), [(2023, 2, 29), (1990, 2, 30), (1990, 4, 31), (1990, 13, 1), (1990, 0, 1)]
)
def test_impossible_calendar_dates(y: int, m: int, d: int) -> None:
    assert not is_calendar_date(y, m, d)
