"""Throughput of the full screen in plain Python (one core), per language, and peak memory (``spcl
bench screen``).

The full screen is what the filter job runs per document: NFC normalisation, language guess, the
rule detectors, then tokenize → hashed TF-IDF → LightGBM ∪ LinearSVC (+ category scores). The
default corpus is real text, a third each English, Japanese and Korean
(``spcl.bench.realtext.real_documents``, the corpus of ``spcl bench filter`` too). Rates are
documents per CPU second of this process (``time.process_time``), the median of interleaved repeats,
so another job on the machine moves them less than wall time would; they are printed, never
asserted. ``compare`` times a second model on the same documents in the same run and counts the
documents whose flag differs.
"""

from __future__ import annotations

import resource
import statistics
import time
from typing import Any, TypedDict

from spcl.bench import ANCHOR_SCREEN_DOCS_PER_CORE
from spcl.bench.realtext import real_documents
from spcl.config import load_settings
from spcl.detect import build_detectors
from spcl.filter.batch import resolve_model_path
from spcl.screen.kinds import load_any
from spcl.synth.corpus import generate_corpus
from spcl.text import guess_langs, normalize


def _corpus(docs: int, seed: int, corpus: str) -> list[dict[str, Any]]:
    import itertools

    if corpus == "mixed":
        return list(real_documents(docs, seed))
    return list(itertools.islice(generate_corpus(docs, seed), docs))


class _Timing(TypedDict):
    """One timed pass over one language's texts: CPU seconds of the rules and the screen, the
    screen's flags."""

    rules: float
    screen: float
    flags: list[bool]


class LangSpeed(TypedDict):
    """One language's median rates: documents, the screen alone, the full path (per CPU second)
    and its flag rate."""

    docs: int
    screen_docs_per_cpu_s: float
    full_docs_per_cpu_s: float
    full_mb_per_cpu_s: float
    flag_rate: float


class ModelSpeed(TypedDict):
    """One model's rates over every language (:func:`_summary`)."""

    version: str
    docs_per_cpu_s: float
    screen_only_docs_per_cpu_s: float
    ratio_to_anchor_266: float
    flag_rate: float
    per_lang: dict[str, LangSpeed]


def _time_model(screen: Any, find: Any, texts: list[str], langs: list[str], batch: int) -> _Timing:
    """CPU seconds of one pass: rules (when ``find``) and the screen, per batch; and the screen's
    flags."""
    rules = model = 0.0
    flags: list[bool] = []
    for start in range(0, len(texts), batch):
        chunk, chunk_langs = texts[start : start + batch], langs[start : start + batch]
        t0 = time.process_time()
        if find is not None:
            for t in chunk:
                find(t)
        t1 = time.process_time()
        res = screen.predict(chunk, chunk_langs)
        t2 = time.process_time()
        flags.extend(res.flag.tolist())
        rules += t1 - t0
        model += t2 - t1
    return {"rules": rules, "screen": model, "flags": flags}


def bench_screen(
    docs: int,
    batch: int,
    model: str | None,
    seed: int,
    rules: bool = True,
    corpus: str = "mixed",
    compare: str | None = None,
    repeats: int = 3,
) -> dict[str, Any]:
    """Time the full screen over ``docs`` ~1.5 KB documents (``corpus``: ``mixed`` real en/ja/ko, or
    ``synthetic`` templates), per language; with ``compare`` also a second model, interleaved;
    returns the numbers (docs per CPU second, MB/s, peak RSS, flag rates and, with ``compare``, flag
    disagreements)."""
    settings = load_settings()
    records = _corpus(docs, seed, corpus)
    rss_before = _peak_rss_mb()
    t_load = time.perf_counter()
    paths = {"model": resolve_model_path(model or settings.screen.model)}
    if compare:
        paths["compare"] = resolve_model_path(compare)
    screens = {k: load_any(p) for k, p in paths.items()}
    load_s = time.perf_counter() - t_load
    find = None
    if rules:
        find = build_detectors(settings.detect).find
    t0 = time.process_time()
    texts = [normalize(r["text"]) for r in records]
    langs = guess_langs(texts)
    prep_s = time.process_time() - t0
    by_lang: dict[str, list[int]] = {}
    for i, lang in enumerate(langs):
        by_lang.setdefault(lang, []).append(i)
    for s in screens.values():
        s.predict(texts[:200], langs[:200])  # warm-up (MeCab dictionary pages, LightGBM buffers)
    runs: dict[str, dict[str, list[_Timing]]] = {k: {} for k in screens}
    for _ in range(max(repeats, 1)):
        # interleaved: a slow episode of the machine hits both models
        for key, s in screens.items():
            for lang, idx in sorted(by_lang.items()):
                part = _time_model(s, find, [texts[i] for i in idx], [langs[i] for i in idx], batch)
                runs[key].setdefault(lang, []).append(part)
    out: dict[str, Any] = {
        "corpus": corpus,
        "docs": len(texts),
        "batch": batch,
        "cores": 1,
        "repeats": repeats,
        "normalize_lang_docs_per_cpu_s": round(len(texts) / max(prep_s, 1e-9), 1),
        "model_load_s": round(load_s, 2),
        "rules": find is not None,
    }
    for key, s in screens.items():
        out[key] = _summary(s.version, runs[key], by_lang, texts, prep_s / max(len(texts), 1))
    if compare:
        a = {lang: runs["model"][lang][0]["flags"] for lang in by_lang}
        b = {lang: runs["compare"][lang][0]["flags"] for lang in by_lang}
        out["flag_disagreements"] = {
            lang: sum(x != y for x, y in zip(a[lang], b[lang], strict=True))
            for lang in sorted(by_lang)
        }
        out["compare_vs_model_docs_per_cpu_s"] = round(
            out["compare"]["docs_per_cpu_s"] / max(out["model"]["docs_per_cpu_s"], 1e-9), 3
        )
    out["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    out["peak_rss_mb_before_model"] = round(rss_before, 1)
    return out


def _summary(
    version: str,
    runs: dict[str, list[_Timing]],
    by_lang: dict[str, list[int]],
    texts: list[str],
    prep_per_doc: float,
) -> ModelSpeed:
    """Median per-language rates of one model: the screen alone and rules + screen +
    normalize/lang."""
    per_lang: dict[str, LangSpeed] = {}
    total_s = total_screen = 0.0
    flagged = 0
    for lang, idx in sorted(by_lang.items()):
        n = len(idx)
        screen_s = statistics.median(r["screen"] for r in runs[lang])
        full_s = statistics.median(r["screen"] + r["rules"] for r in runs[lang]) + prep_per_doc * n
        mb = sum(len(texts[i].encode("utf-8", "surrogatepass")) for i in idx) / 1e6
        fl = sum(runs[lang][0]["flags"])
        per_lang[lang] = {
            "docs": n,
            "screen_docs_per_cpu_s": round(n / max(screen_s, 1e-9), 1),
            "full_docs_per_cpu_s": round(n / max(full_s, 1e-9), 1),
            "full_mb_per_cpu_s": round(mb / max(full_s, 1e-9), 2),
            "flag_rate": round(fl / n, 4),
        }
        total_s += full_s
        total_screen += screen_s
        flagged += fl
    n_all = sum(len(v) for v in by_lang.values())
    rate = n_all / max(total_s, 1e-9)
    return {
        "version": version,
        "docs_per_cpu_s": round(rate, 1),
        "screen_only_docs_per_cpu_s": round(n_all / max(total_screen, 1e-9), 1),
        "ratio_to_anchor_266": round(rate / ANCHOR_SCREEN_DOCS_PER_CORE, 2),
        "flag_rate": round(flagged / max(n_all, 1), 4),
        "per_lang": per_lang,
    }


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
