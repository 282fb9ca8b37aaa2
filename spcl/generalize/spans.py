"""The spans to generalize: one function, ``collect_spans``, so the candidate set can be swapped in one place.

Candidates are the extractor's rows ∪ the filter's rule hits (``validated`` not False; detector types
mapped onto the extractor's as ``spcl mask`` does: MYNUMBER → RRN, POSTAL → ADDRESS). Their occurrences
are found exactly as the masker finds them (``spcl.mask.mask_text``: literal and restricted variants,
longest match wins, overlaps merge), so a value is replaced wherever it occurs. Mentions of one value —
the same type and the same characters once spaces and separators are removed (``김가상`` and ``김 가 상``)
— form one :class:`Entity`, decided once and replaced the same way everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spcl.extract.backends.rules_backend import HIT_TYPE_MAP
from spcl.mask import mask_text
from spcl.text import normalize

_VARIANT_NOISE = re.compile(r"[\s\-./()\u3000]")


@dataclass(slots=True)
class Entity:
    """One entity of a document: its ``type``, the ``value`` of its first mention and every mention's span."""

    type: str
    value: str
    mentions: list[tuple[int, int]] = field(default_factory=list)

    def __repr__(self) -> str:  # never print the value
        return f"Entity(type={self.type!r}, mentions={len(self.mentions)})"


def hit_fields(hit: Any) -> tuple[str, int, int, bool | None]:
    """``(type, start, end, validated)`` of a rule hit given as ``spcl.detect.Hit`` or as a Parquet dict."""
    if isinstance(hit, Mapping):
        return str(hit["type"]), int(hit["start"]), int(hit["end"]), hit.get("validated")
    return hit.type, hit.start, hit.end, hit.validated


def usable_hits(text: str, hits: Iterable[Any] | None) -> list[tuple[str, int, int]]:
    """The rule hits that must be replaced: ``(type, start, end)`` with ``validated`` not False.

    ``hits=None`` means the input had no hits column: the detectors run again on ``text`` (NFC).
    """
    if hits is None:
        from spcl.detect import find_pii

        hits = find_pii(text)
    out = []
    for hit in hits:
        type_, start, end, validated = hit_fields(hit)
        if validated is not False and 0 <= start < end <= len(text):
            out.append((HIT_TYPE_MAP.get(type_, type_), start, end))
    return out


def collect_spans(text: str, extraction_rows: Iterable[tuple[str, str]], hits: Iterable[Any] | None) -> list[Entity]:
    """The entities of NFC ``text`` in order of first mention (see the module docstring).

    >>> [(e.type, e.mentions) for e in collect_spans("김가상 / 김 가 상", [("PERSON", "김가상")], [])]
    [('PERSON', [(0, 3), (6, 11)])]
    """
    text = normalize(text)
    candidates = [(t, v) for t, v in extraction_rows]
    candidates += [(t, text[s:e]) for t, s, e in usable_hits(text, hits)]
    result = mask_text(text, candidates)
    entities: dict[tuple[str, str], Entity] = {}
    for span in result.spans:
        surface = text[span.start:span.end]
        key = (span.type, _VARIANT_NOISE.sub("", surface) or surface)
        ent = entities.get(key)
        if ent is None:
            ent = entities[key] = Entity(span.type, surface)
        ent.mentions.append((span.start, span.end))
    return list(entities.values())
