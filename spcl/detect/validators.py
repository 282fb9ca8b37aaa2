"""Pure check-digit and structure validators with Presidio's three-way answer.

Each validator takes the digits only (separators already removed) and answers ``True`` (the check digit
or structure confirms the number), ``False`` (shown not to be valid) or ``None`` (cannot tell). The
algorithms are those in ``FACTS.md``; python-stdnum is the independent oracle in the property tests.
Nothing here logs or raises with a value in the message.
"""

from __future__ import annotations

import calendar
import re
import unicodedata

_NON_DIGIT = re.compile(r"\D+")

_RRN_WEIGHTS = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)
_MYNUMBER_WEIGHTS = (6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2)
_RRN_CENTURY = {"9": 1800, "0": 1800, "1": 1900, "2": 1900, "3": 2000, "4": 2000,
                "5": 1900, "6": 1900, "7": 2000, "8": 2000}  # fmt: skip


def digits_of(value: str) -> str:
    """The decimal digits of ``value`` as ASCII, every other character dropped.

    >>> digits_of("０９０-1234 5678")
    '09012345678'
    """
    digits = _NON_DIGIT.sub("", value)
    if not digits.isascii():
        digits = "".join(str(unicodedata.decimal(ch)) for ch in digits)
    return digits


def is_calendar_date(year: int, month: int, day: int) -> bool:
    """True when ``year-month-day`` exists in the Gregorian calendar (leap years included).

    >>> is_calendar_date(2024, 2, 29), is_calendar_date(2023, 2, 29)
    (True, False)
    """
    if not (1 <= month <= 12) or day < 1 or year < 1:
        return False
    return day <= calendar.monthrange(year, month)[1]


def luhn_ok(digits: str) -> bool:
    """True when ``digits`` pass the Luhn (mod 10) check.

    >>> luhn_ok("4111111111111111"), luhn_ok("4111111111111112")
    (True, False)
    """
    if not digits or not digits.isdigit() or not digits.isascii():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = ord(ch) - 48
        if i % 2:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def luhn_check_digit(payload: str) -> int:
    """The digit that makes ``payload + digit`` pass the Luhn check (for generators of test data).

    >>> luhn_check_digit("411111111111111")
    1
    """
    return next(d for d in range(10) if luhn_ok(f"{payload}{d}"))


def card_brand(digits: str) -> str | None:
    """The card network whose IIN range and length fit ``digits`` (FACTS.md), else ``None``.

    >>> card_brand("4111111111111111"), card_brand("9784061234567")
    ('visa', None)
    """
    n = len(digits)
    if not (13 <= n <= 19) or not digits.isdigit():
        return None
    p2, p3, p4 = int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return "visa" if n in (13, 16, 18, 19) else None
    if (51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16:
        return "mastercard"
    if p2 in (34, 37) and n == 15:
        return "amex"
    if 3528 <= p4 <= 3589 and n >= 16:
        return "jcb"
    if (p4 == 6011 or 644 <= p3 <= 649 or p2 == 65) and n >= 16:
        return "discover"
    if (300 <= p3 <= 305 or p2 in (36, 38, 39)) and n >= 14:
        return "diners"
    if p2 == 62 and n >= 16:
        return "unionpay"
    if 2200 <= p4 <= 2204 and n >= 16:
        return "mir"
    return None


def validate_card(digits: str) -> bool:
    """Payment card number: ``True`` when Luhn passes *and* an IIN range with its length fits.

    A Luhn pass with an unknown IIN is ``False`` too: one random number in ten passes Luhn, so the
    checksum alone does not make a card.

    >>> validate_card("4111111111111111"), validate_card("4111111111111112")
    (True, False)
    """
    return luhn_ok(digits) and card_brand(digits) is not None


def rrn_birth_date_ok(digits: str) -> bool:
    """True when the first seven digits of a Korean RRN give a real birth date (G decides the century)."""
    if len(digits) < 7 or not digits[:7].isdigit():
        return False
    century = _RRN_CENTURY.get(digits[6])
    if century is None:
        return False
    return is_calendar_date(century + int(digits[:2]), int(digits[2:4]), int(digits[4:6]))


def rrn_check_digit(digits: str) -> int:
    """The check digit of the first 12 digits of a Korean RRN or foreigner number (by G, FACTS.md).

    >>> rrn_check_digit("900101123456")
    8
    """
    total = sum(w * (ord(c) - 48) for w, c in zip(_RRN_WEIGHTS, digits[:12], strict=True))
    if digits[6] in "5678":
        return (13 - total % 11) % 10
    return (11 - total % 11) % 10


def validate_rrn(digits: str) -> bool | None:
    """Korean resident registration (or foreigner registration) number, 13 digits.

    ``False`` when the length, the G digit or the birth date is impossible; ``True`` when the check
    digit matches; ``None`` when the date is valid but the check digit fails (numbers issued from
    October 2020 carry random digits and no check digit, so a failed check proves nothing).

    >>> validate_rrn("9001011234568"), validate_rrn("9001011234561"), validate_rrn("9002301234560")
    (True, None, False)
    """
    if len(digits) != 13 or not digits.isdigit() or not digits.isascii():
        return False
    if not rrn_birth_date_ok(digits):
        return False
    return True if rrn_check_digit(digits) == ord(digits[12]) - 48 else None


def mynumber_check_digit(digits: str) -> int:
    """The check digit of the first 11 digits of a Japanese My Number (FACTS.md, not Verhoeff).

    >>> mynumber_check_digit("12345678901")
    8
    """
    r = sum(w * (ord(c) - 48) for w, c in zip(_MYNUMBER_WEIGHTS, digits[:11], strict=True)) % 11
    return 0 if r <= 1 else 11 - r


def validate_mynumber(digits: str) -> bool:
    """Japanese individual number (My Number), 12 digits: ``True`` when the check digit matches.

    >>> validate_mynumber("123456789018"), validate_mynumber("123456789012")
    (True, False)
    """
    if len(digits) != 12 or not digits.isdigit() or not digits.isascii():
        return False
    return mynumber_check_digit(digits) == ord(digits[11]) - 48
