"""Writing a review sample for people: CSV, JSONL, Label Studio tasks + config, one labelling page.

Every file is created readable by the owner only (0600, folder 0700) because a sample holds raw
text. With ``redact=True`` each rule-hit span is replaced by ``[TYPE]`` before anything is written.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from spcl.config import PII_TYPES
from spcl.io.jsonl import jsonl_text
from spcl.manifest import MANIFEST_NAME, manifest_ref, record_counts, write_manifest
from spcl.review.labels import CATEGORIES, LABELS, REVIEWER_COLUMNS
from spcl.review.page import labelling_page
from spcl.review.redact import check_hits, redact
from spcl.review.reviews import escape_cell
from spcl.review.sample import SamplePlan
from spcl.screen.heads import DEFAULT_OUTPUTS

FORMATS: tuple[str, ...] = ("csv", "jsonl", "labelstudio", "html")
FILE_NAMES: dict[str, tuple[str, ...]] = {
    "csv": ("sample.csv",),
    "jsonl": ("sample.jsonl",),
    "labelstudio": ("labelstudio-tasks.json", "labelstudio-config.xml"),
    "html": ("sample.html",),
}
CSV_COLUMNS: tuple[str, ...] = (
    "id",
    "row_key",
    "decision",
    "lang",
    "top_category",
    "stratum",
    "weight",
    *DEFAULT_OUTPUTS.scores,  # one column per screen head of the shipped kind, e.g. lgbm, svc
    "reasons",
    "hit_types",
    "text",
    "label",
    "categories",
    "pii",
    "note",
)
"""Columns of ``sample.csv``; reviewers fill ``label``, ``categories``, ``pii`` and ``note``."""


def private_dir(path: str | Path) -> Path:
    """Create ``path`` (and parents) and make it owner-only (0700)."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True)
    os.chmod(p, 0o700)
    return p


def write_private(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` created with mode 0600 (re-applied if the file existed)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb", closefd=False) as fh:
            fh.write(raw)
    finally:
        os.close(fd)
    return Path(path)


def review_records(table: pa.Table, *, redacted: bool) -> list[dict[str, Any]]:
    """One plain dict per sampled row: metadata, scores, hits (offsets into the exported text),
    text.

    Raw hit values never appear except inside ``text`` when ``redacted`` is false.
    """
    records = []
    for row in table.to_pylist():
        doc_id = row["id"]
        text = row["text"] or ""
        hits = [
            {k: h[k] for k in ("type", "start", "end", "validated", "detector")}
            for h in row["hits"] or []
        ]
        if redacted:
            text, hits = redact(doc_id, text, hits)
        else:
            check_hits(doc_id, text, hits)
        hits.sort(key=lambda h: (h["start"], h["end"]))
        scores = row["scores"]
        records.append(
            {
                "id": doc_id,
                "row_key": row.get("row_key") or doc_id,
                "decision": row["decision"],
                "lang": row["lang"],
                "top_category": row["top_category"],
                "stratum": row["stratum"],
                "weight": row["weight"],
                "scores": scores,
                "reasons": list(row["reasons"] or []),
                "hits": hits,
                "text": text,
                "label": "",
                "categories": [],
                "pii": "",
                "note": "",
            }
        )
    return records


def _score(scores: Mapping[str, Any] | None, key: str) -> str:
    value = (scores or {}).get(key)
    return "" if value is None else f"{value:.4f}"


def csv_cells(r: Mapping[str, Any]) -> list[str]:
    """The ``CSV_COLUMNS`` cells of one record, each guarded by ``escape_cell`` (reviewer cells
    empty)."""
    cells = [
        r["id"],
        r["row_key"],
        r["decision"],
        r["lang"] or "",
        r["top_category"] or "",
        r["stratum"],
        f"{r['weight']:.6g}",
        *(_score(r["scores"], head) for head in DEFAULT_OUTPUTS.scores),
        ";".join(r["reasons"]),
        ";".join(sorted({h["type"] for h in r["hits"]})),
        r["text"],
    ]
    return [escape_cell(c) for c in cells] + [""] * len(REVIEWER_COLUMNS)


def to_csv(records: Iterable[Mapping[str, Any]]) -> str:
    """CSV text (write it UTF-8 *with BOM* so spreadsheets read Korean/Japanese correctly).

    Every cell is guarded by ``escape_cell``; ``spcl.review.reviews.read_reviews`` undoes it.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(csv_cells(r) for r in records)
    return buf.getvalue()


def to_jsonl(records: Iterable[Mapping[str, Any]]) -> str:
    """One JSON object a line, ``label``/``categories``/``note`` left empty for the reviewer."""
    return jsonl_text(records)


def labelstudio_config(pii_types: Sequence[str] = PII_TYPES) -> str:
    """Label Studio labelling config: document label, categories, a note, rule spans as
    pre-labels."""
    pii = "\n".join(f'    <Label value="{t}"/>' for t in pii_types)
    labels = "\n".join(f'    <Choice value="{v}"/>' for v in LABELS)
    cats = "\n".join(f'    <Choice value="{v}"/>' for v in CATEGORIES)
    return f"""<View>
  <Header value="$doc_id ($lang, $decision, $top_category)"/>
  <Labels name="pii" toName="text">
{pii}
  </Labels>
  <Text name="text" value="$text"/>
  <Header value="Label"/>
  <Choices name="label" toName="text" choice="single" required="true">
{labels}
  </Choices>
  <Header value="Categories"/>
  <Choices name="categories" toName="text" choice="multiple">
{cats}
  </Choices>
  <TextArea name="note" toName="text" maxSubmissions="1"/>
</View>
"""


def to_labelstudio(records: Iterable[Mapping[str, Any]]) -> str:
    """Label Studio task JSON: one task per document, rule hits as a ``rules`` prediction (spans
    only)."""
    tasks = []
    for r in records:
        result = [
            {
                "id": f"h{i}",
                "from_name": "pii",
                "to_name": "text",
                "type": "labels",
                "value": {"start": h["start"], "end": h["end"], "labels": [h["type"]]},
            }
            for i, h in enumerate(r["hits"])
        ]
        tasks.append(
            {
                "data": {
                    "doc_id": r["id"],
                    "row_key": r["row_key"],
                    "text": r["text"],
                    "lang": r["lang"] or "",
                    "decision": r["decision"],
                    "top_category": r["top_category"] or "",
                    "stratum": r["stratum"],
                    "scores": r["scores"],
                    "reasons": r["reasons"],
                },
                "predictions": [{"model_version": "rules", "result": result}] if result else [],
            }
        )
    return json.dumps(tasks, ensure_ascii=False, indent=1) + "\n"


def to_html(records: Sequence[Mapping[str, Any]], *, title: str, redacted: bool, key: str) -> str:
    """The interactive, self-contained labelling page (``spcl.review.page``) for ``records``."""
    cells = [csv_cells(r)[: -len(REVIEWER_COLUMNS)] for r in records]
    return labelling_page(records, cells, CSV_COLUMNS, key=key, title=title, redacted=redacted)


def sample_key(records: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 of the sample as ``sample.jsonl`` holds it: names the sample (manifest
    ``sample_sha256``)."""
    return hashlib.sha256(to_jsonl(records).encode("utf-8")).hexdigest()


def check_export_arguments(
    out: str | Path,
    *,
    formats: Sequence[str] = FORMATS,
    reviewers: Sequence[str] = (),
    force: bool = False,
) -> None:
    """Refuse, before anything is read or written, what :func:`export_sample` cannot honour: an
    unknown format, a reviewer name that is not letters, digits, ``-`` and ``_`` (or is given
    twice), an ``out`` that is a file, or a non-empty ``out`` without ``force``. ``ValueError`` /
    ``FileExistsError`` name the argument (reviewer names are shown escaped: they may hold
    anything)."""
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"unknown export format(s) {bad}; choose from {', '.join(FORMATS)}")
    for name in reviewers:
        if not name or not name.isascii() or not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(
                f"--reviewers: {name!r} is not a reviewer name (letters, digits, '-' and '_' only)"
            )
    repeated = sorted({n for n in reviewers if list(reviewers).count(n) > 1})
    if repeated:
        raise ValueError(f"--reviewers: {', '.join(repeated)} given more than once")
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise FileExistsError(f"{out_dir} is a file, not a folder for the review batch")
    if out_dir.exists() and any(out_dir.iterdir()) and not force:
        raise FileExistsError(
            f"{out_dir} is not empty (reviewers' files?); pass --force to overwrite"
        )


def export_sample(
    table: pa.Table,
    plan: SamplePlan,
    out: str | Path,
    *,
    formats: Sequence[str] = FORMATS,
    redacted: bool = False,
    source: str | Path | None = None,
    licence: str | None = None,
    reviewers: Sequence[str] = (),
    force: bool = False,
) -> dict[str, Any]:
    """Write the sample ``table`` to ``out`` in ``formats``, plus ``plan.json`` and a manifest.

    ``reviewers`` (e.g. ``["a", "b"]``) adds one ``reviewer-<name>.csv`` copy per reviewer. Every
    argument is checked (:func:`check_export_arguments`) before the folder or any file is made.
    Returns the manifest.
    """
    check_export_arguments(out, formats=formats, reviewers=reviewers, force=force)
    out_dir = Path(out)
    private_dir(out_dir)
    records = review_records(table, redacted=redacted)
    title = f"spcl review sample: {out_dir.name}"
    if "csv" in formats or reviewers:
        body = "\ufeff" + to_csv(records)
        if "csv" in formats:
            write_private(out_dir / "sample.csv", body)
        for name in reviewers:
            write_private(out_dir / f"reviewer-{name}.csv", body)
    if "jsonl" in formats:
        write_private(out_dir / "sample.jsonl", to_jsonl(records))
    if "labelstudio" in formats:
        write_private(out_dir / "labelstudio-tasks.json", to_labelstudio(records))
        write_private(out_dir / "labelstudio-config.xml", labelstudio_config())
    key = sample_key(records)
    if "html" in formats:
        write_private(
            out_dir / "sample.html", to_html(records, title=title, redacted=redacted, key=key)
        )
    write_private(
        out_dir / "plan.json", json.dumps(plan.to_json(), indent=2, ensure_ascii=False) + "\n"
    )
    src = manifest_ref(source) if source is not None else None
    manifest = write_manifest(
        out_dir,
        kind="review-export",
        records=len(records),
        record_counts=record_counts(out_dir),
        seed=plan.spec.seed,
        strata=list(plan.spec.dimensions),
        redacted=redacted,
        sample_sha256=key,
        formats=list(formats),
        licence=licence or (src.get("licence") if src else None),
        sources=[src] if src else [],
        config_hash=sorted({h for h in table.column("config_hash").to_pylist() if h}),
        model_version=sorted({v for v in table.column("model_version").to_pylist() if v}),
    )
    os.chmod(out_dir / MANIFEST_NAME, 0o600)
    return manifest
