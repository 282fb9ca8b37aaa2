"""Person-name finding measured on real sentences: mention recall, false rows, span precision,
docs/s.

Input: the JSONL of ``tools.datasets.names_set`` (``{"id", "lang", "source", "split", "text",
"persons"}``) or ``names-gold-v1`` (no ``split``: it is ``train``/``heldout`` by
``spcl.extract.names.tagger.split_of``). Two predictors:

- ``rules``: what the ``rules`` extractor prints — its PERSON values, masked by
  ``spcl.mask.mask_text`` (every occurrence that stands as a whole word), so this is what masking
  would cover;
- ``finder``: the spans of ``spcl.extract.names.find_person_names`` (the candidate source the mask
  stage reuses).

Metrics per language and per source (numbers only, never text):

- ``recall``: gold mentions whose every character lies inside predicted spans (covered, so masked);
- ``recall_overlap``: gold mentions that some predicted span touches;
- ``false_row_rate``: of the sentences without any person, the share that get at least one PERSON
  span;
- ``span_precision``: predicted spans that touch a gold mention, over all predicted spans;
- ``row_precision``: precision of PERSON rows — distinct predicted values of a sentence (one row
  each) of which some occurrence touches a gold mention, over all such values;
- ``docs_per_s``: sentences per CPU second of the predictor (``time.process_time``: one process,
  models already loaded; on a loaded machine wall time would count the other processes' turns).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypedDict

from spcl.extract.backends.registry import RULES_BACKEND
from spcl.extract.backends.rules_backend import rules_rows
from spcl.extract.names import find_person_names
from spcl.extract.names.tagger import split_of
from spcl.extract.names.tally import MentionMetrics, MentionTally, Spans
from spcl.io.jsonl import read_jsonl_objects
from spcl.mask import mask_text


def value_spans(text: str, values: Iterable[str]) -> Spans:
    """Every occurrence of every value in ``text``, as half-open spans (what masking the values
    covers)."""
    spans: Spans = []
    for value in values:
        if not value:
            continue
        start = text.find(value)
        while start >= 0:
            spans.append((start, start + len(value)))
            start = text.find(value, start + 1)
    return sorted(set(spans))


def rules_predictor(text: str, lang: str | None) -> Spans:
    """Spans the masker replaces in ``text`` for the rules extractor's PERSON rows."""
    rows = [(t, v) for t, v in rules_rows(text, ("PERSON",)) if t == "PERSON"]
    return [(s.start, s.end) for s in mask_text(text, rows).spans] if rows else []


def finder_predictor(text: str, lang: str | None) -> Spans:
    """Spans of ``find_person_names`` (the name finders alone)."""

    return find_person_names(text, lang)


PREDICTORS: dict[str, Callable[[str, str | None], Spans]] = {
    RULES_BACKEND: rules_predictor,
    "finder": finder_predictor,
}


class NamesEval(TypedDict):
    """Metrics of one predictor by language and by language × source (``spcl eval names``)."""

    predictor: str
    by_lang: dict[str, MentionMetrics]
    by_source: dict[str, MentionMetrics]


def read_names_set(
    path: str | Path, split: str | None = None, langs: Iterable[str] | None = None
) -> list[dict]:
    """Records of a names-eval JSONL, optionally only one split (``dev``/``test``) and some
    languages."""
    keep = set(langs) if langs else None
    records = []
    for record in read_jsonl_objects(path):
        if "split" not in record:
            record["split"] = split_of(record["id"])
            record.setdefault("source", "names-gold")
        if (split is None or record["split"] == split) and (keep is None or record["lang"] in keep):
            records.append(record)
    return records


def evaluate_names(records: list[dict], predictor: str = RULES_BACKEND) -> NamesEval:
    """Metrics by language (``by_lang``) and by language × source (``by_source``) for one predictor.

    The first record's prediction is made once before timing, so model loading is not counted in
    docs/s.
    """
    predict = PREDICTORS[predictor]
    if records:
        predict(records[0]["text"], records[0]["lang"])
    by_lang: dict[str, MentionTally] = defaultdict(MentionTally)
    by_source: dict[str, MentionTally] = defaultdict(MentionTally)
    for record in records:
        started = time.process_time()
        pred = predict(record["text"], record["lang"])
        seconds = time.process_time() - started
        gold = [tuple(p) for p in record["persons"]]
        by_lang[record["lang"]].add(gold, pred, seconds, record["text"])
        by_source[f"{record['lang']}/{record['source'].split(':')[0]}"].add(
            gold, pred, seconds, record["text"]
        )
    return {
        "predictor": predictor,
        "by_lang": {k: v.metrics() for k, v in sorted(by_lang.items())},
        "by_source": {k: v.metrics() for k, v in sorted(by_source.items())},
    }


def format_table(metrics: NamesEval) -> str:
    """A plain-text table of ``evaluate_names`` output (one row per language, then per source);
    docs_per_s is per CPU second of one process, so it is docs/s per core."""
    cols = (
        "sentences",
        "mentions",
        "recall",
        "recall_overlap",
        "false_row_rate",
        "row_precision",
        "span_precision",
        "docs_per_s",
    )
    lines = [
        f"predictor={metrics['predictor']}",
        f"{'group':<22}" + "".join(f"{c:>16}" for c in cols),
    ]
    for section in (metrics["by_lang"], metrics["by_source"]):
        for group, row in section.items():
            cells = dict(row)
            lines.append(
                f"{group:<22}"
                + "".join(f"{'-' if cells[c] is None else cells[c]!s:>16}" for c in cols)
            )
    return "\n".join(lines)
