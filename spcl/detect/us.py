"""US taxpayer numbers: Social Security numbers (SSN) and Individual Taxpayer Identification Numbers
(ITIN).

Both are nine digits ``AAA-GG-SSSS`` with no check digit. Dashed and spaced forms count on their
shape (the structure check of :func:`spcl.detect.validators.validate_ssn` / ``validate_itin`` then
decides); nine plain digits count only after a context word (``detect.context.SSN`` / ``.ITIN``:
SSN, social security, ITIN, taxpayer …) within ``max(context_window, 40)`` characters. An area of
9xx is an ITIN, never an SSN. Order, invoice, ticket, part and serial-number words right before the
value veto it, and so do room, suite, extension, unit and model words and documentation-example cues
("e.g.", "test data", "例えば", "예:" …), unless an SSN/ITIN word is as close.
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect._common import (
    NUM_LEFT,
    NUM_RIGHT,
    context_regex,
    example_context,
    negative_context,
    vetoed,
    window_has,
)
from spcl.detect.base import Hit
from spcl.detect.validators import digits_of, validate_itin, validate_ssn

_TAX_ID = re.compile(NUM_LEFT + r"\d{3}(?:(?P<sep>[-‐‑–−－ ])\d{2}(?P=sep)|\d{2})\d{4}" + NUM_RIGHT)
# a spaced or plain value must not be one group of a longer run of spaced digit groups
_DIGIT_SPACE = re.compile(r"\d $")
_SPACE_DIGIT = re.compile(r" \d")
# words that make a 3-2-4 number an order, ticket or part number (besides the shared negative
# context)
_NUMBER_OF_A_THING = re.compile(
    r"order|invoice|ticket|case|ref\.?|reference|tracking|confirmation|booking|part|item|product|"
    r"catalog|room|rm\.|suite|ext\.|extension|unit|lot|batch|model|주문|송장|예약|호실|내선|注文|"
    r"伝票|予約|品番|号室|内線",
    re.IGNORECASE,
)
# How far before the value those words count ("part number for the replacement kit: 123-45-6789").
_THING_WINDOW = 40


class _TaxIdDetector:
    """Shared matching of the nine-digit US taxpayer numbers; subclasses pick the validator and
    words."""

    name = ""
    type = ""
    min_len = 9
    _itin = False

    def __init__(self, settings: DetectSettings) -> None:
        self._keep_invalid = settings.keep_invalid
        # "social security number is " is 26 characters
        self._window = max(settings.context_window, 40)
        self._context = context_regex(settings, self.type)

    def find(self, text: str) -> list[Hit]:
        """Hits in ``text``."""
        return self.find_in(text, 0, len(text))

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """Hits whose candidate lies in ``text[start:end]`` (lookbehinds still see the text
        before)."""
        hits: list[Hit] = []
        for m in _TAX_ID.finditer(text, start, end):
            digits = digits_of(m.group())
            if (digits[0] == "9") != self._itin:
                continue
            s, e = m.start(), m.end()
            spaced = m.group("sep") in (None, " ")
            if spaced and (
                _DIGIT_SPACE.search(text, max(0, s - 2), s) or _SPACE_DIGIT.match(text, e)
            ):
                continue
            context = self._context
            if m.group("sep") is None and not window_has(context, text, s, self._window):
                continue
            valid = validate_itin(digits) if self._itin else validate_ssn(digits)
            if (not valid and not self._keep_invalid) or negative_context(text, s):
                continue
            # the structure check cannot tell a taxpayer number from a room, part or order number:
            # the words around it decide, unless an SSN/ITIN word stands as close
            if not window_has(context, text, s, 16) and vetoed(
                text, s, e, _NUMBER_OF_A_THING, _THING_WINDOW
            ):
                continue
            if example_context(text, s, e):  # "test data: ITIN 912-70-1234" even after its word
                continue
            hits.append(Hit(self.type, s, e, valid, self.name))
        return hits


class SsnDetector(_TaxIdDetector):
    """US Social Security numbers ``123-45-6789`` / ``123 45 6789`` (plain nine digits after an SSN
    word).

    >>> SsnDetector(DetectSettings()).find("SSN 536-90-4399")
    [Hit(type='SSN', start=4, end=15, validated=True, detector='ssn_us@1')]
    """

    name = "ssn_us@1"
    type = "SSN"


class ItinDetector(_TaxIdDetector):
    """US ITINs ``9XX-7X-XXXX`` (plain nine digits after an ITIN or taxpayer word).

    >>> ItinDetector(DetectSettings()).find("ITIN: 912-70-1234")
    [Hit(type='ITIN', start=6, end=17, validated=True, detector='itin_us@1')]
    """

    name = "itin_us@1"
    type = "ITIN"
    _itin = True
