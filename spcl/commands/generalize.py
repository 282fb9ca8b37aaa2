"""``spcl generalize``: replace sensitive spans with the most specific true generalization an LLM
attacker cannot invert (INTACT-style), else a ``[TYPE_n]`` label (its benchmark: ``spcl bench
generalize``).

    spcl generalize --input out/decision=flagged --output gen/ --vault vault/ --backend rules
    spcl generalize ... --backend openai --endpoint http://gpu-node:8000/v1 --model NAME \\
        --candidates 5 --guesses 5
    spcl generalize ... --backend transformers --model /models/qwen3-8b --device cuda
    spcl bench generalize --backend openai --endpoint http://gpu-node:8000/v1 --model NAME --docs 20

The vault key comes from ``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``. A rerun with the same
``--output`` resumes and retries the documents that failed transiently. Exit codes: 0 done, 1 could
not run or not reconciled, 2 bad usage, 3 transient failures left. ``bench generalize`` PRINTS
VALUES (candidates and guesses): run it on synthetic data only.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from spcl.config import GeneralizeSection, load_settings
from spcl.config_models import job_config
from spcl.entity_types import DEFAULT_TYPES
from spcl.errors import Pending, RunFailed, UsageError
from spcl.extract.backends import (
    DEFAULT_BACKEND,
    GENERALIZE_BACKENDS,
    RULES_BACKEND,
    select_options,
)
from spcl.generalize import job as generalize_job
from spcl.generalize.job import GeneralizeJobConfig

BACKENDS = GENERALIZE_BACKENDS


def add_generalize_arguments(parser: argparse.ArgumentParser, *, job: bool = True) -> None:
    """The arguments shared by ``spcl generalize``, ``jobs/generalize.py`` and (``job=False``)
    the benchmark."""
    if job:
        parser.add_argument(
            "--input", "-i", required=True, help="flagged Parquet: a file or a folder (recursive)"
        )
        parser.add_argument(
            "--output",
            "-o",
            required=True,
            help="output folder: generalized/, failed/, metrics.json",
        )
        parser.add_argument(
            "--vault", required=True, help="vault folder for the encrypted originals"
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
        # jobs/generalize.py passes it: under spark-submit the submitted master is kept unless
        # --master is given
        parser.add_argument("--submitted", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help=(
            "rules (CPU, ladders and labels, no attack), openai (any OpenAI-compatible server, "
            "e.g. vllm serve) or transformers (a local model)"
        ),
    )
    parser.add_argument(
        "--model", default=None, help="served model name, or a model folder / .gguf file"
    )
    parser.add_argument(
        "--endpoint", default=None, help="OpenAI-compatible base URL, e.g. http://host:8000/v1"
    )
    parser.add_argument(
        "--conf",
        default=None,
        help="YAML config (its generalize: section; default conf/default.yaml)",
    )
    parser.add_argument(
        "--candidates", type=int, default=None, help="m: candidates per entity (config default 5)"
    )
    parser.add_argument(
        "--guesses", type=int, default=None, help="p: attacker guesses per candidate (default 5)"
    )
    parser.add_argument("--seed", type=int, default=None, help="sampling seed (config default 0)")
    parser.add_argument(
        "--batch-size", type=int, default=32, help="documents per batch (default 32)"
    )
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="new tokens per LLM answer (default 512)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="openai: requests in flight (default 8)"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="openai: seconds per request (default 120)"
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=3,
        help="openai: retries of a transiently failed request (default 3)",
    )
    parser.add_argument("--device", default="auto", help="transformers: cpu, cuda, auto (default)")
    parser.add_argument(
        "--types", default=None, help="comma-separated extractor types (default: all nine)"
    )
    parser.add_argument(
        "--extract-backend",
        choices=("same", RULES_BACKEND),
        default="same",
        help="who finds the spans: the same model (default) or the rules extractor (cheaper)",
    )


def config_from_args(
    args: argparse.Namespace, *, input: str = "", output: str = "", vault: str = ""
) -> Any:
    """A ``GeneralizeJobConfig`` from parsed arguments and the config file's ``generalize:``
    section."""
    # defaults←YAML←CLI
    section = job_config(
        GeneralizeSection,
        yaml_section=load_settings(args.conf).generalize,
        cli={k: getattr(args, k) for k in ("candidates", "guesses", "seed", "max_tokens")},
    ).model_dump()
    # the chat client gets the server and batch flags it takes; the extractor also the token cap and
    # device
    chat_values = {
        "concurrency": args.concurrency,
        "timeout_s": args.timeout,
        "retries": args.retries,
        "batch_size": args.batch_size,
    }
    options = select_options(args.backend, "chat", chat_values)
    extract_options = select_options(
        args.backend,
        "extractor",
        {"max_tokens": section["max_tokens"], **chat_values, "device": args.device},
    )
    types = (
        tuple(t.strip().upper() for t in args.types.split(",") if t.strip())
        if args.types
        else DEFAULT_TYPES
    )
    return job_config(
        GeneralizeJobConfig,
        cli=dict(
            input=getattr(args, "input", None) or input,
            output=getattr(args, "output", None) or output,
            vault=getattr(args, "vault", None) or vault,
            backend=args.backend,
            model=args.model,
            endpoint=args.endpoint,
            batch_size=args.batch_size,
            types=types,
            options=options,
            extract_options=extract_options,
            settings=section,
            extract_backend=None if args.extract_backend == "same" else args.extract_backend,
        ),
    )


def run_from_args(args: argparse.Namespace) -> int:
    """Run the generalize job; exit code 0 ok, 1 the job could not run or not reconciled, 2 bad
    usage, 3 documents failed transiently (rerun the same command to retry exactly those)."""
    try:
        cfg = config_from_args(args)
        # called through the module, so that a test (or a wrapper) can replace a runner
        metrics = (
            generalize_job.run_generalize_job_spark(cfg, args.master, args.submitted)
            if args.engine == "spark"
            else generalize_job.run_generalize_job(cfg)
        )
    # BackendUnavailable, JobError, VaultError, JavaMissing exit 1 (spcl.cli)
    except ValueError as err:
        raise UsageError(str(err)) from err
    keys = (
        "documents",
        "generalized",
        "failed",
        "failed_transient",
        "failed_reasons",
        "entities",
        "share_by_rank",
        "label_fallback_per_type",
        "llm_calls",
        "llm_calls_per_entity",
        "cache_hits",
        "reconciliation",
        "run",
    )
    shown: dict[str, object] = dict(metrics)
    print(json.dumps({k: shown[k] for k in keys}, indent=2, ensure_ascii=False))
    if not metrics["reconciliation"]["ok"]:
        raise RunFailed(
            "reconciliation failed: input rows != generalized + failed (see metrics.json)"
        )
    if metrics["failed_transient"]:
        raise Pending(
            f"{metrics['failed_transient']} document(s) failed transiently (server trouble: "
            "timeouts, HTTP 429/5xx, resets); rerun the same command to retry exactly those"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl generalize`` (its benchmark is ``spcl bench generalize``, in
    ``spcl.commands.bench``)."""
    parser = sub.add_parser(
        "generalize",
        help="truthful generalization of flagged documents (fail closed)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_generalize_arguments(parser)
    parser.set_defaults(func=run_from_args)
