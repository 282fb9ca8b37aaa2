"""The one small interface every rule detector shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Hit:
    """One rule detection: a PII ``type`` at the half-open span ``[start, end)`` of the NFC text.

    ``validated`` is the validator's three-way answer: ``True`` (check digit or structure confirmed),
    ``False`` (shown not to be valid) or ``None`` (cannot tell, e.g. a post-2020 Korean RRN or a type
    with no checksum). ``detector`` names the detector and its version, e.g. ``"rrn_kr@1"``.
    """

    type: str
    start: int
    end: int
    validated: bool | None
    detector: str


class Detector(Protocol):
    """A detector finds hits of one PII type in NFC text."""

    name: str
    type: str

    def find(self, text: str) -> list[Hit]:
        """All hits of this detector in ``text`` (offsets into ``text``)."""
        ...


class NumericDetector(Detector, Protocol):
    """A detector of digit-shaped values, fed the digit clusters of a text by one shared scan.

    ``min_len`` is the shortest cluster (characters) that can hold a value; ``find_in`` looks only inside
    ``text[start:end]`` (lookarounds may read the characters around it) and returns offsets into ``text``.
    """

    min_len: int

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """Hits whose span lies within ``[start, end)`` of ``text``."""
        ...
