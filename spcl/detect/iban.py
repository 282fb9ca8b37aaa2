"""IBAN: international bank account numbers (ISO 13616), plain or in groups of four.

A candidate starts with a country code and two check digits (upper or lower case, ``de89 3704 …``);
its letters and digits (spaces or hyphens between groups allowed) are cut to the country's
registered length, and the mod-97 check decides: ``True`` is reported, ``False`` (a wrong check
digit, an unknown country, a wrong length) only with ``keep_invalid``. The value must end where the
text's token ends: a longer run of letters and digits glued to it is not an IBAN.
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect.base import Hit
from spcl.detect.validators import IBAN_LENGTHS, validate_iban

# bounded: at most 34 characters of IBAN plus one separator between each; each step consumes one
# character
_IBAN = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z]{2}|[a-z]{2})\d{2}(?:[ \u00a0-]?[A-Za-z0-9]){10,32}")
_START = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z]{2}|[a-z]{2})\d{2}")
_SEPS = " \u00a0-"


class IbanDetector:
    """IBANs that pass the mod-97 check at their country's length.

    A numeric detector: the detector set hands it the digit clusters of a text (every IBAN holds a
    run of seven or more digits and separators: its account number), and it looks back up to 40
    characters from each for the country code and check digits, so its spans start before the
    cluster (and may end after it).

    >>> IbanDetector(DetectSettings()).find("IBAN: DE89 3704 0044 0532 0130 00.")
    [Hit(type='IBAN', start=6, end=33, validated=True, detector='iban@1')]
    """

    name = "iban@1"
    type = "IBAN"
    min_len = 7

    def __init__(self, settings: DetectSettings) -> None:
        self._keep_invalid = settings.keep_invalid

    def find(self, text: str) -> list[Hit]:
        """IBAN hits in ``text``."""
        return self.find_in(text, 0, len(text))

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """IBANs that start at most 40 characters before ``end`` and reach into ``[start, end)``."""
        hits: list[Hit] = []
        pos = 0
        for c in _START.finditer(text, max(0, start - 40), end):
            s = c.start()
            if s < pos:
                continue
            m = _IBAN.match(text, s)
            if m is None:
                continue
            raw = m.group()
            want = IBAN_LENGTHS.get(raw[:2].upper())
            stop = self._cut(text, m, raw, want) if want is not None else None
            if stop is None or stop <= start:
                continue
            valid = validate_iban("".join(ch for ch in text[s:stop] if ch not in _SEPS).upper())
            if valid or self._keep_invalid:
                hits.append(Hit(self.type, s, stop, valid, self.name))
            pos = stop
        return hits

    @staticmethod
    def _cut(text: str, m: re.Match[str], raw: str, want: int) -> int | None:
        """The end offset of the first ``want`` letters and digits of the match, or None when there
        are fewer or the value runs on into a longer token."""
        count = 0
        for i, ch in enumerate(raw):
            if ch in _SEPS:
                continue
            count += 1
            if count == want:
                end = m.start() + i + 1
                if end < len(text) and text[end].isascii() and text[end].isalnum():
                    return None
                return end
        return None
