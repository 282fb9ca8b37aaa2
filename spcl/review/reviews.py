"""Reading reviewers' files back: the CSV/JSONL written by ``export`` or a Label Studio JSON
export."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spcl.io.jsonl import load_jsonl
from spcl.review.labels import ReviewError, parse_categories, parse_label

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def escape_cell(value: str) -> str:
    """Guard a CSV cell against spreadsheet formula injection by a leading ``'`` (undone by
    ``unescape_cell``). Only cells a spreadsheet would run as a formula are guarded: a plain number
    such as ``-0.9071`` stays a number.

    >>> escape_cell("=SUM(A1)"), escape_cell("plain"), escape_cell("-0.9071")
    ("'=SUM(A1)", 'plain', '-0.9071')
    """
    if not value.startswith(_FORMULA_START) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


def unescape_cell(value: str) -> str:
    """Inverse of ``escape_cell``."""
    return value[1:] if value.startswith("'") and value[1:].startswith(_FORMULA_START) else value


@dataclass(frozen=True)
class Review:
    """One reviewer's verdict on one document; ``label`` is ``None`` when left empty. ``key`` is
    what ``read_reviews`` keyed it by: the ``id``, or the ``row_key`` in a file where ids repeat."""

    id: str
    label: str | None
    categories: tuple[str, ...] = ()
    note: str = ""
    row: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    key: str = field(default="", compare=False)


def _from_labelstudio(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for task in tasks:
        data = task.get("data", {})
        row = {
            **data,
            "id": data.get("doc_id", task.get("id")),
            "label": "",
            "categories": "",
            "note": "",
        }
        annotations = [a for a in task.get("annotations", []) if not a.get("was_cancelled")]
        if annotations:
            for item in annotations[-1].get("result", []):
                value = item.get("value", {})
                if item.get("from_name") == "label":
                    row["label"] = ",".join(value.get("choices", []))
                elif item.get("from_name") == "categories":
                    row["categories"] = ",".join(value.get("choices", []))
                elif item.get("from_name") == "note":
                    row["note"] = " ".join(value.get("text", []))
        rows.append(row)
    return rows


def _rows(path: Path) -> list[dict[str, Any]]:
    name = path.name.lower()
    if name.endswith(".csv"):
        with open(path, encoding="utf-8-sig", newline="") as fh:
            header = fh.readline()
            fh.seek(0)
            # spreadsheets in some locales save with ';' or tabs
            delimiter = max([",", ";", "\t"], key=lambda d: (header.count(d), d == ","))
            reader = csv.DictReader(fh, delimiter=delimiter)
            missing = [c for c in ("id", "label") if c not in (reader.fieldnames or [])]
            if missing:
                raise ReviewError(f"{path.name}: missing column(s) {', '.join(missing)}")
            return [
                {k: unescape_cell(v) if isinstance(v, str) else v for k, v in row.items()}
                for row in reader
            ]
    if name.endswith(".jsonl"):
        return load_jsonl(path)
    if name.endswith(".json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ReviewError(f"{path.name}: expected a list of Label Studio tasks")
        return _from_labelstudio(data)
    raise ReviewError(f"{path.name}: review files must be .csv, .jsonl or Label Studio .json")


def read_reviews(path: str | Path) -> dict[str, Review]:
    """``{key: Review}`` from one reviewer's file, keyed by ``id``; a file in which an id repeats
    (records that share a document id, told apart by the export's ``row_key`` column) is keyed by
    ``row_key``. A repeated key, a repeated id without row keys, or a bad cell raises
    ``ReviewError``."""
    p = Path(path)
    rows = _rows(p)
    ids = [str(row.get("id") or "").strip() for row in rows]
    by_row_key = len(set(ids)) < len(ids) and all(
        str(row.get("row_key") or "").strip() for row in rows
    )
    out: dict[str, Review] = {}
    for row, doc_id in zip(rows, ids, strict=True):
        if not doc_id:
            raise ReviewError(f"{p.name}: a row has an empty 'id'")
        key = str(row["row_key"]).strip() if by_row_key else doc_id
        if key in out:
            raise ReviewError(
                f"{p.name}: {'row_key' if by_row_key else 'id'} {key!r} appears twice"
            )
        cats = row.get("categories")
        if isinstance(cats, list):
            cats = ",".join(cats)
        label = row.get("label")
        out[key] = Review(
            id=doc_id,
            key=key,
            label=parse_label(label if isinstance(label, str) else None, row_id=doc_id),
            categories=parse_categories(cats, row_id=doc_id),
            note=str(row.get("note") or ""),
            row=dict(row),
        )
    return out
