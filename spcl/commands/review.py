"""``spcl review``: export samples for people, measure agreement, estimate error rates, make
training data.

spcl review export --input out/ --output review/batch-01 --n 500 --seed 7 --reviewers a,b
spcl review agree review/batch-01/reviewer-a.csv review/batch-01/reviewer-b.csv
spcl review adjudicate review/batch-01/reviewer-a.csv review/batch-01/reviewer-b.csv
spcl review report --input out/ --reviews review/batch-01/adjudicated.csv
spcl review to-train review/batch-01/adjudicated.csv --output data/train-extra --input out/
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spcl.annotate.disputed import rejected_sample
from spcl.errors import RunFailed
from spcl.manifest import MANIFEST_NAME
from spcl.review.export import check_export_arguments, export_sample
from spcl.review.labels import ReviewError
from spcl.review.sample import DIMENSIONS, SampleSpec, sample_dataset
from spcl.review.steps import (
    adjudicate_files,
    agree_files,
    distinct_reviewer_files,
    estimate_reviews,
    write_adjudicated,
    write_agreement,
    write_estimates,
)
from spcl.review.to_train import TRAIN_FILE, to_train
from spcl.spark import build_session
from spcl.spark.sample import sample_spark


def _csv_list(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


def _positive_int(value: str) -> int:
    """argparse type: an integer >= 1 (a one-line usage error otherwise)."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} is not at least 1")
    return number


def _draw_sample(
    input: str,
    spec: Any,
    *,
    what: str = "sample",
    engine: str = "python",
    master: str | None = None,
    allow_incomplete: bool = False,
) -> tuple[Any, Any]:
    """``(SamplePlan, table)`` of ``spec`` drawn from a filter output (plain Python or Spark), or
    from an ``spcl annotate`` output's disputed texts (``what="rejected"``)."""
    if what == "rejected":  # an 'spcl annotate' output: the texts the teachers disputed
        return rejected_sample(input, spec)
    if engine == "spark":
        spark = build_session(None, master, app_name="spcl-review-export")
        try:
            return sample_spark(spark, input, spec, allow_incomplete=allow_incomplete)
        finally:
            spark.stop()

    return sample_dataset(input, spec, allow_incomplete=allow_incomplete)


def _export(args: argparse.Namespace) -> int:
    strata = _csv_list(args.strata)
    strata = tuple("category" if s in ("top_category", "cat") else s for s in strata)
    try:
        spec = SampleSpec(
            n=args.n,
            seed=args.seed,
            dimensions=tuple(d for d in DIMENSIONS if d in strata),
            decisions=_csv_list(args.decisions),
            clean_share=args.clean_share,
            min_per_stratum=args.min_per_stratum,
            per_stratum=args.per_stratum,
            bucket_edges=tuple(float(x) for x in _csv_list(args.bucket_edges)),
        )
        if set(strata) - set(DIMENSIONS):
            raise ValueError(f"--strata takes {', '.join(DIMENSIONS)}")
        # every argument is checked before the input is read or anything is written (sample.csv
        # holds text)
        check_export_arguments(
            args.out,
            formats=_csv_list(args.format),
            reviewers=_csv_list(args.reviewers),
            force=args.force,
        )
        plan, table = _draw_sample(
            args.input,
            spec,
            what=args.what,
            engine=args.engine,
            master=args.master,
            allow_incomplete=args.allow_incomplete,
        )
        manifest = export_sample(
            table,
            plan,
            args.out,
            formats=_csv_list(args.format),
            redacted=args.redact,
            source=args.input,
            licence=args.licence,
            reviewers=_csv_list(args.reviewers),
            force=args.force,
        )
    except (ValueError, OSError, ReviewError) as err:
        raise RunFailed(str(err)) from err
    strata_used = sum(1 for k in plan.sizes.values() if k)
    print(
        f"exported {manifest['records']} documents from {strata_used} strata "
        f"(of {len(plan.populations)}) to {args.out}: {', '.join(sorted(manifest['files']))}"
    )
    return 0


def _agree(args: argparse.Namespace) -> int:
    try:
        for a, b in distinct_reviewer_files(args.files):
            print(
                f"warning: {a} and {b} are byte-identical: did each reviewer label their own copy?",
                file=sys.stderr,
            )
        cov, result = agree_files(args.files, allow_partial=args.allow_partial)
    except (ValueError, OSError, ReviewError) as err:
        raise RunFailed(str(err)) from err
    print(cov.line())
    out = Path(args.out) if args.out else Path(args.files[0]).parent / "agreement.json"
    write_agreement(result, out)
    print(f"{result.method} kappa = {result.kappa} on {result.items} documents: {result.verdict}")
    print(f"SCPI-vs-rest kappa = {result.kappa_scpi_vs_rest}; per category: {result.per_category}")
    print(f"labels {result.labels}; confusion (rows: earlier reviewer):")
    for lab, row in zip(result.labels, result.confusion, strict=True):
        print(f"  {lab:8s} {row}")
    print(
        f"{len(result.label_disagreements)} label / {len(result.category_disagreements)} category "
        f"disagreements; ids in {out}"
    )
    if args.fail_under is not None and (result.kappa is None or result.kappa < args.fail_under):
        raise RunFailed(f"kappa {result.kappa} is under --fail-under {args.fail_under}")
    return 0


def _adjudicate(args: argparse.Namespace) -> int:
    try:
        rows = adjudicate_files(args.files, policy=args.policy)
    except (ValueError, OSError, ReviewError) as err:
        raise RunFailed(str(err)) from err
    out = Path(args.out) if args.out else Path(args.files[0]).parent / "adjudicated.csv"
    write_adjudicated(rows, out)
    open_rows = sum(1 for r in rows if not r["label"])
    print(f"wrote {len(rows)} rows to {out}; {open_rows} left for an adjudicator (empty label)")
    return 0


def _report(args: argparse.Namespace) -> int:
    reviews_path = Path(args.reviews)
    plan_path = Path(args.plan) if args.plan else reviews_path.parent / "plan.json"
    try:
        result, reviews = estimate_reviews(
            args.input, reviews_path, plan_path, _csv_list(args.positive)
        )
    except (ValueError, OSError, ReviewError) as err:
        raise RunFailed(str(err)) from err
    out = Path(args.out) if args.out else reviews_path.parent / "report"
    write_estimates(
        result, reviews, out, input=args.input, reviews_path=reviews_path, plan_path=plan_path
    )
    for block, name in (
        (result["precision_flagged"], "precision of flagged"),
        (result["miss_rate_clean"], "miss rate of clean"),
    ):
        r = block["overall"]
        if r["rate"] is None:
            print(f"{name}: no reviewed documents")
            continue
        print(
            f"{name}: {r['rate']:.3f} [{r['low']:.3f}, {r['high']:.3f}] from {r['reviewed']}"
            f" reviewed; ≈ {r['count']:.0f} [{r['count_low']:.0f}, {r['count_high']:.0f}] of"
            f" {r['population']} docs"
        )
    print(f"positive: {result['positive_rule']}")
    if result.get("rule_flagged_unanswered"):
        print(
            f"note: {result['rule_flagged_unanswered']} rule-flagged documents labelled NONE have"
            " no pii answer and count as false positives (fill the pii column: yes/no)"
        )
    if result["ids_not_in_output"]:
        print(
            f"warning: {len(result['ids_not_in_output'])} reviewed ids not in the output",
            file=sys.stderr,
        )
    print(f"wrote {out / 'estimates.json'}, {out / 'estimates.png'}, {out / MANIFEST_NAME}")
    return 0


def _to_train(args: argparse.Namespace) -> int:
    agreement_path = (
        Path(args.agreement) if args.agreement else Path(args.adjudicated).parent / "agreement.json"
    )
    try:
        agreement = json.loads(agreement_path.read_text()) if agreement_path.is_file() else None
        manifest = to_train(
            args.adjudicated,
            args.out,
            input_dir=args.input,
            source=args.source,
            licence=args.licence,
            agreement=agreement,
        )
    except (ValueError, OSError, ReviewError) as err:
        raise RunFailed(str(err)) from err
    print(
        f"wrote {manifest['records']} records to {Path(args.out) / TRAIN_FILE} "
        f"({manifest['skipped_unlabelled']} unlabelled skipped); labels {manifest['labels']}"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl review`` with its subcommands export, agree, adjudicate, report, to-train."""
    parser = sub.add_parser(
        "review",
        help="sampled manual review: export, agree, report, to-train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rsub = parser.add_subparsers(dest="review_command", required=True, metavar="STEP")
    _add_export(rsub)
    _add_agree(rsub)
    _add_adjudicate(rsub)
    _add_report(rsub)
    _add_to_train(rsub)


def _add_export(rsub: argparse._SubParsersAction) -> None:
    """``spcl review export``: draw a stratified hashed-id sample and write it for reviewers."""
    p = rsub.add_parser(
        "export", help="draw a stratified hashed-id sample and write it for reviewers"
    )
    p.add_argument(
        "--input", "-i", required=True, help="filter output folder (decision=*/ parquet)"
    )
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        required=True,
        help="new folder for the review batch (mode 0700)",
    )
    p.add_argument("--n", type=_positive_int, default=500, help="documents in total (default 500)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument(
        "--strata",
        default="decision,lang,category,bucket",
        help="stratum dimensions from decision,lang,category,bucket (default: all)",
    )
    p.add_argument(
        "--decisions", default="clean,flagged", help="decisions to sample (default clean,flagged)"
    )
    p.add_argument(
        "--clean-share", type=float, default=0.25, help="share of n drawn from clean (default 0.25)"
    )
    p.add_argument(
        "--min-per-stratum", type=int, default=5, help="floor per stratum before proportional split"
    )
    p.add_argument(
        "--per-stratum",
        type=_positive_int,
        default=None,
        help="fixed size per stratum (ignores --n)",
    )
    p.add_argument(
        "--bucket-edges", default="0.5,0.8,0.95", help="score bucket edges of the first screen head"
    )
    p.add_argument(
        "--format", default="csv,jsonl,labelstudio,html", help="any of csv,jsonl,labelstudio,html"
    )
    p.add_argument(
        "--redact", action="store_true", help="export text with rule hits replaced by [TYPE]"
    )
    p.add_argument(
        "--reviewers", default="", help="names: write reviewer-NAME.csv for each (e.g. a,b)"
    )
    p.add_argument(
        "--licence", default=None, help="licence for the manifest (default: the input's)"
    )
    p.add_argument(
        "--engine",
        choices=("python", "spark"),
        default="python",
        help="python (default) or spark for outputs that do not fit one machine",
    )
    p.add_argument(
        "--master", default=None, help="Spark master for --engine spark (default local[*])"
    )
    p.add_argument("--force", action="store_true", help="overwrite a non-empty --output folder")
    p.add_argument(
        "--what",
        choices=("sample", "rejected"),
        default="sample",
        help=(
            "sample: a filter output (default); rejected: an 'spcl annotate' output's disputed"
            " texts"
        ),
    )
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="read an output whose run did not finish (no stats.json/manifest.json)",
    )
    p.set_defaults(func=_export)


def _add_agree(rsub: argparse._SubParsersAction) -> None:
    """``spcl review agree``: kappa, per category, confusion and disagreements of reviewer files."""
    p = rsub.add_parser(
        "agree", help="Cohen's / Fleiss' kappa, per category, confusion, disagreements"
    )
    p.add_argument(
        "files", nargs="+", help="two or more reviewer files (.csv, .jsonl, Label Studio .json)"
    )
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        help="agreement JSON (default: agreement.json beside the first)",
    )
    p.add_argument("--fail-under", type=float, default=None, help="exit 1 when kappa is below this")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="measure on the documents every reviewer labelled when some are left out",
    )
    p.set_defaults(func=_agree)


def _add_adjudicate(rsub: argparse._SubParsersAction) -> None:
    """``spcl review adjudicate``: merge reviewer files, disagreements left for an adjudicator."""
    p = rsub.add_parser(
        "adjudicate", help="merge reviewer files; disagreements left for an adjudicator"
    )
    p.add_argument("files", nargs="+", help="two or more reviewer files")
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        help="output CSV (default: adjudicated.csv beside the first)",
    )
    p.add_argument(
        "--policy",
        choices=("blank", "sensitive"),
        default="blank",
        help=(
            "blank: leave disagreements empty; sensitive: SCPI > RELATED > NONE, union of"
            " categories"
        ),
    )
    p.set_defaults(func=_adjudicate)


def _add_report(rsub: argparse._SubParsersAction) -> None:
    """``spcl review report``: precision / miss rate with Wilson intervals, scaled to
    ``stats.json``."""
    p = rsub.add_parser(
        "report", help="precision / miss rate with Wilson intervals, scaled to stats.json"
    )
    p.add_argument(
        "--input", "-i", required=True, help="the filter output folder the sample came from"
    )
    p.add_argument("--reviews", required=True, help="adjudicated review file")
    p.add_argument(
        "--plan", default=None, help="plan.json of the export (default: beside --reviews)"
    )
    p.add_argument(
        "--positive",
        default="auto",
        help=(
            "labels counted as sensitive, e.g. SCPI or SCPI,RELATED; default auto: follow what"
            " flagged the document (SCPI/RELATED for the screen; for a rule, the reviewer's pii=yes"
            " confirms the value)"
        ),
    )
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        default=None,
        help="report folder (default: report/ beside --reviews)",
    )
    p.set_defaults(func=_report)


def _add_to_train(rsub: argparse._SubParsersAction) -> None:
    """``spcl review to-train``: adjudicated reviews to training JSONL with provenance."""
    p = rsub.add_parser("to-train", help="adjudicated reviews -> training JSONL with provenance")
    p.add_argument("adjudicated", help="adjudicated review file")
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        required=True,
        help="output folder (train.jsonl + manifest.json)",
    )
    p.add_argument(
        "--input",
        "-i",
        default=None,
        help="filter output to take original text from (redacted exports)",
    )
    p.add_argument(
        "--source", default="spcl-review", help="value of the 'source' field (default spcl-review)"
    )
    p.add_argument("--licence", default=None, help="licence for the manifest")
    p.add_argument("--agreement", default=None, help="agreement.json (default: beside the file)")
    p.set_defaults(func=_to_train)
