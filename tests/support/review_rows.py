"""A seeded filter-output-like corpus (rows with planted hits) and a writer for it, for the
review tests."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds

from spcl.io.schema import OUTPUT_SCHEMA, row_key

PHONES = {"ja": "090-{:04d}-{:04d}", "ko": "010-{:04d}-{:04d}", "en": "+1 415 {:03d} {:04d}"}
TEMPLATES = {
    "ja": "田中さんの連絡先は{v}です。<b>入院</b>中とのこと & 詳細",
    "ko": '김철수 씨 번호는 {v} 입니다. 병원 "치료" 중',
    "en": "=HYPERLINK(x) call {v} about the <script>alert(1)</script> case",
}
CATS = ["MEDICAL", "CRIME", "DISABILITY", "OTHER", None]


def make_rows(n: int = 600, seed: int = 1) -> list[dict]:
    """Synthetic filter-output rows (OUTPUT_SCHEMA) with phone hits at known spans."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        lang = rng.choice(["ja", "ko", "en"])
        decision = "flagged" if rng.random() < 0.4 else "clean"
        value = PHONES[lang].format(rng.randrange(1000), rng.randrange(10000))
        text = TEMPLATES[lang].format(v=value)
        start = text.index(value)
        lgbm = rng.random()
        screened = rng.random() < 0.8
        rows.append(
            {
                "id": f"doc-{i:05d}",
                "decision": decision,
                "text": text,
                "lang": lang,
                "source": f"shard-{i % 7}.jsonl",
                "position": i,
                "meta": None,
                "hits": [
                    {
                        "type": "PHONE",
                        "start": start,
                        "end": start + len(value),
                        "validated": None,
                        "detector": "phone@1",
                    }
                ],
                "reasons": ["rule:PHONE"] if decision == "flagged" else [],
                "scores": (
                    {
                        "lgbm": lgbm,
                        "svc": lgbm - 0.5,
                        "lgbm_flag": lgbm > 0.5,
                        "svc_flag": lgbm > 0.5,
                        "medical": 0.1,
                        "crime": 0.2,
                        "disability": 0.0,
                        "other": 0.0,
                    }
                    if screened
                    else None
                ),
                "top_category": rng.choice(CATS) if screened else None,
                "quarantine_reason": None,
                "raw": None,
                "config_hash": "cfg123",
                "model_version": "screen@test",
            }
        )
    rows.append(
        {
            "id": "q-1",
            "decision": "quarantine",
            "text": None,
            "lang": None,
            "source": "bad.jsonl",
            "position": 0,
            "meta": None,
            "hits": [],
            "reasons": [],
            "scores": None,
            "top_category": None,
            "quarantine_reason": "json",
            "raw": b"{bad",
            "config_hash": "cfg123",
            "model_version": None,
        }
    )
    return rows


def write_output(
    path: Path, rows: list[dict], *, rows_per_file: int, shuffle_seed: int | None = None
) -> Path:
    """Write rows as a hive-partitioned filter output (``decision=*/part-*.parquet``) plus
    stats.json."""
    rows = [
        {**r, "row_key": r.get("row_key") or row_key(r["id"], r["source"], r["position"])}
        for r in rows
    ]
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(rows)
    table = pa.Table.from_pylist(rows, schema=OUTPUT_SCHEMA)
    ds.write_dataset(
        table,
        path,
        format="parquet",
        partitioning=["decision"],
        partitioning_flavor="hive",
        max_rows_per_file=rows_per_file,
        max_rows_per_group=rows_per_file,
        basename_template="part-{i}.parquet",
        existing_data_behavior="overwrite_or_ignore",
    )
    counts = {
        d: sum(1 for r in rows if r["decision"] == d) for d in ("clean", "flagged", "quarantine")
    }
    (path / "stats.json").write_text(json.dumps({"counts": counts, "by_lang": {}}))
    (path / "manifest.json").write_text(
        json.dumps({"kind": "filter-output", "licence": "CC-BY-4.0", "files": {}})
    )
    return path
