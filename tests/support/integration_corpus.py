"""The records the integration tests screen, and what ``spcl filter`` (plain engine) decides for
them.

Real documents (the committed sample crawl, and the shared real labelled sentences where present),
planted PII, and every bad text an in-memory engine can hold (null, a number, blank, NUL, over the
size limit). Every record has an id, so a verdict is matched to the filter's by id.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from spcl.config import Settings, load_settings
from spcl.filter.job import FilterJob, run_filter
from spcl.io.outputs import output_dataset
from tests.support.paths import SAMPLE, SHARED_DATA

MAX_TEXT_CHARS = 3000
BAD: dict[str, Any] = {
    "bad-null": None,
    "bad-number": 12345,
    "bad-blank": "   ",
    "bad-nul": "電話は 090-1234-5678 \x00 です",
    "bad-too-long": "가" * (MAX_TEXT_CHARS + 1),
}
BAD_REASONS = {
    "bad-null": "missing_text_field",
    "bad-number": "text_not_string",
    "bad-blank": "empty_text",
    "bad-nul": "text_contains_nul",
    "bad-too-long": "text_too_long",
}
PLANTED = {
    "pii-ko-phone": "연락처는 010-2345-6789입니다. 편하게 전화 주세요.",
    "pii-ja-email": "詳しくは taro.yamada@mailbox.jp までご連絡ください。",
    "plain-ja": "週末は家族で近くの公園に出かけました。",
    "plain-en": "The library opens at nine and closes at five on weekdays.",
}
COMPARED = (
    "decision",
    "reasons",
    "hits",
    "lang",
    "top_category",
    "quarantine_reason",
    "config_hash",
    "model_version",
    "lgbm",
    "svc",
)


def settings() -> Settings:
    """The settings every integration test screens with (a small text limit, to reach
    ``text_too_long``)."""
    return load_settings(overrides={"input.max_text_chars": MAX_TEXT_CHARS})


def records(sample: int = 120, real: int = 40) -> list[dict[str, Any]]:
    """``{"id", "text"}`` records: sample crawl, real sentences, planted PII, then the bad texts."""
    with gzip.open(SAMPLE / "crawl-0000.jsonl.gz", "rt", encoding="utf-8") as fh:
        out = [{"id": r["id"], "text": r["text"]} for r in map(json.loads, fh)][:sample]
    if SHARED_DATA.is_file():
        with open(SHARED_DATA, encoding="utf-8") as fh:
            out += [{"id": r["id"], "text": r["text"]} for r in map(json.loads, fh)][:real]
    out += [{"id": k, "text": v} for k, v in PLANTED.items()]
    out += [{"id": k, "text": v} for k, v in BAD.items()]
    return out


def verdict(row: dict[str, Any]) -> dict[str, Any]:
    """The compared part of one output row (scores rounded: the same float32 values, printed the
    same)."""
    scores = row.get("scores") or {}
    picked = {k: row.get(k) for k in COMPARED if k not in ("lgbm", "svc")}
    picked["reasons"] = list(picked["reasons"] or [])
    picked["hits"] = [dict(h) for h in picked["hits"] or []]
    picked.update(
        {k: None if scores.get(k) is None else round(float(scores[k]), 5) for k in ("lgbm", "svc")}
    )
    return picked


def filter_verdicts(
    recs: list[dict[str, Any]], workdir: Path, cfg: Settings
) -> dict[str, dict[str, Any]]:
    """What ``spcl filter`` (plain-Python engine) decides for ``recs``, by id."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "crawl.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8"
    )
    out = workdir / "filter-out"
    run_filter(FilterJob((str(path),), str(out), cfg, engine="python", overwrite=True))
    rows = output_dataset(out).to_table().to_pylist()
    assert len(rows) == len(recs)
    return {r["id"]: verdict(r) for r in rows}
