"""What both person-name CRF trainers share: the gold records and their dev fifth, person-free
passages, a finder's mention metrics on gold records, and the model card's version.

The ja/ko trainer is ``spcl.extract.names.train``, the English one
``spcl.extract.names.train_english``; both keep the held-out split
(:func:`spcl.extract.names.tagger.split_of`) out of training and pick a threshold on the dev fifth
(:func:`dev_of`) of the rest.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spcl.extract.names.tally import MentionMetrics, MentionTally
from spcl.io.jsonl import load_jsonl, read_jsonl_objects
from spcl.text import normalize

VERSION = "names-crf-v2"
"""The version of the name CRFs' model card (``model_card.json``)."""


def read_gold(path: Path) -> list[dict[str, Any]]:
    """Records of a names-gold JSONL (text NFC-checked: spans index the NFC text)."""
    records = []
    for r in read_jsonl_objects(path):
        if normalize(r["text"]) == r["text"]:
            records.append(r)
    return records


def mention_metrics(
    records: list[dict[str, Any]], predict: Callable[..., list[tuple[int, int]]]
) -> MentionMetrics:
    """Mention metrics of ``predict(text)`` over ``records`` (``...``: its lambdas bind loop
    values as defaults)."""

    tally = MentionTally()
    for r in records:
        # CPU seconds: docs/s per core, whatever else the machine runs
        started = time.process_time()
        pred = predict(r["text"])
        tally.add([tuple(p) for p in r["persons"]], pred, time.process_time() - started)
    m = tally.metrics()
    p, rc = m["span_precision"] or 0.0, m["recall"] or 0.0
    m["f1"] = round(2 * p * rc / (p + rc), 4) if p + rc else 0.0
    return m


def dev_of(record_id: str) -> bool:
    """One training id in five (a second byte of the SHA-256) tunes the threshold."""
    return hashlib.sha256(record_id.encode()).digest()[1] % 5 == 0


def person_free(path: Path | None, lang: str, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` person-free passages of ``lang`` (``data/weak-none``: LibreOffice help),
    chosen by hashed id, as training records without persons: technical text, which the gold
    sentences lack."""
    if path is None or limit <= 0 or not path.is_file():
        return []
    rows = load_jsonl(path)
    rows = sorted(
        (r for r in rows if r.get("lang") == lang),
        key=lambda r: hashlib.sha256(r["id"].encode()).digest(),
    )
    return [
        {"id": r["id"], "lang": lang, "text": normalize(r["text"]), "persons": []}
        for r in rows[:limit]
    ]
