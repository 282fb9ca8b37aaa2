"""Adjudicated reviews → training JSONL for ``spcl train`` (the fields of ``scpi-real-v1``)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spcl.manifest import (
    MANIFEST_NAME,
    ManifestRef,
    manifest_ref,
    record_counts,
    sha256_file,
    write_manifest,
)
from spcl.review.export import private_dir, write_private
from spcl.review.labels import ReviewError
from spcl.review.reviews import read_reviews
from spcl.review.sample import output_dataset

TRAIN_FILE = "train.jsonl"


def _texts_from_output(
    path: str | Path, ids: list[str]
) -> dict[str, tuple[str | None, str | None]]:
    import pyarrow.compute as pc

    table = output_dataset(path).to_table(
        columns=["id", "text", "lang"], filter=pc.field("id").isin(ids)
    )
    return {
        i: (t, lg)
        for i, t, lg in zip(
            table.column("id").to_pylist(),
            table.column("text").to_pylist(),
            table.column("lang").to_pylist(),
            strict=True,
        )
    }


def to_train(
    adjudicated: str | Path,
    out: str | Path,
    *,
    input_dir: str | Path | None = None,
    source: str = "spcl-review",
    licence: str | None = None,
    agreement: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``out/train.jsonl`` (``id, lang, source, text, label, categories, provenance``) and a
    manifest.

    Text comes from the filter output ``input_dir`` when given (needed when the export was
    redacted), else from the review file's ``text`` column. Rows without a label are skipped and
    counted. ``agreement`` (an ``agreement.json``) adds the reviewers' kappa to the provenance.
    Returns the manifest.
    """
    path = Path(adjudicated)
    reviews = read_reviews(path)
    batch_dir = path.parent
    export_manifest = manifest_ref(batch_dir) if (batch_dir / MANIFEST_NAME).is_file() else None
    redacted = bool(export_manifest) and json.loads((batch_dir / MANIFEST_NAME).read_text()).get(
        "redacted", False
    )
    labelled = [r for r in reviews.values() if r.label]
    originals = _texts_from_output(input_dir, [r.id for r in labelled]) if input_dir else {}
    if redacted and not input_dir:
        raise ReviewError(
            f"{path.name}: the export was redacted; pass the filter output to take text from"
        )
    review_sha = sha256_file(path)
    kappa = (agreement or {}).get("kappa")
    lines = []
    for r in labelled:
        if input_dir:
            if r.id not in originals:
                raise ReviewError(f"id {r.id!r}: not found in the filter output")
            text, lang = originals[r.id]
        else:
            text, lang = str(r.row.get("text") or ""), r.row.get("lang")
        if not text:
            raise ReviewError(f"id {r.id!r}: column 'text' is empty")
        record = {
            "id": r.id,
            "lang": lang or r.row.get("lang") or None,
            "source": source,
            "text": text,
            "label": r.label,
            "categories": list(r.categories) if r.label != "NONE" else [],
            "provenance": {
                "review_file": path.name,
                "review_sha256": review_sha,
                "export_manifest_sha256": (
                    export_manifest["manifest_sha256"] if export_manifest else None
                ),
                "decision": r.row.get("decision") or None,
                "stratum": r.row.get("stratum") or None,
                "agreed": r.row.get("agreed") or None,
                "kappa": kappa,
            },
        }
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    out_dir = private_dir(out)
    write_private(out_dir / TRAIN_FILE, "".join(lines))
    sources: list[dict[str, str] | ManifestRef] = [{"path": str(path), "sha256": review_sha}]
    if export_manifest:
        sources.append(export_manifest)
    if input_dir:
        sources.append(manifest_ref(input_dir))
    manifest = write_manifest(
        out_dir,
        kind="training-set",
        records=len(lines),
        record_counts=record_counts(out_dir),
        skipped_unlabelled=len(reviews) - len(labelled),
        labels={
            lab: sum(1 for r in labelled if r.label == lab) for lab in ("SCPI", "RELATED", "NONE")
        },
        licence=licence or (export_manifest.get("licence") if export_manifest else None),
        sources=sources,
        iaa=(
            {"kappa": kappa, "method": agreement.get("method"), "raters": agreement.get("raters")}
            if agreement
            else None
        ),
    )
    os.chmod(out_dir / MANIFEST_NAME, 0o600)
    return manifest
