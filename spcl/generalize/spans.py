"""The spans to generalize: the mask stage's candidate set, grouped into entities (one decision
each).

``collect_spans`` uses the same candidates ``spcl mask`` masks (``spcl.mask_stage.candidates``):
extractor rows ∪ the filter's rule hits (the ``hits`` column, ``validated`` not False, *and* the
detectors run again) ∪ the CPU person-name finders. Their occurrences are found exactly as the
masker finds them (``spcl.mask.mask_text``: literal and restricted variants, longest match wins,
overlaps merge), so a value is replaced wherever it occurs. Mentions of one value — the same type
and the same characters once spaces and separators are removed (``김가상`` and ``김 가 상``) — form
one :class:`Entity`, decided once and replaced the same way everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.mask import mask_text
from spcl.mask_stage.candidates import RuleHit, collect_candidates, rule_hits
from spcl.text import normalize

_VARIANT_NOISE = re.compile(r"[\s\-./()\u3000]")


@dataclass(slots=True)
class Entity:
    """One entity of a document: its ``type``, the ``value`` of its first mention and every
    mention's span."""

    type: str
    value: str
    mentions: list[tuple[int, int]] = field(default_factory=list)

    def __repr__(self) -> str:  # never print the value
        return f"Entity(type={self.type!r}, mentions={len(self.mentions)})"


def document_hits(
    text: str, hits: Iterable[Any] | None, reasons: Sequence[str] | None = None
) -> list[RuleHit]:
    """The rule hits of NFC ``text``: ``hits`` when already :class:`RuleHit`, else the filter's
    ``hits`` column (``None`` when the input has none) ∪ the detectors run again
    (``spcl.mask_stage.candidates.rule_hits``)."""
    items = list(hits) if hits is not None else None
    if items is not None and all(isinstance(h, RuleHit) for h in items):
        return items
    return rule_hits(text, items, reasons)


def collect_spans(
    text: str,
    extraction_rows: Iterable[tuple[str, str]],
    hits: Iterable[Any] | None,
    *,
    types: Sequence[str] = DEFAULT_TYPES,
    names: bool = True,
) -> list[Entity]:
    """The entities of NFC ``text`` in order of first mention (see the module docstring).

    ``hits``: :class:`RuleHit` values, the filter's ``hits`` column of the row, or ``None``;
    ``types`` the entity types that may become candidates; ``names`` adds the CPU person-name
    finders.

    >>> spans = collect_spans("김가상 / 김 가 상", [("PERSON", "김가상")], [])
    >>> [(e.type, e.mentions) for e in spans]
    [('PERSON', [(0, 3), (6, 11)])]
    """
    text = normalize(text)
    cands = collect_candidates(text, extraction_rows, document_hits(text, hits), types, names)
    result = mask_text(text, cands.union())
    entities: dict[tuple[str, str], Entity] = {}
    for span in result.spans:
        surface = text[span.start : span.end]
        key = (span.type, _VARIANT_NOISE.sub("", surface) or surface)
        ent = entities.get(key)
        if ent is None:
            ent = entities[key] = Entity(span.type, surface)
        ent.mentions.append((span.start, span.end))
    return list(entities.values())
