"""PHONE: Korean and Japanese domestic numbers and international (+CC) forms.

One regex finds phone-shaped candidates; a small classifier on the digits decides what the number is
(FACTS.md): a personal number (reported), a company representative / toll-free number (reported only
with ``include_company_numbers``) or not a phone (dropped). Phones carry no checksum, so every hit has
``validated=None``: the structure (prefix and length) is what made it a candidate at all, and ``True``
would add no information. Numbers without separators are accepted only for mobile prefixes with an exact
length (010/070/080/090 + 8 digits, …); fixed lines need separators or parentheses.
"""

from __future__ import annotations

import re
from typing import Literal

from spcl.config import DetectSettings
from spcl.detect._common import NUM_LEFT, NUM_RIGHT, SEP, negative_context
from spcl.detect.base import Hit
from spcl.detect.validators import digits_of

Kind = Literal["personal", "company"]

_DOMESTIC = re.compile(
    NUM_LEFT
    + r"(?:\(0\d{1,4}\)[ ]?\d{1,4}" + SEP + r"\d{4}"  # (03) 1234-5678, (02)123-4567
    + r"|0\d{1,4}\(\d{1,4}\)\d{4}"  # 03(1234)5678
    + r"|0\d{1,4}\)[ ]?\d{1,4}" + SEP + r"\d{4}"  # 02)123-4567
    + r"|0\d{1,4}" + SEP + r"?\d{1,4}" + SEP + r"?\d{4}"  # 010-1234-5678, 01012345678
    + r"|1[568]\d{2}" + SEP + r"\d{4})"  # 1588-1234 (company)
    + NUM_RIGHT
)
_INTL = re.compile(
    r"(?<![\dA-Za-z+])\+(?:\d{1,3}[-. ]?(?:\(0?\d{1,4}\)[-. ]?)?\d{1,4}(?:[-. ]\d{1,4}){1,4}|\d{8,15})"
    + NUM_RIGHT
)

_KR_AREA = re.compile(r"0(?:2|3[1-3]|4[1-4]|5[1-5]|6[1-4])")
_KR_MOBILE = re.compile(r"01[016-9]")
_JP_NOT_FIXED = ("050", "070", "080", "090", "0120", "0570", "0800", "020", "0990")


def classify_kr(digits: str, separated: bool) -> Kind | None:
    """What a Korean domestic number is: ``"personal"``, ``"company"`` or ``None`` (not a KR phone).

    >>> classify_kr("01012345678", False), classify_kr("15881234", True), classify_kr("0212345678", False)
    ('personal', 'company', None)
    """
    n = len(digits)
    if digits[:1] == "1":
        return "company" if n == 8 and digits[1] in "568" and separated else None
    if digits.startswith("010"):
        return "personal" if n == 11 else None
    if _KR_MOBILE.match(digits):
        return "personal" if n in (10, 11) else None
    if digits.startswith("070"):
        return "personal" if n == 11 else None
    if digits.startswith("050"):
        return "personal" if n in (11, 12) and separated else None
    if digits.startswith("080"):
        return "company" if n == 10 and separated else None
    if digits.startswith("02"):
        return "personal" if n in (9, 10) and separated else None
    if _KR_AREA.match(digits):
        return "personal" if n in (10, 11) and separated else None
    return None


def classify_jp(digits: str, separated: bool) -> Kind | None:
    """What a Japanese domestic number is: ``"personal"``, ``"company"`` or ``None`` (not a JP phone).

    >>> classify_jp("09012345678", False), classify_jp("0120123456", True), classify_jp("0312345678", True)
    ('personal', 'company', 'personal')
    """
    n = len(digits)
    if digits.startswith(("0120", "0570")):
        return "company" if n == 10 and separated else None
    if digits.startswith("0800"):
        return "company" if n == 11 and separated else None
    if digits.startswith(("070", "080", "090")):
        return "personal" if n == 11 else None
    if digits.startswith("050"):
        return "personal" if n == 11 and separated else None
    if digits[:1] == "0" and digits[1:2] != "0" and not digits.startswith(_JP_NOT_FIXED):
        return "personal" if n == 10 and separated else None
    return None


def _classify_intl(digits: str) -> tuple[str, Kind] | None:
    """(region, kind) of an international number given as digits after '+', or ``None``."""
    n = len(digits)
    if n < 8 or n > 15:
        return None
    if digits.startswith("82"):
        nsn = digits[2:].removeprefix("0")
        national = nsn if nsn[:1] == "1" and len(nsn) == 8 else "0" + nsn
        kind = classify_kr(national, True)
        return ("kr", kind) if kind else None
    if digits.startswith("81"):
        kind = classify_jp("0" + digits[2:].removeprefix("0"), True)
        return ("jp", kind) if kind else None
    if digits[0] == "1":
        # NANP: 1 + area code (2-9) + exchange (2-9) + 4 digits.
        ok = n == 11 and digits[1] in "23456789" and digits[4] in "23456789"
        return ("intl", "personal") if ok else None
    return ("intl", "personal") if n >= 9 else None


class PhoneDetector:
    """Korean, Japanese and international phone numbers; hits name ``phone_kr@1``, ``phone_jp@1`` or
    ``phone_intl@1`` by the numbering plan that matched."""

    name = "phone@1"
    type = "PHONE"

    def __init__(self, settings: DetectSettings) -> None:
        self._company = settings.include_company_numbers

    def _keep(self, kind: Kind) -> bool:
        return kind == "personal" or self._company

    def find(self, text: str) -> list[Hit]:
        """Phone hits in ``text`` (validated is always ``None``: phones have no checksum).

        >>> [h.detector for h in PhoneDetector(DetectSettings()).find("전화01012345678로")]
        ['phone_kr@1']
        """
        hits: list[Hit] = []
        for m in _DOMESTIC.finditer(text):
            s, e = m.span()
            raw = m.group()
            digits = digits_of(raw)
            separated = len(digits) != len(raw)
            kind = classify_kr(digits, separated)
            region = "kr"
            if kind is None:
                kind = classify_jp(digits, separated)
                region = "jp"
            if kind is None or not self._keep(kind) or negative_context(text, s):
                continue
            hits.append(Hit("PHONE", s, e, None, f"phone_{region}@1"))
        if "+" in text:
            for m in _INTL.finditer(text):
                s, e = m.span()
                got = _classify_intl(digits_of(m.group()))
                if got is None or not self._keep(got[1]):
                    continue
                hits.append(Hit("PHONE", s, e, None, f"phone_{got[0]}@1"))
        return hits
