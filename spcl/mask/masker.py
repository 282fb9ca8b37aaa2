"""The deterministic masker: candidates → ``[TYPE_n]`` tokens, spans into the NFC source, and a
mapping.

Rules: literal predictions win over variants of other predictions and a fixed type priority settles
one value with several types (``spcl.mask.variants``); the NFC source is scanned once with a single
regex whose alternatives are ordered longest-first; at each position the longest match wins and
overlapping matches merge into one masked span (so no part of any candidate's occurrence stays in
clear); tokens are assigned per type in source order over the actual surface (same surface → same
token, a different spacing or separator → its own token), skipping token names the source already
contains. PERSON and REL values are replaced only where they stand as whole words
(``spcl.mask.words``): a name is never masked inside a longer word (``オプ`` in ``オプション``); a
value that is a whole word nowhere is masked everywhere (fail closed). Identifier types (the rule
hits) are masked wherever they occur.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from spcl.mask.tokens import TokenAllocator, reserved_tokens
from spcl.mask.variants import (
    WHOLE_WORD_TYPES,
    ScanBudgetExceeded,
    alternatives,
    canonical_alternatives,
    check_type_name,
    normalize_type,
    normalize_value,
    scan,
)
from spcl.text import normalize

SPAN_BUDGET_PER_CHAR = 200
SPAN_BUDGET_MIN = 1_000_000
"""A document's span search may try at most ``max(SPAN_BUDGET_MIN, SPAN_BUDGET_PER_CHAR ×
characters)`` patterns (an ordinary document tries a few per position); past that :func:`mask_text`
raises :class:`ScanBudgetExceeded` and the mask stage fails the document
(``span_search_budget``)."""

__all__ = ["MaskResult", "ScanBudgetExceeded", "Span", "mask_text", "span_budget"]


def span_budget(chars: int) -> int:
    """The span-search work budget of a document of ``chars`` characters."""
    return max(SPAN_BUDGET_MIN, SPAN_BUDGET_PER_CHAR * chars)


@dataclass(frozen=True, slots=True)
class Span:
    """One masked span: ``type`` at the half-open ``[start, end)`` of the NFC source, replaced by
    ``token``."""

    type: str
    start: int
    end: int
    token: str


@dataclass(slots=True)
class MaskResult:
    """The masked text, the token → surface ``mapping`` (a secret: vault only) and the spans."""

    masked_text: str
    mapping: dict[str, str] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)


def mask_text(
    source: str,
    candidates: Iterable[tuple[str, str]],
    model_rows: Iterable[tuple[str, str]] = (),
    work_budget: int | None = None,
) -> MaskResult:
    """Mask every occurrence of the candidates (and their restricted variants) in NFC ``source``.

    Candidate types are trimmed and upper-cased, values NFC-normalized and trimmed; empty values are
    ignored. The result does not depend on the order of ``candidates``. ``model_rows``: the
    candidates a model named (not the rules or the CPU name finders); their PERSON/REL values are
    also masked where they start a Korean eojeol glued to the next word (``소지섭하는듯``), where
    the whole-word rule alone would leave them. ``work_budget`` (default :func:`span_budget` of the
    text) bounds the span search: past it :class:`ScanBudgetExceeded` is raised and nothing is
    masked (the caller must fail the document).

    >>> r = mask_text("김가상 / 김 가 상 / [PERSON_1]", [("PERSON", "김가상")])
    >>> r.masked_text
    '[PERSON_2] / [PERSON_3] / [PERSON_1]'
    >>> r.mapping
    {'[PERSON_2]': '김가상', '[PERSON_3]': '김 가 상'}
    """
    text = normalize(source)
    alts = canonical_alternatives(candidates)
    for type_ in sorted({a.type for a in alts}):
        check_type_name(type_)
    clusters: list[list] = []  # [start, end, type]
    named = frozenset(
        a.pattern
        for t, v in model_rows
        if normalize_type(t) in WHOLE_WORD_TYPES
        for a in alternatives(normalize_type(t), normalize_value(v))
    )
    budget = span_budget(len(text)) if work_budget is None else work_budget
    for occ in scan(text, alts, whole_words=True, eojeol_start=named, work_budget=budget):
        if clusters and occ.start < clusters[-1][1]:
            clusters[-1][1] = max(clusters[-1][1], occ.end)
        else:
            clusters.append([occ.start, occ.end, occ.type])
    allocator = TokenAllocator(reserved_tokens(text))
    mapping: dict[str, str] = {}
    spans: list[Span] = []
    pieces: list[str] = []
    pos = 0
    for start, end, type_ in clusters:
        surface = text[start:end]
        token, new = allocator.token(type_, surface)
        if new:
            mapping[token] = surface
        spans.append(Span(type_, start, end, token))
        pieces.append(text[pos:start])
        pieces.append(token)
        pos = end
    pieces.append(text[pos:])
    return MaskResult("".join(pieces), mapping, spans)
