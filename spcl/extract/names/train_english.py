"""Train the English person-name CRF (``spcl.extract.names.en_crf``) on ``names-gold-v2`` and add it
to the card.

``train_english(data, out)`` reads ``{"id", "lang", "source", "text", "persons"}`` JSONL, keeps the
held-out fifth (:func:`spcl.extract.names.tagger.split_of`) and any ``held_out_sources`` out of
training, picks the threshold on a dev fifth of the rest, trains the shipped model on the whole
training split, and writes ``out/en.crfsuite`` and its entries of ``out/model_card.json`` (beside
the ja/ko entries of ``spcl.extract.names.train``): per source of the held-out split, the numbers of
the finder with the CRF and of the rule finder alone (``baseline_rules``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

from spcl.extract.names import en_crf, english_spans
from spcl.extract.names.en import en_name_spans
from spcl.extract.names.tagger import _model, split_of, threshold
from spcl.extract.names.train_gold import VERSION, dev_of, mention_metrics, read_gold

DEFAULT_EN_DATA = Path("data/names-gold-v2/names.jsonl")
EN_THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def _fit_en(
    records: list[dict[str, Any]],
    path: Path,
    params: dict[str, Any],
    gaz: tuple[frozenset[str], frozenset[str]],
) -> float:
    """Train the English CRF on ``records`` into ``path``; returns the training seconds."""
    import pycrfsuite

    trainer = pycrfsuite.Trainer(verbose=False)
    for r in records:
        text, gold = r["text"], [tuple(p) for p in r["persons"]]
        pos = 0
        for line in text.split("\n"):
            toks = [(s + pos, e + pos) for s, e in en_crf.tokens(line)]
            pos += len(line) + 1
            if toks:
                trainer.append(
                    en_crf.features(text, toks, en_name_spans(text), gaz), en_crf.labels(toks, gold)
                )
    trainer.set_params(params)
    started = time.perf_counter()
    trainer.train(str(path))
    return time.perf_counter() - started


def en_pipeline(
    text: str, model_dir: str | None = None, cut: float | None = None
) -> list[tuple[int, int]]:
    """What the finder gives English ``text`` for the CRF in ``model_dir`` at ``cut``: the CRF's
    spans with the rule finder's title/cue spans, longest per overlap, whole words only."""

    return english_spans(text, model_dir, cut)


def train_english(
    data: Path = DEFAULT_EN_DATA,
    out: Path = Path("models/names-crf"),
    *,
    c1: float = 0.05,
    c2: float = 0.01,
    max_iterations: int = 200,
    min_freq: int = 1,
    max_false_rows: float = 0.03,
    gazetteer: Path | None = None,
    held_out_sources: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Train the English CRF (``spcl.extract.names.en_crf``) on names-gold-v2 and add it to
    ``out``'s card.

    The held-out fifth by id hash (:func:`spcl.extract.names.tagger.split_of`) is never trained on;
    the threshold is the lowest of ``EN_THRESHOLDS`` whose false-row rate on a dev fifth of the
    training split (a model fitted on the other four fifths) is at most ``max_false_rows``. Numbers
    per source of the held-out split go to the card (``heldout_pipeline_by_source``) beside the rule
    finder's (``baseline_rules``). ``held_out_sources``: sources never trained on (a cross-source
    check; the card then records it). ``gazetteer``: the name gazetteer
    (``tools/datasets/en_names_gazetteer.py``), copied beside the model.
    """

    records = [r for r in read_gold(data) if r["lang"] == "en"]
    out.mkdir(parents=True, exist_ok=True)
    gaz_file = gazetteer if gazetteer is not None else out / en_crf.EN_GAZETTEER
    if gaz_file.is_file() and gaz_file.resolve() != (out / en_crf.EN_GAZETTEER).resolve():
        shutil.copyfile(gaz_file, out / en_crf.EN_GAZETTEER)
    en_crf.en_gazetteer.cache_clear()
    gaz = en_crf.en_gazetteer(str(out))
    params = {
        "c1": c1,
        "c2": c2,
        "max_iterations": max_iterations,
        "feature.minfreq": min_freq,
        "feature.possible_transitions": True,
    }
    train = [
        r for r in records if split_of(r["id"]) == "train" and r["source"] not in held_out_sources
    ]
    held = [r for r in records if split_of(r["id"]) == "heldout" or r["source"] in held_out_sources]
    fit, dev = [r for r in train if not dev_of(r["id"])], [r for r in train if dev_of(r["id"])]
    dev_dir = out / ".dev-en"
    dev_dir.mkdir(exist_ok=True)
    if gaz:
        shutil.copyfile(out / en_crf.EN_GAZETTEER, dev_dir / en_crf.EN_GAZETTEER)
    _fit_en(fit, dev_dir / "en.crfsuite", params, gaz)
    _model.cache_clear()
    en_crf._model.cache_clear()
    grid = {
        t: mention_metrics(dev, lambda x, t=t, d=str(dev_dir): en_pipeline(x, d, t))
        for t in EN_THRESHOLDS
    }
    _model.cache_clear()
    en_crf._model.cache_clear()
    shutil.rmtree(dev_dir)
    ok = [t for t in EN_THRESHOLDS if (grid[t]["false_row_rate"] or 0.0) <= max_false_rows]
    chosen = (
        ok[0]
        if ok
        else max(
            EN_THRESHOLDS,
            key=lambda t: (grid[t]["recall"] or 0.0) - 3 * (grid[t]["false_row_rate"] or 0.0),
        )
    )
    path = out / "en.crfsuite"
    seconds = _fit_en(train, path, params, gaz)
    _model.cache_clear()
    en_crf._model.cache_clear()
    card_path = out / "model_card.json"
    card: dict[str, Any] = (
        json.loads(card_path.read_text(encoding="utf-8"))
        if card_path.is_file()
        else {
            "version": VERSION,
            "kind": "person-name-crf",
            "format": "crfsuite binary (python-crfsuite)",
            "labels": ["B", "I", "O"],
            "thresholds": {},
            "files": {},
        }
    )
    sources = sorted({r["source"] for r in held})
    by_source: dict[str, Any] = {}
    rules_by_source: dict[str, Any] = {}
    for src in sources:
        part = [r for r in held if r["source"] == src]
        by_source[src] = mention_metrics(part, lambda x, t=chosen: en_pipeline(x, str(out), t))
        rules_by_source[src] = mention_metrics(part, en_name_spans)
    card["thresholds"]["en"] = chosen
    card.setdefault("data_en", {}).update(
        {
            "path": data.name,
            "sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
            "records": len(records),
            "held_out_sources": list(held_out_sources),
        }
    )
    card.setdefault("settings_en", {}).update(
        {"algorithm": "lbfgs", **params, "max_false_rows_on_dev": max_false_rows}
    )
    card.setdefault("dev", {})["en"] = {
        str(t): {k: grid[t][k] for k in ("recall", "false_row_rate", "span_precision")}
        for t in EN_THRESHOLDS
    }
    card.setdefault("train_seconds", {})["en"] = round(seconds, 1)
    card["files"]["en"] = {
        "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "bytes": path.stat().st_size,
        "train_sentences": len(train),
        "heldout_sentences": len(held),
    }
    if gaz:
        g = out / en_crf.EN_GAZETTEER
        meta = json.loads(g.read_text(encoding="utf-8"))
        card["files"]["en"]["gazetteer"] = {
            "file": g.name,
            "sha256": hashlib.sha256(g.read_bytes()).hexdigest(),
            "bytes": g.stat().st_size,
            "given": len(meta.get("given", ())),
            "surname": len(meta.get("surname", ())),
            "source": meta.get("source"),
            "licence": meta.get("licence"),
        }
    card.setdefault("heldout_pipeline", {})["en"] = mention_metrics(
        held, lambda x, t=chosen: en_pipeline(x, str(out), t)
    )
    card.setdefault("heldout_pipeline_by_source", {})["en"] = by_source
    card.setdefault("baseline_rules", {})["en"] = mention_metrics(held, en_name_spans)
    card.setdefault("baseline_rules_by_source", {})["en"] = rules_by_source
    card_path.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    threshold.cache_clear()
    return card
