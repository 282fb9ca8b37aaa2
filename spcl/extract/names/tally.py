"""Person-mention scoring: predicted spans counted against gold spans (the evaluation's and the
trainer's tally).

Shared by ``spcl.evaluate.names`` and the name tagger's threshold search
(``spcl.extract.names.train``), so the trainer never imports the evaluation package.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

Spans = list[tuple[int, int]]


class MentionMetrics(TypedDict):
    """The numbers of one :class:`MentionTally` (ratios are ``None`` on 0/0); the trainer adds
    ``f1``."""

    sentences: int
    mentions: int
    recall: float | None
    recall_overlap: float | None
    sentences_without_person: int
    false_row_rate: float | None
    span_precision: float | None
    row_precision: float | None
    docs_per_s: float | None
    f1: NotRequired[float]


def _covered(gold: tuple[int, int], spans: Spans) -> bool:
    chars: set[int] = set()
    for s, e in spans:
        if s < gold[1] and gold[0] < e:
            chars.update(range(max(s, gold[0]), min(e, gold[1])))
    return len(chars) == gold[1] - gold[0]


def _touches(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class MentionTally:
    """Counts of one predictor against gold person mentions; :meth:`metrics` gives the ratios
    (numbers only)."""

    def __init__(self) -> None:
        self.sentences = self.mentions = self.covered = self.overlapped = 0
        self.empty = self.empty_with_rows = self.pred = self.pred_true = self.rows = (
            self.rows_true
        ) = 0
        self.seconds = 0.0

    def add(self, gold: Spans, pred: Spans, seconds: float, text: str | None = None) -> None:
        """Count one sentence: its gold and predicted spans, the predictor's seconds (``text``
        groups rows)."""
        self.sentences += 1
        self.seconds += seconds
        self.mentions += len(gold)
        self.covered += sum(_covered(g, pred) for g in gold)
        self.overlapped += sum(any(_touches(g, p) for p in pred) for g in gold)
        if not gold:
            self.empty += 1
            self.empty_with_rows += bool(pred)
        self.pred += len(pred)
        self.pred_true += sum(any(_touches(p, g) for g in gold) for p in pred)
        rows: dict[str, bool] = {}
        for p in pred:
            key = text[p[0] : p[1]] if text is not None else str(p)
            rows[key] = rows.get(key, False) or any(_touches(p, g) for g in gold)
        self.rows += len(rows)
        self.rows_true += sum(rows.values())

    def metrics(self) -> MentionMetrics:
        """Recall (covered, overlapping), false-row rate, span and row precision, docs/s
        (``None`` on 0/0)."""

        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 4) if b else None

        return {
            "sentences": self.sentences,
            "mentions": self.mentions,
            "recall": ratio(self.covered, self.mentions),
            "recall_overlap": ratio(self.overlapped, self.mentions),
            "sentences_without_person": self.empty,
            "false_row_rate": ratio(self.empty_with_rows, self.empty),
            "span_precision": ratio(self.pred_true, self.pred),
            "row_precision": ratio(self.rows_true, self.rows),
            "docs_per_s": round(self.sentences / self.seconds, 1) if self.seconds else None,
        }
