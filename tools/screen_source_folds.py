"""How a screen recipe transfers to kinds of text it has not seen, from one ``spcl train --oof-out``
run.

With ``--threshold-split source`` the out-of-fold scores that ``spcl train`` writes come from models
that never saw the record's source group (whole kinds of text are held out per fold). This tool
re-chooses the recipe's thresholds on the other folds only (cross-fitted: the fold being scored
tunes nothing) and reports, per language and per source group: SCPI recall, NONE flagged, topic F1 —
the leave-sources-out numbers — beside the same numbers of a ``--before`` model scored directly on
the labelled files (honest only for sources that model was not trained on). Also the flag rate of
ordinary technical text per language, the flag rate of unlabelled passages re-weighted to each
source's natural topic-keyword rate (the share of a crawl sent to the LLM stage) and one decision
line per record (``--flags-out``: id, fold, scores, flag; no text) that other stages can reuse.
Counts and rates only.

    python tools/screen_source_folds.py --oof oof.jsonl --model models/screen-default \\
        --labelled v1.jsonl --labelled v2.jsonl --labelled v3.jsonl --before old-model \\
        --output report.json
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from spcl.evaluate.screen import LLM_TOKENS_PER_DOC
from spcl.screen import load_screen
from spcl.screen.crossval import flag_metrics
from spcl.screen.features import FeatureSettings
from spcl.screen.train import Record, TrainSettings, choose_thresholds, read_records, source_group

NATURAL_KEYWORD_RATE = {
    "en:20news": 0.31,
    "ja:real-persona-chat": 0.12,
    "ko:chatbot-qa": 0.04,
    "ko:nsmc": 0.08,
}
"""Share of a source's passages that match the broad topic-keyword list (the unlabelled set's
README)."""


def settings_of(card: dict[str, Any]) -> TrainSettings:
    """The threshold rules of a trained model (its card's ``train_settings``)."""
    t = dict(card["train_settings"])
    tuples = (
        "positive_labels",
        "threshold_labels",
        "per_lang_thresholds",
        "global_threshold_langs",
        "fewest_none_langs",
        "lang_svc_only",
    )
    kw: dict[str, Any] = {k: tuple(t[k]) for k in tuples if k in t}
    for k in ("lang_target_recall", "lang_none_budget"):
        kw[k] = tuple(sorted((t.get(k) or {}).items()))
    for k in ("target_recall", "threshold_mode"):
        kw[k] = t[k]
    return TrainSettings(features=FeatureSettings(), **kw)


def crossfit_flags(rows: list[dict[str, Any]], settings: TrainSettings) -> np.ndarray:
    """Union flags of every row with thresholds chosen on the other folds' out-of-fold scores."""
    lg = np.array([r["lgbm"] for r in rows], np.float32)
    svc = np.array([r["svc"] for r in rows], np.float32)
    fold = np.array([r["fold"] for r in rows])
    labels = np.array([r["label"] for r in rows])
    langs = np.array([r["lang"] for r in rows], dtype=object)
    y = np.isin(labels, settings.positive_labels)
    target = np.isin(labels, settings.threshold_labels)
    flag = np.zeros(len(rows), bool)
    for k in sorted(set(fold.tolist())):
        tr, te = fold != k, fold == k
        g_l, g_s, per_lang = choose_thresholds(
            lg[tr], svc[tr], target[tr], y[tr], np.ones(int(tr.sum()), bool), langs[tr], settings
        )
        t_l = np.array([per_lang.get(x, {"lgbm": g_l})["lgbm"] for x in langs[te]], np.float32)
        t_s = np.array([per_lang.get(x, {"svc": g_s})["svc"] for x in langs[te]], np.float32)
        flag[te] = (lg[te] >= t_l) | (svc[te] >= t_s)
    return flag


def table(
    flag: np.ndarray, labels: np.ndarray, langs: np.ndarray, groups: np.ndarray
) -> dict[str, Any]:
    """flag_metrics per language (``lang:*``) and per source group."""
    out: dict[str, Any] = {}
    for lang in sorted(set(langs.tolist())):
        m = langs == lang
        out[f"{lang}:*"] = flag_metrics(flag[m], labels[m])
        for g in sorted(set(groups[m].tolist())):
            out[g] = flag_metrics(flag[groups == g], labels[groups == g])
    out["*"] = flag_metrics(flag, labels)
    return out


def predict(screen: Any, texts: list[str], langs: list[str]) -> np.ndarray:
    """Union flags in batches of 512."""
    parts = [
        screen.predict(texts[i : i + 512], langs[i : i + 512]).flag
        for i in range(0, len(texts), 512)
    ]
    return np.concatenate(parts) if parts else np.zeros(0, bool)


def jsonl(path: str) -> list[dict[str, Any]]:
    """Rows of a JSONL file."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def crawl_share(screen: Any, unlabelled: list[dict[str, Any]]) -> dict[str, Any]:
    """Flag rate of unlabelled passages with and without a keyword hit, re-weighted to the
    natural rate."""
    flag = predict(screen, [r["text"] for r in unlabelled], [r["lang"] for r in unlabelled])
    cells: dict[tuple[str, bool], list[int]] = defaultdict(lambda: [0, 0])
    for r, f in zip(unlabelled, flag.tolist(), strict=True):
        g = source_group(Record(id="", text="", lang=r["lang"], label="NONE", source=r["source"]))
        cells[(g, bool(r.get("keyword_hit")))][0] += 1
        cells[(g, bool(r.get("keyword_hit")))][1] += int(f)
    out: dict[str, Any] = {}
    for g in sorted({k[0] for k in cells}):
        hit, miss = cells[(g, True)], cells[(g, False)]
        r_hit, r_miss = hit[1] / max(hit[0], 1), miss[1] / max(miss[0], 1)
        p = NATURAL_KEYWORD_RATE.get(g)
        share = None if p is None else round(p * r_hit + (1 - p) * r_miss, 4)
        out[g] = {
            "keyword_hit_flag_rate": round(r_hit, 4),
            "no_hit_flag_rate": round(r_miss, 4),
            "n": hit[0] + miss[0],
            "natural_keyword_rate": p,
            "crawl_share_flagged": share,
            "llm_tokens_per_1m_docs": (
                None if share is None else round(share * 1e6 * LLM_TOKENS_PER_DOC)
            ),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the transfer report (see the module docstring)."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--oof", required=True, help="spcl train --oof-out file")
    ap.add_argument("--model", required=True, help="the model that run saved")
    ap.add_argument(
        "--labelled", action="append", default=[], help="the real labelled files it trained on"
    )
    ap.add_argument(
        "--before", default=None, help="a model to score directly on the labelled files"
    )
    ap.add_argument("--technical", default="data/weak-technical/eval.jsonl")
    ap.add_argument("--unlabelled", default=None, help="unlabelled passages with keyword_hit")
    ap.add_argument("--flags-out", default=None)
    ap.add_argument("--output", "-o", dest="out", required=True)
    args = ap.parse_args(argv)
    model = load_screen(args.model)
    settings = settings_of(model.card)
    rows = jsonl(args.oof)
    labels = np.array([r["label"] for r in rows])
    langs = np.array([r["lang"] for r in rows], dtype=object)
    groups = np.array(
        [
            source_group(
                Record(id="", text="", lang=r["lang"], label=r["label"], source=r["source"])
            )
            for r in rows
        ],
        dtype=object,
    )
    flag = crossfit_flags(rows, settings)
    report: dict[str, Any] = {
        "model": model.version,
        "threshold_split": model.card["train_settings"].get("threshold_split", "cv"),
        "source_folds_crossfit": table(flag, labels, langs, groups),
        "folds": {
            g: sorted({r["fold"] for r, gg in zip(rows, groups, strict=True) if gg == g})
            for g in sorted(set(groups.tolist()))
        },
    }
    if args.labelled:
        recs = read_records(args.labelled)
        r_langs = np.array([r.lang for r in recs], dtype=object)
        r_labels = np.array([r.label for r in recs])
        r_groups = np.array([source_group(r) for r in recs], dtype=object)
        for name, path in (("after_in_sample", args.model), ("before_direct", args.before)):
            if path:
                f = predict(load_screen(path), [r.text for r in recs], [r.lang for r in recs])
                report[name] = table(f, r_labels, r_langs, r_groups)
    tech = jsonl(args.technical) if args.technical and Path(args.technical).is_file() else []
    if tech:
        report["technical_flag_rate"] = {}
        for name, path in (("after", args.model), ("before", args.before)):
            if path:
                f = predict(load_screen(path), [r["text"] for r in tech], [r["lang"] for r in tech])
                report["technical_flag_rate"][name] = {
                    lang: round(float(f[np.array([r["lang"] == lang for r in tech])].mean()), 4)
                    for lang in sorted({r["lang"] for r in tech})
                }
    if args.unlabelled:
        unl = jsonl(args.unlabelled)
        report["crawl_share"] = {"after": crawl_share(model, unl)}
        if args.before:
            report["crawl_share"]["before"] = crawl_share(load_screen(args.before), unl)
    if args.flags_out:
        with open(args.flags_out, "w", encoding="utf-8") as fh:
            for r, g, f in zip(rows, groups.tolist(), flag.tolist(), strict=True):
                fh.write(
                    json.dumps(
                        {
                            "id": r["id"],
                            "lang": r["lang"],
                            "group": g,
                            "label": r["label"],
                            "fold": r["fold"],
                            "lgbm": r["lgbm"],
                            "svc": r["svc"],
                            "crossfit_flag": f,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
    Path(args.out).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
