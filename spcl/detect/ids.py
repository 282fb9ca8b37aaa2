"""Numbers with a check digit: Korean RRN (and foreigner number), Japanese My Number, payment cards.

A candidate is found by a linear regex with digit lookarounds, its digits go to a pure validator
(:mod:`spcl.detect.validators`), and the three-way answer decides: ``True`` and ``None`` are
reported, ``False`` only with ``keep_invalid``.
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect._common import (
    GROUP_SEP,
    NUM_LEFT,
    NUM_RIGHT,
    context_regex,
    negative_context,
    vetoed,
    window_has,
)
from spcl.detect.base import Hit
from spcl.detect.validators import digits_of, validate_card, validate_mynumber, validate_rrn

_RRN = re.compile(NUM_LEFT + r"\d{6}(?P<sep>[-‐–−－ ]?)[1-8１-８]\d{6}" + NUM_RIGHT)

_MYNUMBER = re.compile(
    NUM_LEFT + r"(?<!\d )\d{4}(?:(" + GROUP_SEP + r")\d{4}\1\d{4}|\d{8})" + NUM_RIGHT + r"(?! \d)"
)

# Card groups may also be separated by dots (4111.1111.1111.1111): the Luhn check decides.
_CARD_SEP = GROUP_SEP[:-1] + ".．]"
_CARD = re.compile(
    NUM_LEFT
    + r"(?<!\d )(?:\d{13,19}"
    + r"|\d{4}(?:"
    + _CARD_SEP
    + r"\d{4}){2,3}"
    + _CARD_SEP
    + r"\d{1,4}"  # 4-4-4-4(-3), 4-4-4-1
    + r"|\d{4}"
    + _CARD_SEP
    + r"\d{6}"
    + _CARD_SEP
    + r"\d{4,5})"  # Amex 4-6-5, Diners 4-6-4
    + NUM_RIGHT
    + r"(?! \d)"
)


class RrnDetector:
    """Korean resident registration numbers ``YYMMDD-GNNNNNC`` and foreigner numbers (G 5-8).

    The birth date must be real; the check digit decides ``True`` vs ``None``. Thirteen plain digits
    are also product barcodes (the JAN code 4902102072458 reads as a 1949 birth date), so without
    the dash a number counts only when its check digit matches or an RRN context word
    (``detect.context.RRN``: 주민, 등록번호, 외국인, RRN) is in the context window."""

    name = "rrn_kr@1"
    type = "RRN"
    min_len = 13

    def __init__(self, settings: DetectSettings) -> None:
        self._keep_invalid = settings.keep_invalid
        self._window = settings.context_window
        self._context = context_regex(settings, self.type)

    def find(self, text: str) -> list[Hit]:
        """RRN hits in ``text``.

        >>> RrnDetector(DetectSettings()).find("주민번호 900101-1234568")
        [Hit(type='RRN', start=5, end=19, validated=True, detector='rrn_kr@1')]
        """
        return self.find_in(text, 0, len(text))

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """Hits whose candidate lies in ``text[start:end]`` (lookbehinds still see the text
        before)."""
        hits: list[Hit] = []
        for m in _RRN.finditer(text, start, end):
            s = m.start()
            valid = validate_rrn(digits_of(m.group()))
            if (valid is False and not self._keep_invalid) or negative_context(text, s):
                continue
            if (
                valid is None
                and not m.group("sep")
                and not window_has(self._context, text, s, self._window)
            ):
                continue
            if valid is None and vetoed(text, s, m.end(), None, 0):
                continue  # no check digit to confirm it, and the text says it is an example
            hits.append(Hit(self.type, s, m.end(), valid, self.name))
        return hits


class MyNumberDetector:
    """Japanese individual numbers (12 digits). Twelve random digits pass the check one time in ten,
    so a candidate must also be written 4-4-4 with one separator *or* follow a context word
    (``detect.context.MYNUMBER``: マイナンバー, 個人番号, my number) within the context window; then
    the check digit decides ``True``/``False``."""

    name = "mynumber_jp@1"
    type = "MYNUMBER"
    min_len = 12

    def __init__(self, settings: DetectSettings) -> None:
        self._keep_invalid = settings.keep_invalid
        self._window = settings.context_window
        self._context = context_regex(settings, self.type)

    def find(self, text: str) -> list[Hit]:
        """My Number hits in ``text``.

        >>> MyNumberDetector(DetectSettings()).find("個人番号：123456789018")
        [Hit(type='MYNUMBER', start=5, end=17, validated=True, detector='mynumber_jp@1')]
        """
        return self.find_in(text, 0, len(text))

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """Hits whose candidate lies in ``text[start:end]`` (lookbehinds still see the text
        before)."""
        hits: list[Hit] = []
        for m in _MYNUMBER.finditer(text, start, end):
            s = m.start()
            grouped = m.group(1) is not None
            if not grouped and not window_has(self._context, text, s, self._window):
                continue
            valid = validate_mynumber(digits_of(m.group()))
            if (not valid and not self._keep_invalid) or negative_context(text, s):
                continue
            hits.append(Hit(self.type, s, m.end(), valid, self.name))
        return hits


class CardDetector:
    """Payment card numbers: 13-19 digits, plain or in 4-4-4-4 / 4-6-5 groups (4-4-4-4 also with
    dots); ``True`` when Luhn and an IIN range with its length agree, else ``False`` (reported only
    with ``keep_invalid``)."""

    name = "card@1"
    type = "CARD"
    min_len = 13

    def __init__(self, settings: DetectSettings) -> None:
        self._keep_invalid = settings.keep_invalid

    def find(self, text: str) -> list[Hit]:
        """Card hits in ``text``.

        >>> CardDetector(DetectSettings()).find("card 4111 1111 1111 1111")
        [Hit(type='CARD', start=5, end=24, validated=True, detector='card@1')]
        """
        return self.find_in(text, 0, len(text))

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """Hits whose candidate lies in ``text[start:end]`` (lookbehinds still see the text
        before)."""
        hits: list[Hit] = []
        for m in _CARD.finditer(text, start, end):
            valid = validate_card(digits_of(m.group()))
            if (not valid and not self._keep_invalid) or negative_context(text, m.start()):
                continue
            hits.append(Hit(self.type, m.start(), m.end(), valid, self.name))
        return hits
