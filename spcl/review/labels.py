"""The reviewers' label set and the parsing of their label / category cells."""

from __future__ import annotations

LABELS: tuple[str, ...] = ("SCPI", "RELATED", "NONE")
"""Document labels, most sensitive first (as in ``scpi-real-v1``)."""

CATEGORIES: tuple[str, ...] = ("MEDICAL", "CRIME", "DISABILITY", "OTHER")
"""Special-care categories a reviewer may tick (any subset, for SCPI and RELATED)."""

REVIEWER_COLUMNS: tuple[str, ...] = ("label", "categories", "note")
"""Columns a reviewer fills in every export format."""


class ReviewError(ValueError):
    """A review file is unusable; the message names ids, columns and files, never text."""


def parse_label(cell: str | None, *, row_id: str, column: str = "label") -> str | None:
    """A normalised label, ``None`` for an empty cell; raises ``ReviewError`` naming the id otherwise.

    >>> parse_label(" scpi ", row_id="d1")
    'SCPI'
    """
    value = (cell or "").strip().upper()
    if not value:
        return None
    if value not in LABELS:
        raise ReviewError(f"id {row_id!r}: column {column!r} is not one of {', '.join(LABELS)}")
    return value


def parse_categories(cell: str | None, *, row_id: str, column: str = "categories") -> tuple[str, ...]:
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
