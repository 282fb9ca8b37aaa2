"""``spcl annotate``: label a crawl sample with two or more teacher LLMs, keep what they agree on.

    spcl annotate --input sample/ --output data/annotated/ \\
        --teacher openai:swallow-8b@http://gpu-a:8000/v1 \\
        --teacher openai:gemma-2-9b@http://gpu-b:8000/v1 \\
        [--verifier openai:gpt-oss-120b@http://gpu-c:8000/v1] [--min-confidence 0.8] \\
        [--candidates person|all] [--positive-share 0.10] [--seed 0] [--engine spark]
    spcl annotate ... --teacher vllm:/models/swallow-8b \\
        --teacher vllm:/models/gemma-2-9b                            # in-process, GPU

Outputs in --output: labelled.jsonl (for spcl train), rejected.jsonl (for spcl review export --what
rejected), dropped.jsonl, pending.jsonl, report.json, agreement.png, manifest.json. A rerun with the
same --output resumes and asks again for the pending records. Exit codes: 0 done, 1 could not run or
lost a record, 2 bad usage, 3 records left pending after transient backend failures.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from spcl.annotate import job as annotate_job
from spcl.annotate.candidates import CANDIDATE_MODES
from spcl.annotate.job import AnnotateConfig
from spcl.annotate.teachers import parse_teacher
from spcl.config_models import job_config
from spcl.errors import Pending, RunFailed, UsageError


def add_annotate_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments shared by ``spcl annotate`` and ``jobs/annotate.py``."""
    parser.add_argument(
        "--input", "-i", required=True, help="JSONL/Parquet file or folder (any filter output)"
    )
    parser.add_argument(
        "--output",
        "-o",
        dest="out",
        required=True,
        help="output folder (labelled.jsonl, rejected.jsonl, ...)",
    )
    parser.add_argument(
        "--teacher",
        action="append",
        required=True,
        metavar="BACKEND:MODEL[@ENDPOINT]",
        help="a teacher (openai, vllm, transformers); give two or more",
    )
    parser.add_argument(
        "--verifier",
        default=None,
        metavar="BACKEND:MODEL[@ENDPOINT]",
        help="a stronger model that re-labels the kept texts; its disagreements are rejected",
    )
    parser.add_argument(
        "--min-confidence", type=float, default=0.8, help="every teacher's confidence (default 0.8)"
    )
    parser.add_argument(
        "--candidates",
        choices=CANDIDATE_MODES,
        default="person",
        help="person: only texts that mention a person (default); all: every text",
    )
    parser.add_argument(
        "--positive-share",
        type=float,
        default=None,
        help="down-sample NONE by hashed id until SCPI is this share (e.g. 0.10)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the hashed-id balance (default 0)"
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        default=6000,
        help="longer texts are not sent to the teachers (dropped as too_long; default 6000)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=32, help="documents per teacher call (default 32)"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=256,
        help="generated tokens per answer, thinking included (default 256)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="openai: requests in flight per teacher"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="openai: seconds per request (default 120)"
    )
    parser.add_argument(
        "--retries", type=int, default=3, help="openai: retries per request (default 3)"
    )
    parser.add_argument("--device", default="auto", help="transformers: cpu, cuda, auto (default)")
    parser.add_argument(
        "--tensor-parallel-size", type=int, default=1, help="vllm: GPUs per model (default 1)"
    )
    parser.add_argument(
        "--engine",
        choices=("python", "spark"),
        default="python",
        help="python (default, this process) or spark (one task per input file)",
    )
    parser.add_argument(
        "--master", default=None, help="Spark master (engine spark; default local[*])"
    )
    # jobs/annotate.py passes it: under spark-submit the submitted master is kept unless --master is
    # given
    parser.add_argument("--submitted", action="store_true", help=argparse.SUPPRESS)


def config_from_args(args: argparse.Namespace) -> Any:
    """An ``AnnotateConfig`` from parsed arguments (``ValueError`` on a bad teacher spec or
    threshold)."""

    options = {
        "max_tokens": args.max_tokens,
        "concurrency": args.concurrency,
        "timeout_s": args.timeout,
        "retries": args.retries,
        "device": args.device,
        "batch_size": args.batch_size,
        "tensor_parallel_size": args.tensor_parallel_size,
    }
    return job_config(
        AnnotateConfig,
        cli=dict(
            input=args.input,
            output=args.out,
            teachers=[parse_teacher(t) for t in args.teacher],
            verifier=parse_teacher(args.verifier) if args.verifier else None,
            min_confidence=args.min_confidence,
            candidates=args.candidates,
            positive_share=args.positive_share,
            seed=args.seed,
            batch_size=args.batch_size,
            max_chars=args.max_chars,
            options=options,
        ),
    )


def run_from_args(args: argparse.Namespace) -> int:
    """Run the job; exit 0 ok, 1 the job could not run or lost a record, 2 bad usage, 3 records left
    pending after transient backend failures (rerun the same command to ask again for exactly
    those)."""
    try:
        cfg = config_from_args(args)
    except ValueError as err:
        raise UsageError(str(err)) from err
    # UnsafeOutput (--output inside the input or a filter output) exits 2; BackendUnavailable,
    # AnnotateError and JavaMissing exit 1 (spcl.cli)
    # called through the module, so that a test (or a wrapper) can replace a runner
    report = (
        annotate_job.run_annotate_spark(cfg, args.master, args.submitted)
        if args.engine == "spark"
        else annotate_job.run_annotate(cfg)
    )
    summary = {
        "counts": report["counts"],
        "rejected_reasons": report["rejected_reasons"],
        "label_kappa": {pair: v["label_kappa"] for pair, v in report["kappa"].items()},
        "parse_failure_rate": {
            t: s["parse_failure_rate"] for t, s in report["teacher_stats"].items()
        },
        "pending_reasons": report["pending_reasons"],
        "reconciliation_ok": report["reconciliation"]["ok"],
        "run": report["run"],
    }
    print(json.dumps(summary, indent=2))
    if not report["reconciliation"]["ok"]:
        raise RunFailed("reconciliation failed: input records != outputs (see the run report)")
    if report["counts"]["pending"]:
        raise Pending(
            f"{report['counts']['pending']} record(s) left pending (a teacher failed transiently:"
            " timeouts, HTTP 429/5xx, resets); rerun the same command to ask again for exactly"
            " those (pending.jsonl)"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl annotate``."""
    parser = sub.add_parser(
        "annotate",
        help="label a crawl sample with teacher LLMs (agreement filter)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_annotate_arguments(parser)
    parser.set_defaults(func=run_from_args)
