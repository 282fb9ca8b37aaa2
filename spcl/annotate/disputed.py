"""The texts the teachers disputed, as a review sample: ``spcl review export --input data/annotated/
--what rejected``.

Builds the same table ``spcl.review.export.export_sample`` writes for a filter output, from an
annotate output's ``rejected.jsonl``: decision ``rejected``, the rejection reason and every
teacher's vote in ``reasons`` (``vote:<teacher>=<LABEL>:<CATEGORIES>:<confidence>``), rule hits from
``spcl.detect.find_pii`` (highlighted, and replaced with ``--redact``), and as top category the
category most teachers named. With more rejected texts than ``--n`` the sample is stratified and
drawn by hashed id (``spcl.review.sample.draw``), so it depends only on the ids and the seed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from spcl.annotate.agreement import VoteJson
from spcl.detect import find_pii
from spcl.io.jsonl import read_jsonl_objects
from spcl.review.sample import SamplePlan, SampleSpec, draw, stratum_name
from spcl.screen import CATEGORIES

REJECTED_FILE = "rejected.jsonl"


def _vote_text(v: VoteJson) -> str:
    label, error = v.get("label"), v.get("error")
    if label is None:
        return f"vote:{v['teacher']}={'error:' + error if error else 'unparseable'}"
    return (
        f"vote:{v['teacher']}={label}:"
        f"{','.join(v.get('categories') or []) or '-'}:{v['confidence']}"
    )


def _top_category(votes: list[VoteJson]) -> str | None:
    counts = Counter(c for v in votes for c in v.get("categories") or [])
    if not counts:
        return None
    return max(CATEGORIES, key=lambda c: (counts.get(c, 0), -CATEGORIES.index(c)))


def rejected_sample(annotated: str | Path, spec: SampleSpec) -> tuple[SamplePlan, pa.Table]:
    """The sample plan and the review table of an annotate output's rejected texts (all of them when
    they fit ``spec.n``); raises ``ValueError`` when the folder has no ``rejected.jsonl``."""

    path = Path(annotated) / REJECTED_FILE
    if not path.is_file():
        raise ValueError(
            f"{annotated} has no {REJECTED_FILE} (is it an 'spcl annotate' output folder?)"
        )
    version = config = None
    report = Path(annotated) / "report.json"
    if report.is_file():
        data = json.loads(report.read_text())
        version, config = data.get("prompt_version"), data.get("parts_hash")
    rows: list[dict[str, Any]] = []
    for r in read_jsonl_objects(path):
        votes = (r.get("votes") or []) + ([r["verifier"]] if r.get("verifier") else [])
        hits = [
            {
                "type": h.type,
                "start": h.start,
                "end": h.end,
                "validated": h.validated,
                "detector": h.detector,
            }
            for h in find_pii(r["text"])
        ]
        rows.append(
            {
                "id": r["id"],
                "decision": "rejected",
                "lang": r.get("lang"),
                "text": r["text"],
                "top_category": _top_category(votes),
                "hits": hits,
                "reasons": [r["reason"], *(_vote_text(v) for v in votes)],
                "scores": None,
                "config_hash": config,
                "model_version": version,
            }
        )
    strata = [
        stratum_name(
            spec.dimensions, "rejected", r["lang"], r["top_category"], None, spec.bucket_edges
        )
        for r in rows
    ]
    plan, chosen = draw([r["id"] for r in rows], strata, spec)
    stratum_of = {i: s for s, ids in chosen.items() for i in ids}
    picked = sorted((r for r in rows if r["id"] in stratum_of), key=lambda r: r["id"])
    for r in picked:
        s = stratum_of[r["id"]]
        r["stratum"] = s
        r["weight"] = plan.populations[s] / max(plan.sizes[s], 1)
    columns = [
        "id",
        "decision",
        "lang",
        "top_category",
        "stratum",
        "weight",
        "text",
        "hits",
        "reasons",
        "scores",
        "config_hash",
        "model_version",
    ]
    return plan, (
        pa.Table.from_pylist([{c: r[c] for c in columns} for r in picked])
        if picked
        else pa.table({c: pa.array([], pa.string()) for c in columns})
    )
