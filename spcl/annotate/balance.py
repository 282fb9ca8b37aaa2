"""Class balance by hashed id: down-sample NONE so that SCPI reaches a target share of the labelled
set.

With ``s`` SCPI, ``r`` RELATED and ``n`` NONE texts and a target share ``p``, at most ``floor(s / p)
- s - r`` NONE texts are kept (never more than ``n``, never fewer than 0), so the SCPI share is at
least ``p`` when it can be reached at all. The NONE texts kept are those with the smallest
``sha256(f"{seed}:{id}")`` (``spcl.review.sample.hash_key``): a pure function of the ids and the
seed, independent of input order, files or engine. SCPI and RELATED texts are never dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from spcl.review.sample import hash_key


@dataclass(frozen=True, slots=True)
class Balance:
    """Which rows the balance drops (indices into the input), and the shares before and after."""

    dropped: frozenset[int]
    none_kept: int
    share_before: float | None
    share_after: float | None

    def to_json(self) -> dict[str, object]:
        """Counts and shares for ``report.json``."""
        return {
            "balanced_out": len(self.dropped),
            "none_kept": self.none_kept,
            "positive_share_before": self.share_before,
            "positive_share_after": self.share_after,
        }


def _share(pos: int, total: int) -> float | None:
    return round(pos / total, 6) if total else None


def balance(
    rows: Sequence[tuple[str, str]], positive_share: float | None, seed: int, positive: str = "SCPI"
) -> Balance:
    """Down-sample the NONE rows of ``rows`` (``(id, label)`` pairs) to reach ``positive_share`` of
    ``positive``.

    ``positive_share`` None keeps everything. Raises ``ValueError`` outside ``(0, 1]``.

    >>> b = balance([("a", "SCPI"), ("b", "NONE"), ("c", "NONE"), ("d", "NONE")], 0.5, seed=0)
    >>> b.none_kept, len(b.dropped)
    (1, 2)
    """
    labels = [label for _, label in rows]
    pos = labels.count(positive)
    nones = [i for i, label in enumerate(labels) if label == "NONE"]
    before = _share(pos, len(rows))
    if positive_share is None:
        return Balance(frozenset(), len(nones), before, before)
    if not 0.0 < positive_share <= 1.0:
        raise ValueError("--positive-share must lie in (0, 1]")
    other = len(rows) - pos - len(nones)
    allowed = math.floor(pos / positive_share + 1e-9) - pos - other
    keep = max(0, min(len(nones), allowed))
    ranked = sorted(nones, key=lambda i: (hash_key(seed, rows[i][0]), rows[i][0], i))
    dropped = frozenset(ranked[keep:])
    return Balance(dropped, keep, before, _share(pos, len(rows) - len(dropped)))
