"""``spcl generalize``: replace sensitive spans with the most specific true generalization an LLM attacker
cannot invert (INTACT-style), else a ``[TYPE_n]`` label; and ``spcl bench-generalize``.

    spcl generalize --input out/decision=flagged --output gen/ --vault vault/ --backend rules
    spcl generalize ... --backend openai --endpoint http://gpu-node:8000/v1 --model NAME --candidates 5 --guesses 5
    spcl generalize ... --backend transformers --model /models/qwen3-8b --device cuda
    spcl bench-generalize --backend openai --endpoint http://gpu-node:8000/v1 --model NAME --docs 20

The vault key comes from ``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``. A rerun with the same ``--output``
resumes and retries the documents that failed transiently. Exit codes: 0 done, 1 could not run or not
reconciled, 2 bad usage, 3 transient failures left. ``bench-generalize`` PRINTS VALUES (candidates and
guesses): run it on synthetic data only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from spcl.messages import shown

BACKENDS = ("rules", "openai", "transformers")


def add_generalize_arguments(parser: argparse.ArgumentParser, *, job: bool = True) -> None:
    """The arguments shared by ``spcl generalize``, ``jobs/generalize.py`` and (``job=False``) the benchmark."""
    if job:
        parser.add_argument("--input", "-i", required=True, help="flagged Parquet: a file or a folder (recursive)")
        parser.add_argument("--output", "-o", required=True, help="output folder: generalized/, failed/, metrics.json")
        parser.add_argument("--vault", required=True, help="vault folder for the encrypted originals")
        parser.add_argument("--engine", choices=("python", "spark"), default="python",
                            help="python (default, this process) or spark (one task per input file)")
        parser.add_argument("--master", default=None, help="Spark master (engine spark; default local[*])")
    parser.add_argument("--backend", choices=BACKENDS, default="rules",
                        help="rules (CPU, ladders and labels, no attack), openai (any OpenAI-compatible server, "
                             "e.g. vllm serve) or transformers (a local model)")
    parser.add_argument("--model", default=None, help="served model name, or a model folder / .gguf file")
    parser.add_argument("--endpoint", default=None, help="OpenAI-compatible base URL, e.g. http://host:8000/v1")
    parser.add_argument("--conf", default=None, help="YAML config (its generalize: section; default conf/default.yaml)")
    parser.add_argument("--candidates", type=int, default=None, help="m: candidates per entity (config default 5)")
    parser.add_argument("--guesses", type=int, default=None, help="p: attacker guesses per candidate (default 5)")
    parser.add_argument("--seed", type=int, default=None, help="sampling seed (config default 0)")
    parser.add_argument("--batch-size", type=int, default=32, help="documents per batch (default 32)")
    parser.add_argument("--max-tokens", type=int, default=None, help="new tokens per LLM answer (default 512)")
    parser.add_argument("--concurrency", type=int, default=8, help="openai: requests in flight (default 8)")
    parser.add_argument("--timeout", type=float, default=120.0, help="openai: seconds per request (default 120)")
    parser.add_argument("--retries", type=int, default=3,
                        help="openai: retries of a transiently failed request (default 3)")
    parser.add_argument("--device", default="auto", help="transformers: cpu, cuda, auto (default)")
    parser.add_argument("--types", default=None, help="comma-separated extractor types (default: all nine)")
    parser.add_argument("--extract-backend", choices=("same", "rules"), default="same",
                        help="who finds the spans: the same model (default) or the rules extractor (cheaper)")


def config_from_args(args: argparse.Namespace, *, input: str = "", output: str = "", vault: str = "") -> Any:
    """A ``GeneralizeJobConfig`` from parsed arguments and the config file's ``generalize:`` section."""
    from spcl.config import load_settings
    from spcl.entity_types import DEFAULT_TYPES
    from spcl.generalize.job import GeneralizeJobConfig

    section = load_settings(args.conf).generalize.model_dump()
    for name in ("candidates", "guesses", "seed", "max_tokens"):
        if getattr(args, name) is not None:
            section[name] = getattr(args, name)
    max_tokens = section["max_tokens"]
    if args.backend == "openai":
        options = {"concurrency": args.concurrency, "timeout_s": args.timeout, "retries": args.retries}
        extract_options = {"max_tokens": max_tokens, "concurrency": args.concurrency, "timeout_s": args.timeout,
                           "retries": args.retries}
    elif args.backend == "transformers":
        options = {"batch_size": args.batch_size}
        extract_options = {"max_new_tokens": max_tokens, "batch_size": args.batch_size, "device": args.device}
    else:
        options, extract_options = {}, {}
    types = tuple(t.strip().upper() for t in args.types.split(",") if t.strip()) if args.types else DEFAULT_TYPES
    return GeneralizeJobConfig(
        input=getattr(args, "input", None) or input, output=getattr(args, "output", None) or output,
        vault=getattr(args, "vault", None) or vault, backend=args.backend, model=args.model, endpoint=args.endpoint,
        batch_size=args.batch_size, types=types, options=options, extract_options=extract_options, settings=section,
        extract_backend=None if args.extract_backend == "same" else args.extract_backend)


def run_from_args(args: argparse.Namespace) -> int:
    """Run the generalize job; exit code 0 ok, 1 the job could not run or not reconciled, 2 bad usage,
    3 documents failed transiently (rerun the same command to retry exactly those)."""
    from spcl.executor import JobError
    from spcl.extract.backends import BackendUnavailable
    from spcl.extract.backends.transient import EXIT_TRANSIENT
    from spcl.generalize.job import run_generalize_job, run_generalize_job_spark
    from spcl.mask.vault import VaultError

    try:
        cfg = config_from_args(args)
        metrics = run_generalize_job_spark(cfg, args.master) if args.engine == "spark" else run_generalize_job(cfg)
    except ValueError as err:
        print(f"spcl generalize: {shown(err)}", file=sys.stderr)
        return 2
    except (BackendUnavailable, JobError, VaultError) as err:
        print(f"spcl generalize: {shown(err)}", file=sys.stderr)
        return 1
    keys = ("documents", "generalized", "failed", "failed_transient", "failed_reasons", "entities", "share_by_rank",
            "label_fallback_per_type", "llm_calls", "llm_calls_per_entity", "cache_hits", "reconciliation", "run")
    print(json.dumps({k: metrics[k] for k in keys}, indent=2, ensure_ascii=False))
    if not metrics["reconciliation"]["ok"]:
        print("spcl generalize: reconciliation failed: input rows != generalized + failed (see metrics.json)",
              file=sys.stderr)
        return 1
    if metrics["failed_transient"]:
        print(f"spcl generalize: {metrics['failed_transient']} document(s) failed transiently (server trouble: "
              "timeouts, HTTP 429/5xx, resets); rerun the same command to retry exactly those", file=sys.stderr)
        return EXIT_TRANSIENT
    return 0


def bench_from_args(args: argparse.Namespace) -> int:
    """Generalize synthetic documents in memory and print, per document, every entity's candidates, guesses
    and choice, then LLM calls per entity (values in clear: synthetic data only)."""
    from spcl.extract.contract import parse_extraction
    from spcl.generalize.engine import DocInput, Generalizer, GeneralizeSettings
    from spcl.generalize.job import build_clients
    from spcl.generalize.spans import collect_spans, document_hits
    from spcl.synth.pii import generate_records

    cfg = config_from_args(args)
    records = generate_records(args.seed if args.seed is not None else 42)["test"]
    records = (records * (1 + args.docs // max(1, len(records))))[: args.docs]
    extractor, chat = build_clients(cfg)
    try:
        if chat is not None:
            chat.check()
        gen = Generalizer(chat, GeneralizeSettings(**cfg.settings))
        docs = []
        texts = [r["source_text"] for r in records]
        for rec, ext in zip(records, extractor.run(texts), strict=True):
            text = rec["source_text"]
            rows = parse_extraction(ext.raw or "", text, cfg.types).candidates if ext.ok else []
            found = document_hits(text, None)
            docs.append(DocInput(rec["id"], text, rec["lang"], collect_spans(text, rows, found, types=cfg.types),
                                 [(h.type, h.start, h.end) for h in found]))
        started = time.perf_counter()
        results = gen.run(docs)
        wall = time.perf_counter() - started
    finally:
        extractor.close()
        if chat is not None:
            chat.close()
    calls = attacked = 0
    for doc, res in zip(docs, results, strict=True):
        print(f"== {shown(doc.id)} ({doc.lang}) {'ok' if res.reason is None else 'FAILED ' + res.reason}: "
              f"{res.llm_calls} LLM calls, {res.cache_hits} cache hits, {res.guesses} guesses")
        for ent, dec in zip(doc.entities, res.decisions, strict=True):
            print(f"  {ent.type:8s} {ent.value!r} -> {dec.replacement!r} [{dec.kind}, rank {dec.rank}, {dec.source}, "
                  f"{dec.calls} calls]")
            for k, cand in enumerate(dec.candidates):
                guesses = dec.guesses[k] if k < len(dec.guesses) else None
                print(f"      cand {k}: {cand!r}  guesses: {guesses if guesses is not None else '-'}")
            attacked += bool(dec.guesses)
        calls += res.llm_calls
        if res.text is not None:
            print("  ->", res.text)
    print(json.dumps({"documents": len(docs), "llm_calls": calls, "attacked_entities": attacked,
                      "llm_calls_per_attacked_entity": round(calls / attacked, 3) if attacked else 0.0,
                      "failed": sum(r.reason is not None for r in results), "seconds": round(wall, 3)}, indent=2))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl generalize`` and ``spcl bench-generalize``."""
    parser = sub.add_parser("generalize", help="truthful generalization of flagged documents (fail closed)",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_generalize_arguments(parser)
    parser.set_defaults(func=run_from_args)
    bench = sub.add_parser("bench-generalize", help="candidates, guesses and LLM calls per document "
                                                    "(synthetic documents; prints values)")
    add_generalize_arguments(bench, job=False)
    bench.add_argument("--docs", type=int, default=10, help="synthetic test documents (default 10)")
    bench.set_defaults(func=bench_from_args)
