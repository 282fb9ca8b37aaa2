"""IBAN: international bank account numbers (ISO 13616), plain or in groups of four.

A candidate starts with a country code and two check digits (upper or lower case, ``de89 3704 …``); its
letters and digits (spaces or hyphens between groups allowed) are cut to the country's registered length,
and the mod-97 check decides: ``True`` is reported, ``False`` (a wrong check digit, an unknown country, a
wrong length) only with ``keep_invalid``. The value must end where the text's token ends: a longer run of
letters and digits glued to it is not an IBAN.
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect.base import Hit
from spcl.detect.validators import IBAN_LENGTHS, validate_iban

# bounded: at most 34 characters of IBAN plus one separator between each; each step consumes one character
_IBAN = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z]{2}|[a-z]{2})\d{2}(?:[ \u00a0-]?[A-Za-z0-9]){10,32}")
_SEPS = " \u00a0-"


class IbanDetector:
    """IBANs that pass the mod-97 check at their country's length.

    >>> IbanDetector(DetectSettings()).find("IBAN: DE89 3704 0044 0532 0130 00.")
    [Hit(type='IBAN', start=6, end=33, validated=True, detector='iban@1')]
    """

    name = "iban@1"
    type = "IBAN"

    def __init__(self, settings: DetectSettings) -> None:
        self._keep_invalid = settings.keep_invalid

    def find(self, text: str) -> list[Hit]:
        """IBAN hits in ``text``."""
        hits: list[Hit] = []
        pos = 0
        while (m := _IBAN.search(text, pos)) is not None:
            pos = m.end()
            raw = m.group()
            want = IBAN_LENGTHS.get(raw[:2].upper())
            if want is None:
                pos = m.start() + 2
                continue
            compact: list[str] = []
            end = m.start()
            for i, ch in enumerate(raw):
                if ch in _SEPS:
                    continue
                compact.append(ch)
                if len(compact) == want:
                    end = m.start() + i + 1
                    break
            if len(compact) < want or (end < len(text) and text[end].isascii() and text[end].isalnum()):
                pos = m.start() + 2
                continue
            valid = validate_iban("".join(compact).upper())
            if valid or self._keep_invalid:
                hits.append(Hit(self.type, m.start(), end, valid, self.name))
            pos = end
        return hits
