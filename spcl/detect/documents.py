"""PASSPORT and DRIVER_LICENSE: identity-document numbers, reported only right after their context
words.

Passport numbers have no public check digit and share their shapes with order and product codes, so
a value counts only within ``max(context_window, 32)`` characters after a passport word
(``detect.context.PASSPORT``: passport, 여권, 旅券, パスポート): Korean ``M12345678`` /
``M123A4567``, Japanese ``TK1234567``, US nine digits or ``A12345678``. Driver's licences likewise
after a licence word (``detect.context.DRIVER_LICENSE``: driver's license, 운전면허, 免許証 …):
Korean ``NN-NN-NNNNNN-NN`` (or a region name and ``NN-NNNNNN-NN``), Japanese twelve digits (``第`` …
``号`` allowed). ``validated`` is ``None``.
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect._common import context_cues, context_regex, lowered
from spcl.detect.base import Hit

_PASSPORT = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Z]{1,2}\d{7,8}|[A-Z]\d{3}[A-Z]\d{4}|\d{9})(?![A-Za-z0-9])"
)

_KR_REGION = r"(?:서울|부산|경기|강원|충북|충남|전북|전남|경북|경남|제주|대구|인천|광주|대전|울산)"
_LICENSE = re.compile(
    r"(?<![A-Za-z0-9])(?:\d{2}[-‐–−－ ]\d{2}[-‐–−－ ]\d{6}[-‐–−－ ]\d{2}|\d{12}|"
    + _KR_REGION
    + r" ?\d{2}[-‐–−－]\d{6}[-‐–−－]\d{2}|[A-Z]\d{7,12})(?![A-Za-z0-9])"
)


class _AfterCue:
    """Values of one shape found right after one of the type's context words."""

    name = ""
    type = ""
    _value: re.Pattern[str]

    def __init__(self, settings: DetectSettings) -> None:
        self._window = max(settings.context_window, 32)
        # the type's context words (``detect.context``)
        self._cue = context_regex(settings, self.type)
        # lower-cased substrings one of which every cue holds
        self._gates = context_cues(settings, self.type)

    def find(self, text: str) -> list[Hit]:
        """Hits in ``text``: the first value of the shape after each context word, within the
        window."""
        hits: list[Hit] = []
        low = lowered(text)
        if not any(g in low for g in self._gates):
            return hits
        pos = 0
        for cue in self._cue.finditer(text):
            start = max(cue.end(), pos)
            m = self._value.search(text, start, min(len(text), cue.end() + self._window))
            if m is None:
                continue
            if (
                m.end() == cue.end() + self._window
                and m.end() < len(text)
                and text[m.end()].isalnum()
            ):
                continue  # the window cut a longer token
            hits.append(Hit(self.type, m.start(), m.end(), None, self.name))
            pos = m.end()
        return hits


class PassportDetector(_AfterCue):
    """KR/JP/US passport numbers after a passport word.

    >>> PassportDetector(DetectSettings()).find("여권번호: M12345678")
    [Hit(type='PASSPORT', start=6, end=15, validated=None, detector='passport@1')]
    """

    name = "passport@1"
    type = "PASSPORT"
    _value = _PASSPORT


class DriverLicenseDetector(_AfterCue):
    """KR/JP driver's licence numbers after a licence word.

    >>> DriverLicenseDetector(DetectSettings()).find("운전면허번호 11-12-123456-12")
    [Hit(type='DRIVER_LICENSE', start=7, end=22, validated=None, detector='driver_license@1')]
    """

    name = "driver_license@1"
    type = "DRIVER_LICENSE"
    _value = _LICENSE
