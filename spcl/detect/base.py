"""The one small interface every rule detector shares (``Hit`` is declared beside the registry, in
:mod:`spcl.rule_types`, so that a detector module can be registered before the configuration
exists)."""

from __future__ import annotations

from typing import Protocol

from spcl.rule_types import Hit

__all__ = ["Detector", "Hit", "NumericDetector"]


class Detector(Protocol):
    """A detector finds hits of one PII type in NFC text."""

    name: str
    type: str

    def find(self, text: str) -> list[Hit]:
        """All hits of this detector in ``text`` (offsets into ``text``)."""
        ...


class NumericDetector(Detector, Protocol):
    """A detector of digit-shaped values, fed the digit clusters of a text by one shared scan.

    ``min_len`` is the shortest cluster (characters) that can hold a value; ``find_in`` looks only
    inside ``text[start:end]`` (lookarounds may read the characters around it) and returns offsets
    into ``text``.
    """

    min_len: int

    def find_in(self, text: str, start: int, end: int) -> list[Hit]:
        """Hits whose span lies within ``[start, end)`` of ``text``."""
        ...
