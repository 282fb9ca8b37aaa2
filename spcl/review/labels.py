"""The reviewers' label set and the parsing of their label / category cells."""

from __future__ import annotations

from spcl.errors import RunFailed
from spcl.labels import CATEGORIES, LABELS  # defined once there; re-exported for the review modules

REVIEWER_COLUMNS: tuple[str, ...] = ("label", "categories", "pii", "note")
"""Columns a reviewer fills in every export format (``pii``: are the highlighted rule hits real
personal data? ``yes`` / ``no`` / empty)."""

SCREEN_POSITIVE: tuple[str, ...] = ("SCPI", "RELATED")
"""Labels the screen is trained to flag (``spcl train --positive`` default)."""

_YES = frozenset({"yes", "y", "true", "1"})
_NO = frozenset({"no", "n", "false", "0"})


class ReviewError(RunFailed, ValueError):
    """A review file is unusable; the message names ids, columns and files, never text."""


def parse_label(cell: str | None, *, row_id: str, column: str = "label") -> str | None:
    """A normalised label, ``None`` for an empty cell; raises ``ReviewError`` naming the id
    otherwise.

    >>> parse_label(" scpi ", row_id="d1")
    'SCPI'
    """
    value = (cell or "").strip().upper()
    if not value:
        return None
    if value not in LABELS:
        raise ReviewError(f"id {row_id!r}: column {column!r} is not one of {', '.join(LABELS)}")
    return value


def parse_categories(
    cell: str | None, *, row_id: str, column: str = "categories"
) -> tuple[str, ...]:
    """Sorted, de-duplicated categories from ``"MEDICAL, crime"`` / ``"MEDICAL;CRIME"`` / ``"-"``.

    >>> parse_categories("crime; Medical", row_id="d1")
    ('CRIME', 'MEDICAL')
    """
    raw = (cell or "").replace(";", ",").replace("|", ",")
    found = set()
    for part in raw.split(","):
        value = part.strip().upper()
        if not value or value == "-":
            continue
        if value not in CATEGORIES:
            allowed = ", ".join(CATEGORIES)
            raise ReviewError(f"id {row_id!r}: column {column!r} has a category outside {allowed}")
        found.add(value)
    return tuple(sorted(found))


def parse_pii(cell: str | None, *, row_id: str, column: str = "pii") -> bool | None:
    """The reviewer's answer to "are the highlighted rule hits real personal data?": ``True`` /
    ``False``, ``None`` when empty; anything else raises ``ReviewError`` naming the id and column.

    >>> parse_pii("Yes", row_id="d1"), parse_pii("", row_id="d1")
    (True, None)
    """
    value = (cell or "").strip().lower()
    if not value or value == "-":
        return None
    if value in _YES:
        return True
    if value in _NO:
        return False
    raise ReviewError(f"id {row_id!r}: column {column!r} must be yes, no or empty")
