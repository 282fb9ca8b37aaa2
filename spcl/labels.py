"""The label set and the special-care categories, defined once for the screen, the schema, review
and annotation."""

from __future__ import annotations

LABELS: tuple[str, ...] = ("SCPI", "RELATED", "NONE")
"""Document labels, most sensitive first (as in ``scpi-real-v1``): about an identifiable person, the
topic without one, neither."""

CATEGORIES: tuple[str, ...] = ("MEDICAL", "CRIME", "DISABILITY", "OTHER")
"""Special-care categories: the screen's category scores, the output's ``scores`` fields
(lower-cased) and what reviewers and teachers may tick."""
