"""PHONE: Korean and Japanese domestic numbers, international forms (+CC, or after an international
call prefix such as 001-) and North American numbers as people write them in English text: "(415)
555-2671", "(212)555-0147", "415-555-0132", "415.555.0132", "1-800-…", "212 555 0147" after a phone
word, each with an optional extension ("x204", "ext. 45", also "内線"/"내선" after domestic
numbers).

One regex finds phone-shaped candidates; a small classifier on the digits decides what the number is
(FACTS.md): a personal number (reported), a company representative / toll-free number (reported only
with ``include_company_numbers``) or not a phone (dropped). Phones carry no checksum, so every hit
has ``validated=None``: the structure (prefix and length) is what made it a candidate at all, and
``True`` would add no information. Numbers without separators are accepted only for mobile prefixes
with an exact length (010/070/080/090 + 8 digits, …); fixed lines need separators or parentheses.
"""

from __future__ import annotations

import re
from typing import Literal

from spcl.config import DetectSettings
from spcl.detect._common import NUM_LEFT, NUM_RIGHT, SEP, negative_context, vetoed, window_has
from spcl.detect.base import Hit
from spcl.detect.validators import digits_of

Kind = Literal["personal", "company"]

# "0" and "1" also in full width (０, １): the cluster scan hands full-width numbers over too.
_DOMESTIC = re.compile(
    NUM_LEFT
    + r"(?:\([0０]\d{1,4}\)[ ]?\d{1,4}"
    + SEP
    + r"\d{4}"  # (03) 1234-5678, (02)123-4567
    + r"|[0０]\d{1,4}\(\d{1,4}\)\d{4}"  # 03(1234)5678
    + r"|[0０]\d{1,4}\)[ ]?\d{1,4}"
    + SEP
    + r"\d{4}"  # 02)123-4567
    + r"|[0０]\d{1,4}"
    + SEP
    + r"?\d{1,4}"
    + SEP
    + r"?\d{3,4}"  # 010-1234-5678, 0120-123-456
    + r"|[1１][568５６８]\d{2}"
    + SEP
    + r"\d{4})"  # 1588-1234 (company)
    + NUM_RIGHT
)
# The right edge of a phone number: as NUM_RIGHT, except that an extension may follow at once
# ("x204").
_PHONE_RIGHT = r"(?!\d)(?!(?![xX]\.? ?\d|[eE][xX][tT])[A-Za-z])(?![-‐－][\dA-Za-z])(?![.．]\d)"
PHONE_SHAPE = _DOMESTIC
"""The written shape of a KR/JP domestic number (groups of the right lengths), for other
detectors."""
# International numbers: "+CC …" or an international call prefix ("001-1-…", "00700 82 …", "011 1
# …").
_INTL_BODY = r"\d{1,3}[-. ]?(?:\(0?\d{1,4}\)[-. ]?)?\d{1,4}(?:[-. ]\d{1,4}){1,4}"
_INTL = re.compile(
    r"(?<![\dA-Za-z+])(?:\+(?P<plus>"
    + _INTL_BODY
    + r"|\d{8,15})"
    + r"|(?<![-‐－.．])(?:00700|00[1-9]|011)[-. ]?(?P<exit>"
    + _INTL_BODY
    + r"))"
    + _PHONE_RIGHT
)
# North American numbers written the US way: (415) 555-2671, (212)555-0147, (415)-555-0132,
# 415-555-0132, 415.555.0132, 415 555-0132, 1-800-555-0199. Without parentheses the separators agree
# ("-" or ".", or a space then "-"), so that a run of numbers is never read as a phone; a leading
# "1." is a version ("1.429.945.6764"), not a trunk. "212 555 0147" with spaces only (group
# "spaced") counts only after a phone word: a table of numbers is not a phone.
_NANP = re.compile(
    NUM_LEFT
    + r"(?:(?P<spaced>(?:1 )?[2-9]\d{2} [2-9]\d{2} \d{4})"
    + r"|(?:1[- ]?)?(?:\([2-9]\d{2}\)[ -]?[2-9]\d{2}[-."
    r" ]\d{4}|[2-9]\d{2}(?P<s>[-.])[2-9]\d{2}(?P=s)\d{4}"
    + r"|[2-9]\d{2} [2-9]\d{2}-\d{4}))"
    + _PHONE_RIGHT
)
_PHONE_CONTEXT = re.compile(
    r"phone|tel\b|call|cell|mobile|fax|contact|reach|text me|전화|연락|휴대|電話|携帯|連絡",
    re.IGNORECASE,
)
# An extension right after a number: "x204", " ext. 45", ", extension 12", " 内線 123", " 내선 45".
_EXT = re.compile(
    r"[ ,]{0,2}(?:[xX]\.?|(?i:ext)\.?|(?i:extension)|内線|내선)[ .:#]{0,2}\d{1,6}(?!\d)"
)
# A bare 3-3-4 group after one of these words is an account number, not a US phone.
_BANK_CONTEXT = re.compile(r"계좌|은행|口座|銀行|account|acct|bank", re.IGNORECASE)

# Words that make a phone-shaped number something else (a phone has no check digit: context
# decides).
_NOT_A_PHONE = re.compile(
    r"part\s?(?:no|number|#)|serial|model|room|rm\.|catalog|item\s?(?:no|number|#)|"
    r"부품\s?번호|품번|品番|部品番号",
    re.IGNORECASE,
)

# NANP toll-free area codes: company numbers, like KR 15xx/16xx/18xx and JP 0120/0800.
NANP_TOLL_FREE = frozenset({"800", "833", "844", "855", "866", "877", "888"})
_KR_AREA = re.compile(r"0(?:2|3[1-3]|4[1-4]|5[1-5]|6[1-4])")
_KR_MOBILE = re.compile(r"01[016-9]")
_KR_PERSONAL_050 = re.compile(r"050[2-8]?")
_COMPANY_KR = re.compile(r"1[568]\d\d")
_JP_NOT_FIXED = ("050", "060", "070", "080", "090", "0120", "0570", "0800", "020", "0990")
_GROUP = re.compile(r"\d+")


def classify_kr(digits: str, prefix: str | None) -> Kind | None:
    """What a Korean domestic number is: ``"personal"``, ``"company"`` or ``None`` (not a KR phone).

    ``prefix`` is the first digit group as written (``"02"`` in 02-123-4567), or ``None`` when the
    number has no separators; then only mobile numbers of exact length count.

    >>> (classify_kr("01012345678", None), classify_kr("15881234", "1588"),
    ...  classify_kr("0312345678", "03"))
    ('personal', 'company', None)
    """
    n = len(digits)
    if prefix is None:
        if digits.startswith(("010", "070")):
            return "personal" if n == 11 else None
        return "personal" if _KR_MOBILE.match(digits) and n in (10, 11) else None
    if _COMPANY_KR.fullmatch(prefix):
        year_range = 1500 <= int(digits[:4]) < int(digits[4:]) <= 2099  # "1600-1700" is not a phone
        return "company" if n == 8 and not year_range else None
    if prefix in ("010", "070"):
        return "personal" if n == 11 else None
    if _KR_MOBILE.fullmatch(prefix):
        return "personal" if n in (10, 11) else None
    if _KR_PERSONAL_050.fullmatch(prefix):
        return "personal" if n in (11, 12) else None
    if prefix == "080":
        return "company" if n == 10 else None
    if prefix == "02":
        return "personal" if n in (9, 10) else None
    if _KR_AREA.fullmatch(prefix):
        return "personal" if n in (10, 11) else None
    return None


def classify_jp(digits: str, prefix: str | None) -> Kind | None:
    """What a Japanese domestic number is: ``"personal"``, ``"company"`` or ``None`` (not a JP
    phone).

    ``prefix`` as in :func:`classify_kr`; fixed lines (10 digits, area code of 2-5 digits with the
    leading 0) need separators.

    >>> (classify_jp("09012345678", None), classify_jp("0120123456", "0120"),
    ...  classify_jp("0312345678", "03"))
    ('personal', 'company', 'personal')
    """
    n = len(digits)
    if prefix is None:
        ok = digits.startswith(("070", "080", "090")) and not digits.startswith("0800") and n == 11
        return "personal" if ok else None
    if prefix in ("0120", "0570"):
        return "company" if n == 10 else None
    if prefix == "0800":
        return "company" if n == 11 else None
    if prefix in ("070", "080", "090", "050"):
        return "personal" if n == 11 else None
    fixed = 2 <= len(prefix) <= 5 and prefix[0] == "0" and prefix[1] != "0"
    if fixed and not prefix.startswith(_JP_NOT_FIXED):
        return "personal" if n == 10 else None
    return None


def first_group(raw: str, digits: str) -> str | None:
    """The first written digit group of a separated number, ``None`` for a plain digit run."""
    if len(raw) == len(digits):
        return None
    m = _GROUP.search(raw)
    return digits[: m.end() - m.start()] if m else None


def _classify_intl(raw: str, digits: str, plus: bool = True) -> tuple[str, Kind] | None:
    """(region, kind) of an international number written after '+' (``plus``) or after an
    international call prefix such as 001 (then only the Korean, Japanese and North American plans
    count), or ``None``."""
    n = len(digits)
    if n < 8 or n > 15:
        return None
    groups = [digits_of(g) for g in _GROUP.findall(raw)]
    for cc, region, classify in (("82", "kr", classify_kr), ("81", "jp", classify_jp)):
        if not digits.startswith(cc):
            continue
        rest = groups[1:] if groups[0] == cc else [groups[0][len(cc) :], *groups[1:]]
        rest = [g for g in rest if g]
        if rest and rest[0] == "0":  # "+82 (0)10-…"
            rest = rest[1:]
        if not rest:
            return None
        first = rest[0].removeprefix("0")
        prefix: str | None
        if region == "kr" and _COMPANY_KR.fullmatch(first):
            national, prefix = "".join(rest), first
        else:
            national = "0" + "".join(rest).removeprefix("0")
            prefix = "0" + first if len(rest) > 1 else None
        kind = classify(national, prefix)
        return (region, kind) if kind else None
    if digits[0] == "1":
        # NANP: 1 + area code (2-9..) + exchange (2-9..) + 4 digits; toll-free area codes are
        # companies.
        ok = n == 11 and digits[1] in "23456789" and digits[4] in "23456789"
        return ("intl", "company" if digits[1:4] in NANP_TOLL_FREE else "personal") if ok else None
    if (
        not plus
        and n == 10
        and digits[0] in "23456789"
        and digits[3] in "23456789"
        and len(groups) == 3
        and [len(g) for g in groups] == [3, 3, 4]
    ):
        # "001-212-555-0198": a US number dialled from Korea or Japan, written without the country
        # code 1
        return "intl", "company" if digits[:3] in NANP_TOLL_FREE else "personal"
    return ("intl", "personal") if n >= 9 and plus else None


def _nanp_kind(raw: str) -> Kind:
    """A North American number written without "+": company when its area code is toll-free."""
    digits = digits_of(raw)
    return "company" if digits[-10:-7] in NANP_TOLL_FREE else "personal"


class PhoneDetector:
    """Korean, Japanese and international phone numbers; hits name ``phone_kr@1``, ``phone_jp@1`` or
    ``phone_intl@1`` by the numbering plan that matched."""

    name = "phone@1"
    type = "PHONE"
    min_len = 9

    def __init__(self, settings: DetectSettings) -> None:
        self._company = settings.include_company_numbers

    def _keep(self, kind: Kind) -> bool:
        return kind == "personal" or self._company

    def find(self, text: str) -> list[Hit]:
        """Phone hits in ``text`` (validated is always ``None``: phones have no checksum).

        >>> [h.detector for h in PhoneDetector(DetectSettings()).find("전화01012345678로")]
        ['phone_kr@1']
        """
        return self.find_in(text, 0, len(text))

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """Hits whose candidate lies in ``text[start:end]`` (lookbehinds still see the text before).

        An extension written right after a number ("x204", "ext. 45", "内線 12") is part of the hit.
        """
        hits: list[Hit] = []
        for m in _DOMESTIC.finditer(text, start, end):
            s, e = m.span()
            raw = m.group()
            digits = digits_of(raw)
            prefix = first_group(raw, digits)
            kind = classify_kr(digits, prefix)
            region = "kr"
            if kind is None:
                kind = classify_jp(digits, prefix)
                region = "jp"
            if kind is None or not self._keep(kind) or negative_context(text, s):
                continue
            if (hit := self._hit(text, s, e, region)) is not None:
                hits.append(hit)
        for m in _NANP.finditer(text, start, end):
            s = m.start()
            if negative_context(text, s) or not self._keep(_nanp_kind(m.group())):
                continue
            if m.group("spaced") and not window_has(_PHONE_CONTEXT, text, s, 24):
                continue
            if "(" not in m.group() and window_has(_BANK_CONTEXT, text, s, 16):
                continue  # a bare 3-3-4 group after a banking word: an account number
            if (hit := self._hit(text, s, m.end(), "intl")) is not None:
                hits.append(hit)
        if (
            text.find("+", start, end) != -1
            or text.find("00", start, end) != -1
            or text.find("011", start, end) != -1
        ):
            for m in _INTL.finditer(text, start, end):
                body = m.group("plus") or m.group("exit")
                got = _classify_intl(body, digits_of(body), plus=m.group("plus") is not None)
                if got is None or not self._keep(got[1]) or negative_context(text, m.start()):
                    continue
                if (hit := self._hit(text, m.start(), m.end(), got[0])) is not None:
                    hits.append(hit)
        return hits

    @staticmethod
    def _hit(text: str, s: int, e: int, region: str) -> Hit | None:
        """The hit for ``text[s:e]``, stretched over an extension written right after it; ``None``
        when the words around it say it is no person's phone (a part number, a documentation
        example)."""
        if vetoed(text, s, e, _NOT_A_PHONE, 16):
            return None
        ext = _EXT.match(text, e)
        return Hit("PHONE", s, ext.end() if ext else e, None, f"phone_{region}@1")
