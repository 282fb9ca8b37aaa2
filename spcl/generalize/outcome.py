"""What goes into and comes out of the generalizer for one document, and the two checks on its
output.

:class:`DocInput` is a document with its entities and rule hits; :class:`Decision` how one entity is
replaced; :class:`DocResult` the generalized text, its spans and vault mapping, or a failure reason.
:func:`restore` gives the source back from an output and its mapping; :func:`release_check` says
whether an output may be released (the loop itself is ``spcl.generalize.engine``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from spcl.detect import find_pii
from spcl.generalize.spans import Entity


@dataclass(slots=True)
class DocInput:
    """One document: NFC ``text``, its entities and the rule hits ``(type, start, end)`` it must
    not leak."""

    id: str
    text: str
    lang: str
    entities: list[Entity]
    hits: list[tuple[str, int, int]] = field(default_factory=list)


@dataclass(slots=True)
class Decision:
    """How one entity is replaced: ``kind`` generalized|label, ``rank`` of the chosen candidate
    (None: label).

    ``source``: ladder, llm, rules (default rung, no attack), label_type (always a label) or
    fallback (every candidate was guessed, or there was none). ``candidates``/``guesses`` stay in
    memory (benchmark).
    """

    type: str
    replacement: str = ""
    kind: str = "label"
    rank: int | None = None
    source: str = "label_type"
    candidates: tuple[str, ...] = ()
    guesses: list[list[str]] = field(default_factory=list)
    calls: int = 0

    def __repr__(self) -> str:  # never print values
        return (
            f"Decision(type={self.type!r}, kind={self.kind!r}, rank={self.rank},"
            f" source={self.source!r})"
        )


class GenSpan(TypedDict):
    """One replaced mention of a generalized document (an entry of the output's ``spans``
    column): its source offsets, its offsets in the output, the replacement and how it was
    chosen."""

    type: str
    start: int
    end: int
    out_start: int
    out_end: int
    replacement: str
    kind: str
    rank: int | None


@dataclass(slots=True)
class DocResult:
    """A document's outcome: the generalized text, spans and vault mapping — or a failure
    ``reason``."""

    id: str
    text: str | None = None
    spans: list[GenSpan] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    decisions: list[Decision] = field(default_factory=list)
    llm_calls: int = 0
    cache_hits: int = 0
    guesses: int = 0
    tokens: int = 0
    seconds: float = 0.0
    prompt_tokens: int = 0
    counted: bool = False  # a chat reply reported token counts

    def __repr__(self) -> str:
        return (
            f"DocResult(id={self.id!r}, ok={self.reason is None}, reason={self.reason!r},"
            f" spans={len(self.spans)})"
        )


def restore(text: str, spans: list[GenSpan], mapping: dict[str, str]) -> str:
    """The source back from a generalized ``text``: each span's ``[out_start, out_end)`` →
    ``mapping[str(i)]``."""
    out, pos = [], 0
    for i, s in enumerate(spans):
        out += [text[pos : s["out_start"]], mapping[str(i)]]
        pos = s["out_end"]
    out.append(text[pos:])
    return "".join(out)


def release_check(
    source: str, output: str, entities: list[Entity], hits: list[tuple[str, int, int]]
) -> str | None:
    """None when ``output`` may be released, else the reason (types only, never values).

    Every hit must lie inside a replaced mention; no entity or hit value may occur in ``output``;
    the rule detectors must find nothing in ``output``.
    """
    covered = sorted(m for e in entities for m in e.mentions)
    for type_, start, end in hits:
        if not any(s <= start and end <= e for s, e in covered):
            return f"release:hit_not_replaced:{type_}"
    for type_, value in [(e.type, e.value) for e in entities] + [
        (t, source[s:e]) for t, s, e in hits
    ]:
        if value.strip() and value in output:
            return f"release:value_in_output:{type_}"
    found = [h for h in find_pii(output) if h.validated is not False]
    if found:
        return f"release:detected_in_output:{found[0].type}"
    return None
