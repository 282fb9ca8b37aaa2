"""Throughput of the full screen in plain Python (one core), and peak memory (``spcl bench-screen``).

The full screen is what the filter job runs per document: NFC normalisation, language guess, the rule
detectors, then tokenize → hashed TF-IDF → LightGBM ∪ LinearSVC (+ category scores). The numbers are
printed, never asserted (this machine has slow episodes: compare medians of repeated runs).
"""

from __future__ import annotations

import resource
import statistics
import time
from typing import Any

from spcl.bench import ANCHOR_SCREEN_DOCS_PER_CORE


def bench_screen(docs: int, batch: int, model: str | None, seed: int, rules: bool = True) -> dict[str, Any]:
    """Time the full screen over ``docs`` synthetic ~1.5 KB mixed ja/ko/en documents; returns the numbers."""
    import itertools

    from spcl.config import load_settings
    from spcl.filter.batch import resolve_model_path
    from spcl.screen import load_screen
    from spcl.synth.corpus import generate_corpus
    from spcl.text import guess_langs, normalize

    settings = load_settings()
    path = resolve_model_path(model or settings.screen.model)
    corpus = [d["text"] for d in itertools.islice(generate_corpus(docs, seed), docs)]
    total_bytes = sum(len(t.encode("utf-8")) for t in corpus)
    rss_before = _peak_rss_mb()
    t_load = time.perf_counter()
    screen = load_screen(path)
    load_s = time.perf_counter() - t_load
    find = None
    if rules:
        from spcl.detect import build_detectors

        find = build_detectors(settings.detect).find
    screen.predict(corpus[:200])  # warm-up (MeCab dictionary pages, LightGBM buffers)
    stage = {"normalize+lang": 0.0, "rules": 0.0, "screen": 0.0}
    batch_rates = []
    t_all = time.perf_counter()
    flagged = 0
    for start in range(0, len(corpus), batch):
        chunk = corpus[start : start + batch]
        t0 = time.perf_counter()
        texts = [normalize(t) for t in chunk]
        langs = guess_langs(texts)
        t1 = time.perf_counter()
        if find is not None:
            for t in texts:
                find(t)
        t2 = time.perf_counter()
        res = screen.predict(texts, langs)
        t3 = time.perf_counter()
        flagged += int(res.flag.sum())
        stage["normalize+lang"] += t1 - t0
        stage["rules"] += t2 - t1
        stage["screen"] += t3 - t2
        batch_rates.append(len(chunk) / (t3 - t0))
    wall = time.perf_counter() - t_all
    n = len(corpus)
    rate = n / wall
    return {
        "model": screen.version,
        "docs": n,
        "mean_bytes": round(total_bytes / max(n, 1)),
        "cores": 1,
        "docs_per_s_per_core": round(rate, 1),
        "median_batch_docs_per_s": round(statistics.median(batch_rates), 1),
        "mb_per_s_per_core": round(total_bytes / wall / 1e6, 2),
        "ratio_to_anchor_266": round(rate / ANCHOR_SCREEN_DOCS_PER_CORE, 2),
        "screen_only_docs_per_s": round(n / stage["screen"], 1),
        "stage_seconds": {k: round(v, 2) for k, v in stage.items()},
        "flag_rate": round(flagged / max(n, 1), 4),
        "model_load_s": round(load_s, 2),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "peak_rss_mb_before_model": round(rss_before, 1),
        "rules": find is not None,
    }


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
