"""The prepared GPU check of the ``vllm`` backend: ``python -m spcl.bench.gpu_check --output DIR``.

Run once on a GPU machine (no internet needed): it writes ~2,000 synthetic flagged documents (the
synthetic generator), a random-init Llama chat model sized by ``--hidden``/``--layers`` (or uses
``--model`` if a real model folder is on the machine), runs the mask job with ``--backend vllm`` and
prints generated tokens/s, docs/s and the job's metrics as JSON (also ``DIR/gpu_check.json``). A
random model prints noise until ``--max-tokens``, so its documents fail closed as
``output_truncated`` (or go to the rules fallback): the numbers measure serving throughput, not
extraction quality.

vLLM must be importable (``pip install 'spcl[gpu]'``, or from a wheelhouse: ``pip install --no-index
--find-links WHEELS vllm``). ``--backend transformers`` runs the same check without vLLM (CPU smoke
test).
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

from spcl.bench.tiny_model import write_tiny_model
from spcl.extract.backends.registry import FALLBACK_BACKENDS, backend_names, backends_taking
from spcl.mask_stage import MaskJobConfig, run_mask_job
from spcl.synth.pii import generate_records


def write_docs(folder: Path, n_docs: int, seed: int = 42, n_files: int = 4) -> int:
    """Write ``n_docs`` synthetic documents (all splits, cycled with new ids) as flagged Parquet
    files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pool = [r for split in generate_records(seed).values() for r in split]
    docs = [dict(pool[i % len(pool)], id=f"gpu-{i:06d}") for i in range(n_docs)]
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n_files):
        part = docs[k::n_files]
        pq.write_table(
            pa.table(
                {
                    "id": [d["id"] for d in part],
                    "text": [d["source_text"] for d in part],
                    "lang": [d["lang"] for d in part],
                }
            ),
            folder / f"part-{k:05d}.parquet",
        )
    return len(docs)


def main(argv: list[str] | None = None) -> int:
    """Run the check; exit 0 when the job ran, 1 otherwise."""
    parser = argparse.ArgumentParser(
        prog="gpu_check", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--output", "-o", dest="out", required=True, help="work folder")
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument(
        "--model", default=None, help="a local model folder (default: write a random-init one)"
    )
    parser.add_argument(
        "--hidden", type=int, default=1024, help="random model width (head size 64)"
    )
    parser.add_argument("--layers", type=int, default=16, help="random model depth")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=512)
    in_process = backend_names("extractor", needs_model=True, server=False)
    gpu_engine = backends_taking("extractor", "tensor_parallel_size")[0]
    parser.add_argument("--backend", choices=in_process, default=gpu_engine)
    parser.add_argument("--fallback", choices=FALLBACK_BACKENDS, default=None)
    args = parser.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SPCL_VAULT_KEY", base64.b64encode(secrets.token_bytes(32)).decode())
    n = write_docs(out / "in", args.docs)
    model = args.model
    if model is None:
        t0 = time.perf_counter()
        model = str(
            write_tiny_model(
                out / "model",
                seed=0,
                hidden_size=args.hidden,
                layers=args.layers,
                heads=max(1, args.hidden // 64),
            )
        )
        print(f"random-init model written in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    options: dict[str, object] = {"batch_size": args.batch_size, "max_tokens": args.max_tokens}
    cfg = MaskJobConfig(
        input=str(out / "in"),
        output=str(out / "masked"),
        vault=str(out / "vault"),
        backend=args.backend,
        model=model,
        fallback=args.fallback,
        batch_size=args.batch_size,
        options=options,
    )
    t0 = time.perf_counter()
    metrics = run_mask_job(cfg)
    wall = time.perf_counter() - t0
    summary = {
        "backend": args.backend,
        "model": model,
        "documents": n,
        "wall_seconds_including_model_load": round(wall, 2),
        "generated_tokens_per_second": metrics["generated_tokens_per_second"],
        "docs_per_second": metrics["docs_per_second"],
        "metrics": metrics,
    }
    (out / "gpu_check.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
