"""ACCOUNT: Korean and Japanese bank account numbers, only beside a banking context word.

Bank accounts have no public checksum and no common layout (FACTS.md), so a digit group is reported
only when a context word (``detect.context.ACCOUNT``: 계좌, 은행, 입금, 口座, 銀行, 普通, 支店, …)
occurs in the ``context_window`` characters before it. Shapes: Korean 10-14 digits, plain or dashed
(123-45-678901, 1002-123-456789); Japanese 7-digit account numbers (普通 1234567), branch-account
3-7 and Japan Post 5-8 forms. Phone-shaped numbers and timestamps are left to (or kept from) other
detectors. ``validated`` is always ``None``.
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect._common import NUM_LEFT, NUM_RIGHT, context_regex, negative_context, window_has
from spcl.detect.base import Hit
from spcl.detect.phone import PHONE_SHAPE, classify_jp, classify_kr, first_group
from spcl.detect.validators import digits_of, is_calendar_date

# Dashed groups may end in a one-digit check group (농협 302-1234-5678-9, 새마을금고
# 9002-1234-5678-9).
_ACCOUNT = re.compile(
    NUM_LEFT + r"(?:\d{2,6}(?:[-‐－]\d{2,8}){1,3}(?:[-‐－]\d)?|\d{7,14})" + NUM_RIGHT
)


def _looks_like_timestamp(digits: str) -> bool:
    """12/14 digits starting with a real YYYYMMDD (20240102123456) are times, not accounts."""
    if len(digits) not in (12, 14) or digits[:2] not in ("19", "20"):
        return False
    return is_calendar_date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))


class AccountDetector:
    """Bank account numbers after a KR/JP banking context word."""

    name = "account@1"
    type = "ACCOUNT"
    min_len = 7

    def __init__(self, settings: DetectSettings) -> None:
        self._window = settings.context_window
        self._context = context_regex(settings, self.type)

    def find(self, text: str) -> list[Hit]:
        """ACCOUNT hits in ``text``.

        >>> AccountDetector(DetectSettings()).find("국민은행 계좌 123456-01-123456")
        [Hit(type='ACCOUNT', start=8, end=24, validated=None, detector='account@1')]
        """
        return self.find_in(text, 0, len(text))

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """Hits whose candidate lies in ``text[start:end]`` (lookbehinds still see the text
        before)."""
        hits: list[Hit] = []
        for m in _ACCOUNT.finditer(text, start, end):
            s = m.start()
            raw = m.group()
            digits = digits_of(raw)
            n = len(digits)
            if not (10 <= n <= 14 or n == 7):
                continue
            if n == 7 and len(raw) != 7:  # a JP account number is written as 7 plain digits
                continue
            if not window_has(self._context, text, s, self._window):
                continue
            prefix = first_group(raw, digits)
            if PHONE_SHAPE.fullmatch(raw) and (
                classify_kr(digits, prefix) or classify_jp(digits, prefix)
            ):
                continue  # written as a phone number and one by its numbering plan
            if _looks_like_timestamp(digits) or negative_context(text, s):
                continue
            hits.append(Hit(self.type, s, m.end(), None, self.name))
        return hits
