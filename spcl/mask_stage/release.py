"""The release check: the only way a document reaches ``masked/``.

``check_release`` takes the NFC source, the masker's result and the document's required rule hits,
and returns a :class:`Released` document only when

1. the masked text reassembles to the source with its mapping (reversible), and
2. every character of every required rule hit lies inside a masked span, and
3. no required hit's surface is left anywhere in the masked text;

otherwise it returns the failure reason (``mask_roundtrip``, ``uncovered_rule_hit:<TYPE>``,
``rule_value_in_output:<TYPE>``). The masked-output writer (``spcl.mask_stage.outputs.MaskedRows``)
accepts only :class:`Released` values made here, so no backend's path can write ``masked/`` around
this check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from spcl.mask import MaskResult, reassemble_text
from spcl.mask_stage.candidates import RuleHit

_SEAL = object()  # only this module can make a Released


class MaskedSpan(TypedDict):
    """One masked span of a released document (an entry of the masked output's ``spans`` column):
    its offsets in the NFC source, type, token and finding sources."""

    type: str
    start: int
    end: int
    token: str
    found_by: list[str]


@dataclass(frozen=True, slots=True)
class Released:
    """A document that passed the release check: masked text, spans, distinct types and the
    secret mapping."""

    masked_text: str
    spans: list[MaskedSpan]
    types: list[str]
    mapping: dict[str, str]
    seal: object = field(repr=False, compare=False)

    def __repr__(self) -> str:  # never print the text or the mapping
        return f"Released(spans={len(self.spans)}, types={self.types})"

    def is_sealed(self) -> bool:
        """True when this value was made by :func:`check_release`."""
        return self.seal is _SEAL


def _uncovered(hit: RuleHit, covered: Sequence[tuple[int, int]]) -> bool:
    pos = hit.start
    for start, end in covered:  # sorted by start
        if start <= pos < end:
            pos = end
            if pos >= hit.end:
                return False
    return pos < hit.end


def _outside_spans_kept(source: str, result: MaskResult) -> bool:
    """The masked text is the source with each span replaced by its ``token`` (spans sorted,
    disjoint)."""
    pieces, pos = [], 0
    for span in sorted(result.spans, key=lambda s: s.start):
        if span.start < pos:
            return False
        pieces += [source[pos : span.start], span.token]
        pos = span.end
    pieces.append(source[pos:])
    return "".join(pieces) == result.masked_text


def check_release(
    source: str,
    result: MaskResult,
    required: Sequence[RuleHit],
    found_by: Sequence[Sequence[str]] | None = None,
    reversible: bool = True,
) -> Released | str:
    """A :class:`Released` document, or the reason it must not be released (see the module
    docstring).

    ``source`` must be the NFC text the hits and the masker's spans index; ``found_by`` lists the
    sources of each span (same order as ``result.spans``). ``reversible=False`` (an irreversible
    operator, ``redact``, was applied): the round trip cannot hold, so instead every span must be
    replaced and the text between spans must be the source's.
    """
    if reversible and reassemble_text(result.masked_text, result.mapping) != source:
        return "mask_roundtrip"
    if not reversible and not _outside_spans_kept(source, result):
        return "mask_roundtrip"
    covered = sorted((s.start, s.end) for s in result.spans)
    for hit in required:
        if _uncovered(hit, covered):
            return f"uncovered_rule_hit:{hit.type}"
    for hit in required:
        surface = source[hit.start : hit.end].strip()
        if surface and surface in result.masked_text:
            return f"rule_value_in_output:{hit.type}"
    sources = list(found_by) if found_by is not None else [[] for _ in result.spans]
    spans: list[MaskedSpan] = [
        {"type": s.type, "start": s.start, "end": s.end, "token": s.token, "found_by": list(src)}
        for s, src in zip(result.spans, sources, strict=True)
    ]
    return Released(
        result.masked_text,
        spans,
        sorted({s.type for s in result.spans}),
        dict(result.mapping),
        _SEAL,
    )
