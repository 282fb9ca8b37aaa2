"""``spcl train``: train a screen model artifact from labelled JSONL, with a cross-validation
report."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from spcl.config_models import job_config
from spcl.errors import UsageError
from spcl.manifest import MANIFEST_NAME, manifest_ref, sha256_file
from spcl.progress import Progress
from spcl.screen.crossval import cross_validate, cv_report
from spcl.screen.cv_files import write_cv_outputs
from spcl.screen.train import (
    Record,
    TrainSettings,
    fit_screen,
    lang_values,
    read_records,
    record_from_dict,
    too_few_positives,
)
from spcl.screen.train_options import (
    OOF_HELP,
    THREADS_HELP,
    TRAIN_HELP,
    add_kind_arguments,
    kind_command_parts,
    kind_settings,
)
from spcl.synth.screen_data import generate

log = logging.getLogger(__name__)

CLONE_EXAMPLE = (
    "spcl train --data data/weak-none/libreoffice-help.jsonl --synthetic 60 --cv-folds 0 "
    "--output models/try-screen"
)
"""A quick training example on data that ships, repeated in the missing-data message."""


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments shared by ``spcl train`` and ``jobs/train.py``."""
    parser.add_argument(
        "--data",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="labelled JSONL (id, text, lang, label, categories); repeatable",
    )
    parser.add_argument(
        "--output",
        "-o",
        dest="out",
        required=True,
        metavar="models/NAME",
        help="artifact folder to write",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of every random choice (default 0)"
    )
    parser.add_argument(
        "--synthetic",
        type=int,
        default=0,
        metavar="N",
        help=(
            "add the seeded synthetic ja/ko/en corpus, N records per label and language "
            "(NONE: 2N); used for training only, never for evaluation"
        ),
    )
    parser.add_argument(
        "--cv-folds",
        type=int,
        default=5,
        help="grouped stratified CV folds on the real records (0 = no CV report)",
    )
    parser.add_argument(
        "--target-recall",
        type=float,
        default=0.95,
        help="recall the union's thresholds must reach out-of-fold (default 0.95)",
    )
    parser.add_argument(
        "--threshold-labels",
        default="SCPI",
        help="labels whose recall the thresholds target (default SCPI)",
    )
    parser.add_argument(
        "--positive",
        default="SCPI,RELATED",
        help="labels that count as positive (default SCPI,RELATED)",
    )
    parser.add_argument(
        "--weak-weight",
        type=float,
        default=0.2,
        help="sample weight of weakly labelled rows (source 'weak:...'; default 0.2)",
    )
    parser.add_argument(
        "--per-lang-thresholds",
        default="",
        metavar="ja,ko",
        help=(
            "languages that get their own out-of-fold thresholds when they have enough real "
            "positives (default none: one set for all)"
        ),
    )
    parser.add_argument(
        "--global-threshold-langs",
        default="",
        metavar="ja,ko",
        help="languages whose positives tune the global thresholds (default all)",
    )
    parser.add_argument(
        "--lang-target-recall",
        default="",
        metavar="ko=0.97",
        help="own recall targets of per-language threshold languages (lang=target,...)",
    )
    parser.add_argument(
        "--lang-none-budget",
        default="",
        metavar="en=0.12",
        help=(
            "languages whose thresholds flag at most this share of their real NONE documents "
            "out-of-fold, with the most topic recall (lang=share,...)"
        ),
    )
    parser.add_argument(
        "--fewest-none-langs",
        default="",
        metavar="ko",
        help=(
            "per-language threshold languages whose pair is the one reaching their recall target "
            "out-of-fold with the fewest real NONE documents flagged (default: the union's "
            "common recall level)"
        ),
    )
    add_kind_arguments(parser)
    parser.add_argument(
        "--threshold-split",
        default="cv",
        choices=("cv", "source"),
        help=(
            "out-of-fold scores that choose the thresholds: cv (grouped stratified folds, "
            "default) or source (whole kinds of text held out per fold: thresholds chosen "
            "by what transfers to a kind of text the model has not seen)"
        ),
    )
    parser.add_argument(
        "--person-cues",
        action="store_true",
        help=(
            "add the person-cue columns: a topic word and a first-person, named or family cue in "
            "one sentence (spcl.screen.person_cue)"
        ),
    )
    parser.add_argument("--oof-out", default=None, metavar="FILE.jsonl", help=OOF_HELP)
    parser.add_argument("--threads", type=int, default=1, help=THREADS_HELP)
    parser.add_argument(
        "--mecab-dic",
        default="unidic-lite",
        metavar="DIC",
        help=(
            "Japanese word tokens (FeatureSettings.mecab_dic): unidic-lite (default), ipadic, "
            "none (SentencePiece) or chars (character uni/bigrams, no MeCab)"
        ),
    )


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl train``."""
    parser = sub.add_parser("train", help=TRAIN_HELP)
    add_train_arguments(parser)
    parser.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> int:
    """Train, cross-validate and save; prints a short JSON summary (metrics only, no text)."""
    missing = [d for d in args.data if not Path(d).is_file()]
    if missing:
        raise UsageError(
            f"data file not found: {', '.join(missing)} (the labelled sets that ship are under "
            "data/, e.g. data/scpi-real-v1/labelled.jsonl; a quick example on them: "
            f"{CLONE_EXAMPLE})"
        )
    try:
        settings = job_config(
            TrainSettings,
            cli={
                "seed": args.seed,
                "target_recall": args.target_recall,
                "positive_labels": _names(args.positive),
                "threshold_labels": _names(args.threshold_labels),
                "num_threads": args.threads,
                "weak_weight": args.weak_weight,
                "per_lang_thresholds": _names(args.per_lang_thresholds),
                "global_threshold_langs": _names(args.global_threshold_langs),
                "lang_target_recall": lang_values(args.lang_target_recall, "--lang-target-recall"),
                "lang_none_budget": lang_values(args.lang_none_budget, "--lang-none-budget"),
                "fewest_none_langs": _names(args.fewest_none_langs),
                **kind_settings(args),
                "threshold_split": getattr(args, "threshold_split", "cv"),
                "features": {
                    "mecab_dic": args.mecab_dic,
                    "person_cues": bool(getattr(args, "person_cues", False)),
                },
            },
        )
    except ValueError as exc:  # a bad --lang-* value, or a ConfigError naming the setting
        raise UsageError(str(exc)) from exc
    records: list[Record] = read_records(args.data)
    extra: list[Record] = []
    if args.synthetic > 0:
        extra = [record_from_dict(r) for r in generate(args.synthetic, seed=args.seed)]
    real = [r for r in records if not r.synthetic]
    extra = [r for r in records if r.synthetic] + extra
    warnings = too_few_positives(real, settings)
    for warning in warnings:
        print(f"spcl train: warning: {warning}", file=sys.stderr)
    cv_card = None
    out = Path(args.out)
    folds = args.cv_folds if args.cv_folds and args.cv_folds > 1 else 0
    # documents passed through model fits: every fit_screen makes threshold_folds out-of-fold fits
    # on ~(t-1)/t of its data and one final fit; CV runs one fit_screen per fold on ~(k-1)/k of the
    # real records plus extra, then the final screen on all (drawn on a TTY only, from the start)
    t = settings.threshold_folds
    per_screen = (t - 1) + 1
    cv_docs = (
        round(((len(real) * (folds - 1)) / folds + len(extra)) * folds * per_screen) if folds else 0
    )
    total = cv_docs + (len(real) + len(extra)) * per_screen
    with Progress("train", total=total, unit="docs fitted") as bar:
        bar.advance(0)
        if folds:
            t0 = time.perf_counter()
            cv = cross_validate(real, extra, settings, folds=folds, on_fit=bar.advance)
            cv_card = cv_report(cv)
            cv_card["folds"] = args.cv_folds
            cv_card["seconds"] = round(time.perf_counter() - t0, 1)
            out.mkdir(parents=True, exist_ok=True)
            write_cv_outputs(cv, cv_card, out)
        screen = fit_screen(real + extra, settings, on_fit=bar.advance)
    sources = [_data_source(p) for p in args.data]
    card_extra = {
        "training_data": sources,
        "synthetic": (
            {
                "generator": "spcl.synth.screen_data.generate",
                "n_per_label": args.synthetic,
                "seed": args.seed,
            }
            if args.synthetic > 0
            else None
        ),
        "trained_on": _trained_on(real, extra),
        "cv_metrics": cv_card,
        "rebuild": _rebuild_command(args),
        "training_warnings": warnings,
    }
    screen.save(out, card_extra)
    if getattr(args, "oof_out", None):
        _write_oof(Path(args.oof_out), real, screen.oof_scores)
    summary = {
        "out": str(out),
        "version": screen.version,
        "thresholds": screen.thresholds,
        "training_seconds": screen.card["training_seconds"],
        "cv_overall": cv_card["overall"] if cv_card else None,
    }
    print(json.dumps(summary, indent=2))
    return 0


def _write_oof(path: Path, real: list, oof: dict) -> None:
    """One JSON line per real training record: its out-of-fold scores and fold (never its text)."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, r in enumerate(real):
            fh.write(
                json.dumps(
                    {
                        "id": r.id,
                        "lang": r.lang,
                        "source": r.source,
                        "label": r.label,
                        "fold": int(oof["fold"][i]),
                        **{head: float(v[i]) for head, v in oof.items() if head != "fold"},
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )


def _names(text: str) -> tuple[str, ...]:
    """``"en, ko"`` → ``("en", "ko")``."""
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _data_source(path: str) -> dict[str, object]:
    """How the model card cites one training file: path, SHA-256, and the manifest of its dataset
    folder (written by ``spcl review to-train``, ``spcl synth`` …) when there is one."""
    source: dict[str, object] = {"path": str(path), "sha256": sha256_file(path)}
    folder = Path(path).parent
    if (folder / MANIFEST_NAME).is_file():
        source["manifest"] = manifest_ref(folder)
    return source


def _trained_on(real: list, extra: list) -> str:
    langs = sorted({r.lang for r in real})
    text = f"{len(real)} real labelled documents ({', '.join(langs)})"
    weak = [r for r in extra if r.source.startswith("weak:")]
    synthetic = len(extra) - len(weak)
    if weak:
        sources = ", ".join(sorted({r.source.removeprefix("weak:") for r in weak}))
        text += f" plus {len(weak)} weakly labelled real documents ({sources}; training only)"
    if synthetic:
        text += (
            f" plus {synthetic} synthetic augmentation documents (spcl.synth.screen_data; training"
            " only)"
        )
    return text


def _rebuild_command(args: argparse.Namespace) -> str:
    parts = ["spcl", "train"]
    for d in args.data:
        parts += ["--data", str(d)]
    parts += ["--output", str(args.out), "--seed", str(args.seed)]
    if args.synthetic:
        parts += ["--synthetic", str(args.synthetic)]
    if args.cv_folds != 5:
        parts += ["--cv-folds", str(args.cv_folds)]
    if args.target_recall != 0.95:
        parts += ["--target-recall", str(args.target_recall)]
    if args.positive != "SCPI,RELATED":
        parts += ["--positive", args.positive]
    if args.weak_weight != 0.2:
        parts += ["--weak-weight", str(args.weak_weight)]
    if args.threshold_labels != "SCPI":
        parts += ["--threshold-labels", args.threshold_labels]
    if args.per_lang_thresholds:
        parts += ["--per-lang-thresholds", args.per_lang_thresholds]
    if args.global_threshold_langs:
        parts += ["--global-threshold-langs", args.global_threshold_langs]
    if args.lang_target_recall:
        parts += ["--lang-target-recall", args.lang_target_recall]
    if args.lang_none_budget:
        parts += ["--lang-none-budget", args.lang_none_budget]
    if getattr(args, "fewest_none_langs", ""):
        parts += ["--fewest-none-langs", args.fewest_none_langs]
    parts += kind_command_parts(args)
    if getattr(args, "mecab_dic", "unidic-lite") != "unidic-lite":
        parts += ["--mecab-dic", args.mecab_dic]
    if getattr(args, "threshold_split", "cv") != "cv":
        parts += ["--threshold-split", args.threshold_split]
    if getattr(args, "person_cues", False):
        parts += ["--person-cues"]
    return " ".join(parts)
