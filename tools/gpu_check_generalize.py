"""The prepared GPU check of ``spcl generalize`` (transformers backend): run once when a GPU is
lent.

    python tools/gpu_check_generalize.py --output /tmp/gen-check \\
        --model /models/qwen3-8b                        # a real local model
    python tools/gpu_check_generalize.py --output /tmp/gen-check  # random-init model

It writes ``--docs`` synthetic flagged documents (``spcl.synth.pii``, ko/en), finds their spans with
the rules extractor, runs the whole two-stage loop (candidates + inference attack) with a local
transformers model on the GPU, and prints one JSON summary (also ``OUT/gpu_check_generalize.json``):
documents, generalized/failed and their reasons, LLM calls per entity, generated tokens/s, seconds
per document, the share by chosen rank and the label fallback per type.

With the random-init model (no model on the machine) every answer is noise cut at ``--max-tokens``:
the documents fail closed (``candidates:output_truncated`` / ``attack:output_truncated``) and only
the serving numbers mean anything. The rank shares and fallback rates are the method's quality
numbers only with a real instruct model (the paper: 53 % most specific, 22 % label fallback, with
open-weight 8B-class models). No network is needed.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Run the check; exit 0 when the job ran."""
    parser = argparse.ArgumentParser(
        prog="gpu_check_generalize",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--output", "-o", dest="out", required=True, help="work folder")
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument(
        "--model", default=None, help="a local model folder (default: write a random-init one)"
    )
    parser.add_argument("--hidden", type=int, default=1024, help="random model width")
    parser.add_argument("--layers", type=int, default=16, help="random model depth")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args(argv)

    from spcl.bench.gpu_check import write_docs
    from spcl.bench.tiny_model import write_tiny_model
    from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SPCL_VAULT_KEY", base64.b64encode(secrets.token_bytes(32)).decode())
    n = write_docs(out / "in", args.docs, n_files=2)
    model = args.model
    if model is None:
        model = str(
            write_tiny_model(
                out / "model",
                seed=0,
                hidden_size=args.hidden,
                layers=args.layers,
                heads=max(1, args.hidden // 64),
            )
        )
    cfg = GeneralizeJobConfig(
        input=str(out / "in"),
        output=str(out / "gen"),
        vault=str(out / "vault"),
        backend="transformers",
        model=model,
        batch_size=args.batch_size,
        options={"batch_size": args.batch_size, "device": args.device},
        settings={"max_tokens": args.max_tokens},
        extract_backend="rules",
    )
    t0 = time.perf_counter()
    metrics = run_generalize_job(cfg)
    wall = time.perf_counter() - t0
    keys = (
        "documents",
        "generalized",
        "failed",
        "failed_reasons",
        "entities",
        "share_by_rank",
        "label_fallback_per_type",
        "llm_calls",
        "llm_calls_per_entity",
        "cache_hits",
        "guesses_per_document",
        "tokens_per_document",
        "llm_seconds_per_document",
        "seconds_per_document",
    )
    tokens = metrics["tokens_per_document"] * metrics["documents"]
    summary = {
        "model": model,
        "random_weights": args.model is None,
        "documents_written": n,
        "wall_seconds_including_model_load": round(wall, 2),
        "generated_tokens_per_wall_second": round(tokens / wall, 1) if wall else 0.0,
        **{k: metrics[k] for k in keys},
    }
    (out / "gpu_check_generalize.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    )
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
