"""``spcl eval``: evaluation commands.

spcl eval masking --gold data/synth-pii/test.jsonl --pred pred.jsonl --output metrics.json spcl eval
detect --gold data/detect-eval/gold.jsonl --gold data/detect-eval/prose.jsonl --output detect.json
spcl eval screen --model models/screen-default --data test.jsonl --data data/detect-eval/prose.jsonl

``eval`` is a group others extend: write ``register_<name>(eval_sub)`` (it receives the ``eval``
sub-parsers object and adds one subcommand) and add it to ``EVAL_COMMANDS`` below.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from spcl.config import DetectSettings
from spcl.errors import RunFailed, UsageError
from spcl.evaluate.detect import DetectEvalError, evaluate_detect, read_gold
from spcl.evaluate.detect import format_summary as detect_summary
from spcl.evaluate.masking import EvalError, evaluate_masking
from spcl.evaluate.names import evaluate_names, format_table, read_names_set
from spcl.evaluate.screen import ScreenEvalError, evaluate_screen, read_eval_records
from spcl.evaluate.screen import format_summary as screen_summary
from spcl.extract.backends import ATTACK_BACKENDS, RULES_BACKEND
from spcl.extract.backends.registry import make_chat
from spcl.generalize.job import iter_generalized
from spcl.generalize.reidentify import reidentify
from spcl.generalize.utility import LMScorer, score_output
from spcl.mask.vault import VaultError, open_vault
from spcl.screen.model import ScreenModelError, load_screen


def _refuse_input_as_output(out: str | None, inputs: Iterable[str]) -> None:
    """Raise :class:`UsageError` when ``--output`` names one of the input files: writing the report
    there would overwrite the data it was computed from."""
    if out and any(Path(out).resolve() == Path(p).resolve() for p in inputs):
        raise UsageError(f"--output {out} is one of the inputs; write the report elsewhere")


def _write_report(out: str, text: str) -> None:
    """Write ``text`` and a newline to ``out``, creating its folder."""
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(text + "\n", encoding="utf-8")


def _masking(args: argparse.Namespace) -> int:
    _refuse_input_as_output(args.out, [args.gold, args.pred])
    types = (
        tuple(t.strip().upper() for t in args.types.split(",") if t.strip()) if args.types else None
    )
    try:
        metrics = (
            evaluate_masking(args.gold, args.pred, types)
            if types
            else evaluate_masking(args.gold, args.pred)
        )
    except (EvalError, OSError) as err:
        raise UsageError(str(err)) from err
    text = json.dumps(metrics, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        _write_report(args.out, text)
    return 0


def register_masking(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl eval masking``."""
    p = sub.add_parser(
        "masking",
        help="extraction + masking metrics of predictions against gold (P/R/F1, leaks, round trip)",
        description=(
            "PRED.jsonl: {id, raw} or {id, candidates: [[TYPE, VALUE], ...], parse_success}; "
            "see spcl.evaluate.masking."
        ),
    )
    p.add_argument("--gold", required=True, metavar="GOLD.jsonl")
    p.add_argument("--pred", required=True, metavar="PRED.jsonl")
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        metavar="FILE.json",
        help="also write the metrics here",
    )
    p.add_argument(
        "--types", default=None, help="allowed types, comma-separated (default: all nine)"
    )
    p.set_defaults(func=_masking)


def _names(args: argparse.Namespace) -> int:
    import os

    _refuse_input_as_output(args.out, [args.set])
    if args.no_ner:
        os.environ["SPCL_NAMES_NER"] = "off"
    if args.no_tagger:
        os.environ["SPCL_NAMES_TAGGER"] = "off"
    langs = [x.strip() for x in args.lang.split(",") if x.strip()] if args.lang else None
    try:
        records = read_names_set(args.set, None if args.split == "all" else args.split, langs)
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(f"cannot read {args.set}: {type(err).__name__}") from err
    metrics = evaluate_names(records, args.predictor)
    print(format_table(metrics))
    if args.out:
        _write_report(args.out, json.dumps(metrics, indent=2))
    return 0


def register_names(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl eval names``."""
    p = sub.add_parser(
        "names",
        help=(
            "person-name recall / false rows / docs/s of the CPU name finders on real ja/ko"
            " sentences"
        ),
        description=(
            "SET.jsonl: {id, lang, source, split, text, persons: [[start, end], ...]} "
            "(data/names-eval, built by tools.datasets.names_set); see spcl.evaluate.names."
        ),
    )
    p.add_argument("--set", default="data/names-eval/names-eval.jsonl", metavar="SET.jsonl")
    p.add_argument(
        "--predictor",
        choices=(RULES_BACKEND, "finder"),
        default=RULES_BACKEND,
        help="rules: what the rules extractor's PERSON rows mask; finder: find_person_names spans",
    )
    p.add_argument(
        "--split",
        choices=("dev", "test", "train", "heldout", "all"),
        default="all",
        help="dev/test: data/names-eval's halves; train/heldout: names-gold-v1's (by id hash)",
    )
    p.add_argument(
        "--no-tagger",
        action="store_true",
        help="rule finders instead of the trained CRF (SPCL_NAMES_TAGGER=off): today's fallback",
    )
    p.add_argument("--lang", default=None, help="languages, comma-separated (default: all)")
    p.add_argument("--no-ner", action="store_true", help="rule finders only (SPCL_NAMES_NER=off)")
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        metavar="FILE.json",
        help="also write the metrics here",
    )
    p.set_defaults(func=_names)


def _detect(args: argparse.Namespace) -> int:
    from itertools import chain

    _refuse_input_as_output(args.out, args.gold)
    settings = DetectSettings(
        keep_invalid=args.keep_invalid, include_company_numbers=args.company_numbers
    )
    try:
        report = evaluate_detect(chain.from_iterable(read_gold(p) for p in args.gold), settings)
    except (DetectEvalError, OSError) as err:
        raise UsageError(str(err)) from err
    _print_and_write(report, detect_summary(report), args)
    return 0


def _print_and_write(report: Mapping[str, object], summary: str, args: argparse.Namespace) -> None:
    """Print the summary (the full JSON report with ``--json``) and write the JSON report to
    ``--output``."""
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text if args.json else summary)
    if args.out:
        _write_report(args.out, text)


def _add_report_arguments(p: argparse.ArgumentParser) -> None:
    """``--output`` and ``--json`` of a command that prints a summary of a JSON report."""
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        metavar="FILE.json",
        help="also write the full JSON report here",
    )
    p.add_argument(
        "--json", action="store_true", help="print the full JSON report instead of the summary"
    )


def register_detect(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl eval detect``."""
    p = sub.add_parser(
        "detect",
        help=(
            "rule detectors against gold spans: recall/precision by type and language, negatives,"
            " hits/MB"
        ),
        description=(
            "GOLD.jsonl: {id, lang, kind: gold|negative|prose, text, spans: [{type, start, end}], "
            "tags}; see spcl.evaluate.detect."
        ),
    )
    p.add_argument(
        "--gold", required=True, action="append", metavar="GOLD.jsonl", help="repeatable"
    )
    _add_report_arguments(p)
    p.add_argument(
        "--keep-invalid", action="store_true", help="report hits whose check digit fails too"
    )
    p.add_argument(
        "--company-numbers", action="store_true", help="report company representative numbers too"
    )
    p.set_defaults(func=_detect)


def _screen(args: argparse.Namespace) -> int:
    from itertools import chain

    _refuse_input_as_output(args.out, args.data)
    try:
        screen = load_screen(args.model)
        report = evaluate_screen(
            screen, chain.from_iterable(read_eval_records(p) for p in args.data)
        )
    except (ScreenEvalError, ScreenModelError, OSError) as err:
        raise UsageError(str(err)) from err
    _print_and_write(report, screen_summary(report), args)
    return 0


def register_screen(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl eval screen``."""
    p = sub.add_parser(
        "screen",
        help=(
            "a trained screen on held-out data: F1 / SCPI recall / NONE flagged by language, flag"
            " rate of unlabelled text"
        ),
        description=(
            "DATA.jsonl: {id, text, lang?, label?, source?, origin?}; rows with a label (SCPI,"
            " RELATED, NONE) are scored, rows without one give flag rates per language and origin;"
            " see spcl.evaluate.screen."
        ),
    )
    p.add_argument("--model", default="models/screen-default", metavar="DIR")
    p.add_argument(
        "--data", required=True, action="append", metavar="DATA.jsonl", help="repeatable"
    )
    _add_report_arguments(p)
    p.set_defaults(func=_screen)


def _utility(args: argparse.Namespace) -> int:
    try:
        vault = open_vault(args.vault)
        scorer = LMScorer(args.model, device=args.device)
    except (VaultError, OSError, RuntimeError) as err:
        raise RunFailed(str(err)) from err
    result = score_output(args.generalized, vault, scorer, limit=args.limit).as_dict()
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


def register_utility(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl eval utility``."""
    p = sub.add_parser(
        "utility",
        help="TPS-style utility of a generalize output with a local causal LM",
        description=(
            "Information-weighted share of each replaced span kept by its replacement"
            " (spcl.generalize.utility). Numbers only; the vault key comes from"
            " SPCL_VAULT_KEY(_FILE)."
        ),
    )
    p.add_argument("--generalized", required=True, help="an spcl generalize output folder")
    p.add_argument("--vault", required=True, help="the vault it wrote")
    p.add_argument(
        "--model", required=True, help="a local causal LM folder or .gguf file (transformers)"
    )
    p.add_argument("--device", default="cpu", help="cpu, cuda, auto (default cpu)")
    p.add_argument("--limit", type=int, default=0, help="score at most N documents (default all)")
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        metavar="FILE.json",
        help="also write the report here",
    )
    p.set_defaults(func=_utility)


def _reidentify(args: argparse.Namespace) -> int:
    try:
        vault = open_vault(args.vault)
        chat = make_chat(args.backend, model=args.model, endpoint=args.endpoint)
    except ValueError as err:  # VaultError and BackendUnavailable exit 1 (spcl.cli)
        raise UsageError(str(err)) from err
    # make_chat returns None only for the rules backend, which argparse excludes
    assert chat is not None
    rows = [
        r
        for n, r in enumerate(iter_generalized(args.generalized))
        if not args.limit or n < args.limit
    ]
    try:
        report = reidentify(
            rows,
            lambda r: vault.get(r["row_key"], writer=r["vault_file"]),
            chat,
            guesses=args.guesses,
            seed=args.seed,
        ).as_dict()
    finally:
        chat.close()
    print(json.dumps(report, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def register_reidentify(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl eval reidentify``."""
    p = sub.add_parser(
        "reidentify",
        help="re-identification check of a generalize output with an LLM attacker",
        description=(
            "Attack every replaced span of the final output (spcl.generalize.reidentify); "
            "counts only. The vault key comes from SPCL_VAULT_KEY(_FILE)."
        ),
    )
    p.add_argument("--generalized", required=True, help="an spcl generalize output folder")
    p.add_argument("--vault", required=True, help="the vault it wrote")
    # the server first
    p.add_argument("--backend", choices=ATTACK_BACKENDS, default=ATTACK_BACKENDS[0])
    p.add_argument("--model", required=True, help="the served model name, or a local model folder")
    p.add_argument("--endpoint", default=None, help="openai: the base URL ending in /v1")
    p.add_argument(
        "--guesses", type=int, default=5, help="guesses per span (default 5, as the attack)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0, help="attack at most N documents (default all)")
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        metavar="FILE.json",
        help="also write the report here",
    )
    p.set_defaults(func=_reidentify)


EVAL_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    register_masking,
    register_names,
    register_detect,
    register_screen,
    register_utility,
    register_reidentify,
]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``spcl eval`` group and every subcommand of ``EVAL_COMMANDS``."""
    parser = sub.add_parser(
        "eval",
        help="evaluate pipeline stages against gold data",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    esub = parser.add_subparsers(dest="eval_command", required=True, metavar="WHAT")
    for add in EVAL_COMMANDS:
        add(esub)
