"""The teacher's output contract: one line ``LABEL<TAB>CODES<TAB>CONFIDENCE``, and its mapping to
screen categories.

``parse_vote(raw)`` removes complete ``<think>…</think>`` blocks and surrounding whitespace, then
accepts exactly one line of three tab-separated fields:

- ``LABEL``: ``SCPI``, ``RELATED`` or ``NONE`` (upper case, as printed in the prompt);
- ``CODES``: ``-`` for NONE; for SCPI and RELATED one or more distinct codes of
  :data:`spcl.annotate.prompt.CODES`, comma-separated without spaces;
- ``CONFIDENCE``: a plain decimal in ``[0, 1]`` (``0``, ``1``, ``0.85``, ``1.0``; no exponent, sign
  or NaN).

Anything else raises :class:`VoteParseError` whose ``kind`` names what was wrong (``empty``,
``lines``, ``fields``, ``label``, ``codes``, ``confidence``, ``inconsistent``) — never the model's
text, which may quote the document. :func:`categories_of` maps codes onto the screen's own
categories (``spcl.screen.CATEGORIES``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from spcl.annotate.prompt import CODES
from spcl.errors import RunFailed
from spcl.extract.contract import THINK_RE
from spcl.review.labels import LABELS
from spcl.screen import CATEGORIES

PARSE_FAILURE_KINDS: tuple[str, ...] = (
    "empty",
    "lines",
    "fields",
    "label",
    "codes",
    "confidence",
    "inconsistent",
)

CODE_TO_CATEGORY: dict[str, str] = {
    "MEDICAL": "MEDICAL",
    "HEALTH_CHECK": "MEDICAL",
    "MEDICAL_GUIDANCE": "MEDICAL",
    "CRIMINAL_RECORD": "CRIME",
    "CRIME_VICTIM": "CRIME",
    "CRIMINAL_PROCEDURE": "CRIME",
    "JUVENILE_PROCEDURE": "CRIME",
    "DISABILITY": "DISABILITY",
    "RACE": "OTHER",
    "CREED": "OTHER",
    "SOCIAL_STATUS": "OTHER",
    "LGBT": "OTHER",
}
"""Annotation code → screen category (every code maps; every target is one of
``spcl.screen.CATEGORIES``)."""

if set(CODE_TO_CATEGORY) != set(CODES) or not set(CODE_TO_CATEGORY.values()) <= set(CATEGORIES):
    raise ImportError("CODE_TO_CATEGORY must map every annotation code onto spcl.screen.CATEGORIES")

_CONFIDENCE = re.compile(r"(?:0|1)(?:\.[0-9]+)?")
_CODE_SET = frozenset(CODES)


class VoteParseError(RunFailed, ValueError):
    """A teacher's output broke the contract; ``kind`` is one of :data:`PARSE_FAILURE_KINDS`."""

    def __init__(self, kind: str):
        self.kind = kind
        super().__init__(f"unparseable teacher output ({kind})")


@dataclass(frozen=True, slots=True)
class Vote:
    """One teacher's parsed answer for one document."""

    label: str
    codes: tuple[str, ...]
    confidence: float

    @property
    def categories(self) -> tuple[str, ...]:
        """The screen categories of ``codes``, in ``spcl.screen.CATEGORIES`` order."""
        return categories_of(self.codes)

    def line(self) -> str:
        """The vote in the contract's one-line form; :func:`parse_vote` reads it back (confidence
        to 6 places)."""
        confidence = f"{self.confidence:.6f}".rstrip("0").rstrip(".")
        return f"{self.label}\t{','.join(self.codes) or '-'}\t{confidence}"


def categories_of(codes: Iterable[str]) -> tuple[str, ...]:
    """Screen categories of annotation ``codes`` (unknown codes raise ``KeyError``), in
    ``CATEGORIES`` order.

    >>> categories_of(["CRIME_VICTIM", "HEALTH_CHECK", "MEDICAL"])
    ('MEDICAL', 'CRIME')
    """
    found = {CODE_TO_CATEGORY[c] for c in codes}
    return tuple(c for c in CATEGORIES if c in found)


def strip_think(raw: str) -> str:
    """``raw`` without complete ``<think>…</think>`` blocks (an unclosed one stays and fails the
    parse)."""
    return THINK_RE.sub("", raw)


def parse_vote(raw: str) -> Vote:
    """The one ``LABEL<TAB>CODES<TAB>CONFIDENCE`` line of a teacher's output, or
    :class:`VoteParseError`.

    >>> parse_vote("<think>hmm</think>\\nSCPI\\tMEDICAL,CRIME_VICTIM\\t0.9\\n")
    Vote(label='SCPI', codes=('MEDICAL', 'CRIME_VICTIM'), confidence=0.9)
    """
    body = strip_think(raw).strip()
    if not body:
        raise VoteParseError("empty")
    if "\n" in body or "\r" in body:
        raise VoteParseError("lines")
    fields = body.split("\t")
    if len(fields) != 3:
        raise VoteParseError("fields")
    label, codes_field, conf_field = fields
    if label not in LABELS:
        raise VoteParseError("label")
    if codes_field == "-":
        codes: tuple[str, ...] = ()
    else:
        codes = tuple(codes_field.split(","))
        if any(c not in _CODE_SET for c in codes) or len(set(codes)) != len(codes):
            raise VoteParseError("codes")
    if not _CONFIDENCE.fullmatch(conf_field):
        raise VoteParseError("confidence")
    confidence = float(conf_field)
    if confidence > 1.0:
        raise VoteParseError("confidence")
    if (label == "NONE") != (not codes):
        raise VoteParseError("inconsistent")
    return Vote(label, codes, confidence)
