"""The agreement filter: keep a text only when every teacher parsed, agreed and was confident
enough.

``decide(votes, min_confidence)`` checks, in this order, and returns the first reason that applies:

1. each teacher in turn: ``backend_error:<teacher>`` (no output: timeout, HTTP error, truncated …)
   or ``unparseable:<teacher>`` (the output broke the contract);
2. ``label_disagreement``: not every teacher gave the same label;
3. ``category_disagreement``: for SCPI / RELATED, the teachers' codes map to different screen
   categories (codes may differ inside a category: HEALTH_CHECK and MEDICAL both mean MEDICAL);
4. ``low_confidence``: some teacher's confidence is below ``min_confidence``.

A text that passes is kept with the common label and categories. ``verify`` then lets an optional
verifier re-label a kept text: a verifier that fails gives ``backend_error:<verifier>`` /
``unparseable:<verifier>``, one that disagrees on the label or the categories gives
``verifier_disagreement`` (fail closed: the text goes to review rather than into training data).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from spcl.annotate.contract import Vote, VoteParseError, parse_vote
from spcl.annotate.prompt import CODES

REJECTION_REASONS: tuple[str, ...] = (
    "backend_error:<teacher>",
    "unparseable:<teacher>",
    "label_disagreement",
    "category_disagreement",
    "low_confidence",
    "verifier_disagreement",
)


class VoteJson(TypedDict):
    """A :class:`TeacherVote` in the output rows: label, codes, categories and confidence (``None``
    / empty without a parsed vote), the backend error and the parse failure code."""

    teacher: str
    label: str | None
    codes: list[str]
    categories: list[str]
    confidence: float | None
    error: str | None
    parse_failure: str | None


@dataclass(frozen=True, slots=True)
class TeacherVote:
    """What one teacher (or the verifier) answered for one document: a vote, or why there is
    none."""

    teacher: str
    vote: Vote | None = None
    error: str | None = None  # backend reason code (no output at all)
    parse_failure: str | None = None  # VoteParseError.kind (an output that broke the contract)

    @classmethod
    def from_output(cls, teacher: str, raw: str | None, error: str | None) -> TeacherVote:
        """Parse a backend result: ``error`` set → no output; else ``raw`` through
        :func:`parse_vote`."""
        if error is not None or raw is None:
            return cls(teacher, error=error or "no_output")
        try:
            return cls(teacher, vote=parse_vote(raw))
        except VoteParseError as err:
            return cls(teacher, parse_failure=err.kind)

    @property
    def failure(self) -> str | None:
        """``backend_error:<teacher>`` / ``unparseable:<teacher>``, or None for a parsed vote."""
        if self.error is not None:
            return f"backend_error:{self.teacher}"
        if self.vote is None:
            return f"unparseable:{self.teacher}"
        return None

    def to_json(self) -> VoteJson:
        """A plain dict for the output rows (labels, codes and reason codes only; never model
        text)."""
        v = self.vote
        return {
            "teacher": self.teacher,
            "label": v.label if v else None,
            "codes": list(v.codes) if v else [],
            "categories": list(v.categories) if v else [],
            "confidence": v.confidence if v else None,
            "error": self.error,
            "parse_failure": self.parse_failure,
        }

    @classmethod
    def from_json(cls, data: VoteJson) -> TeacherVote:
        """Inverse of :meth:`to_json`."""
        vote = None
        label, confidence = data.get("label"), data.get("confidence")
        if label is not None:
            if confidence is None:  # a malformed row: the TypeError float(None) raised
                raise TypeError("a teacher vote with a label needs a confidence")
            vote = Vote(label, tuple(data.get("codes") or ()), float(confidence))
        return cls(
            data["teacher"],
            vote=vote,
            error=data.get("error"),
            parse_failure=data.get("parse_failure"),
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """The filter's verdict on one text: kept with a label and categories, or a rejection reason."""

    reason: str | None
    label: str | None = None
    categories: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()  # every teacher's codes, in CODES order
    confidence: float | None = None  # the lowest teacher confidence

    @property
    def kept(self) -> bool:
        """True when the text goes to the labelled set."""
        return self.reason is None


def decide(votes: Sequence[TeacherVote], min_confidence: float) -> Decision:
    """Apply the agreement filter to one text's teacher votes (two or more, in teacher order)."""
    if len(votes) < 2:
        raise ValueError("the agreement filter needs at least two teachers")
    for tv in votes:
        if (failure := tv.failure) is not None:
            return Decision(failure)
    parsed = [tv.vote for tv in votes if tv.vote is not None]
    labels = {v.label for v in parsed}
    if len(labels) > 1:
        return Decision("label_disagreement")
    cats = {v.categories for v in parsed}
    if len(cats) > 1:
        return Decision("category_disagreement")
    if any(v.confidence < min_confidence for v in parsed):
        return Decision("low_confidence")
    used = {c for v in parsed for c in v.codes}
    return Decision(
        None,
        label=parsed[0].label,
        categories=parsed[0].categories,
        codes=tuple(c for c in CODES if c in used),
        confidence=min(v.confidence for v in parsed),
    )


def verify(decision: Decision, verifier: TeacherVote) -> Decision:
    """The decision after the verifier's vote: a kept text stays kept only if the verifier
    agrees."""
    if not decision.kept:
        return decision
    if (failure := verifier.failure) is not None:
        return Decision(failure)
    assert verifier.vote is not None
    if verifier.vote.label != decision.label or verifier.vote.categories != decision.categories:
        return Decision("verifier_disagreement")
    return decision


def reason_family(reason: str) -> str:
    """The reason without its teacher name (``unparseable:gemma`` → ``unparseable``)."""
    return reason.split(":", 1)[0]
