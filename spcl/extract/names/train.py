"""Train the person-name CRFs (``spcl.extract.names.tagger``) on ``names-gold-v1`` and write their
model card.

``train_names(data, out)`` reads ``{"id", "lang", "text", "persons"}`` JSONL, keeps the ``heldout``
split (:func:`spcl.extract.names.tagger.split_of`) out of training, adds person-free technical
passages (``data/weak-none``, training only) so that help text and manuals are not read as names,
trains one CRF per language with L-BFGS (deterministic for the same data and settings), and writes
``out/{ja,ko}.crfsuite`` and ``out/model_card.json``: the data's SHA-256, the settings, and per
language on the held-out split — P/R/F1 of name spans (precision: predicted spans touching a gold
mention; recall: gold mentions fully covered), the false-row rate (sentences without a person given
a span) and sentences per second of the tagger alone. The same numbers for the rule finders alone
are recorded beside them (``baseline_rules``). The English CRF has its own trainer
(``spcl.extract.names.train_english``); what both share is ``spcl.extract.names.train_gold``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

from spcl.extract.names import crf_pipeline_spans, ko_chars, merge_japanese, merge_korean
from spcl.extract.names.ko import longest_per_overlap, parse
from spcl.extract.names.tagger import (
    JA_GAZETTEER,
    LANGS,
    MODEL_DIR,
    _model,
    agree_threshold,
    analyse,
    features,
    ja_gazetteer,
    ko_gazetteer,
    labels,
    load_ja_gazetteer,
    scored_spans,
    split_of,
    tagger_spans,
    threshold,
)
from spcl.extract.names.tally import MentionMetrics
from spcl.extract.names.train_gold import VERSION, dev_of, mention_metrics, person_free, read_gold
from spcl.mask.words import is_whole_word

DEFAULT_DATA = Path("data/names-gold-v1/names.jsonl")
DEFAULT_NEGATIVES = Path("data/weak-none/libreoffice-help.jsonl")
DEFAULT_JA_GAZETTEER = MODEL_DIR / JA_GAZETTEER
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def _pairs(
    records: list[dict[str, Any]], lang: str, model_dir: str
) -> dict[tuple[float, float], MentionMetrics]:
    """Pipeline metrics of each (threshold alone, threshold where a rule span or cue agrees) pair of
    ``THRESHOLDS`` on ``records`` for the ``lang`` CRF in ``model_dir`` (one tagging pass per floor,
    then the merge alone: :func:`spcl.extract.names.merge_japanese` /
    :func:`~spcl.extract.names.merge_korean`)."""
    merge = merge_japanese if lang == "ja" else merge_korean
    by_floor = {
        f: [scored_spans(r["text"], lang, model_dir, f) or ([], []) for r in records]
        for f in THRESHOLDS
    }
    out = {}
    for a in THRESHOLDS:
        for b in THRESHOLDS:
            done = iter(by_floor[min(a, b)])

            def predict(
                text: str, a: float = a, b: float = b, done: Any = done
            ) -> list[tuple[int, int]]:
                scored, found = next(done)
                spans = longest_per_overlap(merge(text, scored, found, a, b))
                return [(s, e) for s, e in spans if is_whole_word(text, s, e)]

            out[(a, b)] = mention_metrics(records, predict)
    return out


def _fit(
    records: list[dict[str, Any]],
    lang: str,
    path: Path,
    params: dict[str, Any],
    ja_gaz: dict[str, str] | None = None,
) -> float:
    """Train one CRF on ``records`` into ``path``; returns the training seconds. ``ja_gaz``: the
    Japanese katakana name gazetteer (:func:`spcl.extract.names.tagger.ja_gazetteer`) the features
    read."""
    import pycrfsuite

    trainer = pycrfsuite.Trainer(verbose=False)
    gaz: dict[str, tuple[str, str]] = {}
    # the Korean CRF labels characters, with a syllable gazetteer of these records only
    if lang == "ko":
        table: dict[str, Any] = ko_chars.build_gazetteer(
            r for r in records if not r["id"].startswith("weak-")
        )
        table["technical"] = ko_chars.technical_words(
            (r["text"] for r in records if r["id"].startswith("weak-")),
            # the person-free training passages only
            parse,
        )
        (path.parent / "ko.gazetteer.json").write_text(
            json.dumps(table, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
        )
        gaz = ko_chars.gaz_lookup({k: v for k, v in table.items() if k != "technical"})
    for r in records:
        analysed = analyse(r["text"], lang)
        if not analysed or not analysed[0]:
            continue
        morphs, rules = analysed
        gold = [tuple(p) for p in r["persons"]]
        if lang == "ko":
            idx = ko_chars.tokens(r["text"], 0, len(r["text"]))
            trainer.append(
                ko_chars.features(r["text"], idx, morphs, rules, gaz),
                ko_chars.labels(r["text"], idx, gold),
            )
        else:
            trainer.append(features(r["text"], morphs, rules, ja_gaz), labels(morphs, gold))
    trainer.set_params(params)
    started = time.perf_counter()
    trainer.train(str(path))
    return time.perf_counter() - started


def train_names(
    data: Path = DEFAULT_DATA,
    out: Path = Path("models/names-crf"),
    *,
    c1: float = 0.05,
    c2: float = 0.01,
    max_iterations: int = 200,
    min_freq: int = 2,
    max_false_rows: float = 0.03,
    langs: tuple[str, ...] = LANGS,
    negatives: Path | None = DEFAULT_NEGATIVES,
    negatives_per_lang: int = 600,
    ja_gazetteer_file: Path | None = DEFAULT_JA_GAZETTEER,
) -> dict[str, Any]:
    """Train, pick each language's marginal threshold, evaluate on the held-out split, write models
    and card.

    The threshold is the lowest of ``THRESHOLDS`` (most recall) whose false-row rate on a dev fifth
    of the training split, with a model fitted on the other four fifths, is at most
    ``max_false_rows`` (else the one with the best recall − 3 × false-row rate there), scored as the
    finder uses the CRF (merged with the rule finders:
    :func:`spcl.extract.names.crf_pipeline_spans`); the shipped model is then trained on the whole
    training split. ``heldout`` is the CRF alone, ``heldout_pipeline`` the CRF merged with the rule
    finders. ``ja_gazetteer_file``: the katakana name gazetteer of the Japanese CRF
    (``tools/datasets/ja_names_gazetteer.py``), copied beside the model; None or a missing file
    trains without one.
    """

    records = read_gold(data)
    out.mkdir(parents=True, exist_ok=True)
    params = {
        "c1": c1,
        "c2": c2,
        "max_iterations": max_iterations,
        "feature.minfreq": min_freq,
        "feature.possible_transitions": True,
    }
    card: dict[str, Any] = {
        "version": VERSION,
        "kind": "person-name-crf",
        "format": "crfsuite binary (python-crfsuite)",
        "data": {
            "path": data.name,
            "sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
            "records": len(records),
        },
        "split": (
            "heldout: sha256(id)[0] % 5 == 0; train: the rest (its dev fifth: sha256(id)[1] % 5"
            " == 0)"
        ),
        "negatives": {
            "path": str(negatives) if negatives else None,
            "per_lang": negatives_per_lang,
            "sha256": (
                hashlib.sha256(negatives.read_bytes()).hexdigest()
                if negatives and negatives.is_file()
                else None
            ),
        },
        "settings": {"algorithm": "lbfgs", **params, "max_false_rows_on_dev": max_false_rows},
        "labels": ["B", "I", "O"],
        "thresholds": {},
        "dev": {},
        "files": {},
        "heldout": {},
        "heldout_pipeline": {},
        "baseline_rules": {},
        "train_seconds": {},
    }
    for lang in langs:
        train = [r for r in records if r["lang"] == lang and split_of(r["id"]) == "train"]
        held = [r for r in records if r["lang"] == lang and split_of(r["id"]) == "heldout"]
        fit, dev = [r for r in train if not dev_of(r["id"])], [r for r in train if dev_of(r["id"])]
        extra = person_free(negatives, lang, negatives_per_lang)  # training only, never scored
        fit, train = fit + extra, train + extra
        dev_dir = out / ".dev"
        dev_dir.mkdir(exist_ok=True)
        gaz: dict[str, str] = {}
        if lang == "ja" and ja_gazetteer_file is not None and ja_gazetteer_file.is_file():
            gaz = load_ja_gazetteer(ja_gazetteer_file)
            for folder in (dev_dir, out):
                if (folder / JA_GAZETTEER).resolve() != ja_gazetteer_file.resolve():
                    shutil.copyfile(ja_gazetteer_file, folder / JA_GAZETTEER)
        _fit(fit, lang, dev_dir / f"{lang}.crfsuite", params, gaz)
        _model.cache_clear()
        ko_gazetteer.cache_clear()
        grid = {
            t: mention_metrics(
                dev, lambda x, lang=lang, t=t, d=str(dev_dir): crf_pipeline_spans(x, lang, d, cut=t)
            )
            # scored as the finder uses the CRF: merged with the rule finders
            for t in THRESHOLDS
        }
        agree_grid = _pairs(dev, lang, str(dev_dir))
        _model.cache_clear()
        ko_gazetteer.cache_clear()
        (dev_dir / f"{lang}.crfsuite").unlink()
        (dev_dir / "ko.gazetteer.json").unlink(missing_ok=True)
        (dev_dir / JA_GAZETTEER).unlink(missing_ok=True)
        ja_gazetteer.cache_clear()
        dev_dir.rmdir()
        ok = [t for t in THRESHOLDS if (grid[t]["false_row_rate"] or 0.0) <= max_false_rows]
        chosen = (
            ok[0]
            if ok
            else max(
                THRESHOLDS,
                key=lambda t: (grid[t]["recall"] or 0.0) - 3 * (grid[t]["false_row_rate"] or 0.0),
            )
        )
        if agree_grid:  # a CRF span a rule span (or a Korean cue) speaks for has its own threshold
            pairs = list(agree_grid)
            feasible = [
                p for p in pairs if (agree_grid[p]["false_row_rate"] or 0.0) <= max_false_rows
            ]
            best = (
                max(feasible, key=lambda p: (agree_grid[p]["recall"] or 0.0, p))
                if feasible
                else max(
                    pairs,
                    key=lambda p: (
                        (agree_grid[p]["recall"] or 0.0)
                        - 3 * (agree_grid[p]["false_row_rate"] or 0.0)
                    ),
                )
            )
            chosen = best[0]
            card.setdefault("thresholds_agree", {})[lang] = best[1]
            card.setdefault("dev_agree", {})[lang] = {
                f"{a}/{b}": {
                    k: agree_grid[(a, b)][k] for k in ("recall", "false_row_rate", "span_precision")
                }
                for a, b in pairs
            }
        card["thresholds"][lang] = chosen
        card["dev"][lang] = {
            str(t): {k: grid[t][k] for k in ("recall", "false_row_rate", "span_precision")}
            for t in THRESHOLDS
        }
        path = out / f"{lang}.crfsuite"
        card["train_seconds"][lang] = round(_fit(train, lang, path, params, gaz), 1)
        card["files"][lang] = {
            "file": path.name,
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "bytes": path.stat().st_size,
            "train_sentences": len(train) - len(extra),
            "train_person_free_passages": len(extra),
            "heldout_sentences": len(held),
        }
        if gaz:
            gaz_path = out / JA_GAZETTEER
            card["files"][lang]["gazetteer"] = {
                "file": JA_GAZETTEER,
                "sha256": hashlib.sha256(gaz_path.read_bytes()).hexdigest(),
                "bytes": gaz_path.stat().st_size,
                "strings": len(gaz),
                "source": json.loads(gaz_path.read_text(encoding="utf-8")).get("source"),
                "licence": json.loads(gaz_path.read_text(encoding="utf-8")).get("licence"),
            }
        _model.cache_clear()
        ko_gazetteer.cache_clear()
        card["heldout"][lang] = mention_metrics(
            held, lambda x, lang=lang, t=chosen: tagger_spans(x, lang, str(out), cut=t) or []
        )
        agree = card.get("thresholds_agree", {}).get(lang)
        card["heldout_pipeline"][lang] = mention_metrics(
            held,
            lambda x, lang=lang, t=chosen, a=agree: crf_pipeline_spans(
                x, lang, str(out), cut=t, cut_agree=a
            ),
        )
        card["baseline_rules"][lang] = mention_metrics(
            held, lambda x, lang=lang: (analyse(x, lang) or ([], []))[1]
        )
    _keep_other_languages(out / "model_card.json", card, langs)
    (out / "model_card.json").write_text(
        json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    threshold.cache_clear()
    agree_threshold.cache_clear()
    return card


def _keep_other_languages(path: Path, card: dict[str, Any], langs: tuple[str, ...]) -> None:
    """Carry the entries of languages not trained now (the English CRF's, trained by
    :func:`spcl.extract.names.train_english.train_english`) from the card at ``path`` into ``card``,
    so that retraining ja/ko keeps the shipped English model's card."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for key, value in old.items():
        if key.endswith("_en"):
            card.setdefault(key, value)
        elif isinstance(value, dict) and isinstance(card.get(key, {}), dict):
            kept = {k: v for k, v in value.items() if k in ("en",) and k not in langs}
            if kept:
                card.setdefault(key, {}).update(kept)
