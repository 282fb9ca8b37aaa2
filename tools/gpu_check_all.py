"""The one prepared script for a lent GPU: every GPU check of the project, the vLLM path first.

    PYTHONPATH=. python tools/gpu_check_all.py --output /tmp/gpu-all  # random-init models
    PYTHONPATH=. python tools/gpu_check_all.py --output /tmp/gpu-all --model /models/qwen3-8b

Each step is a subprocess with its own time limit, so one failing or slow step never hides the
others; the summary (``OUT/gpu_check_all.json``, also printed) holds each step's exit code, seconds
and JSON result:

1. ``vllm`` — the mask job with ``--backend vllm`` (``spcl.bench.gpu_check``): generated tokens/s,
   docs/s, the engine's prompt and completion tokens per document. Skipped, with the reason, where
   vLLM is not importable (the lent machine so far has no vLLM and no internet: carry a wheelhouse,
   ``pip install --no-index --find-links WHEELS vllm``). Its tokens/s is the ``--gpu-tokens-per-s``
   of ``spcl report``.
2. ``transformers`` — the same mask check with the transformers backend on the GPU.
3. ``generalize``, 4. ``finetune``, 5. ``annotate`` — tools/gpu_check_generalize.py,
   gpu_check_finetune.py, annotate_gpu_check.py with small settings.

The summary ends with ``gpu_hours_per_million_flagged``: the completion tokens per document of the
vLLM step (else the transformers one) divided by its measured rate. With random-init models every
answer runs to ``--max-tokens``, so that is an upper bound on tokens per document; extraction
quality needs a real instruct model (``--model``). No network is needed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _step(name: str, cmd: list[str], result: Path, timeout: int) -> dict[str, object]:
    """Run one check; its exit code, seconds, JSON result (or the tail of its error output)."""
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        rc, err = 124, f"timed out after {timeout}s"
    out: dict[str, object] = {"step": name, "rc": rc, "seconds": round(time.perf_counter() - t0, 1)}
    if rc == 0 and result.is_file():
        out["result"] = json.loads(result.read_text())
    else:
        out["error_tail"] = err[-1500:]
    print(json.dumps({k: v for k, v in out.items() if k != "result"}), file=sys.stderr, flush=True)
    return out


def _gpu_hours(summary: dict[str, object]) -> dict[str, object] | None:
    """GPU-hours per million flagged documents from the first mask step that measured tokens."""
    for step in ("vllm", "transformers"):
        res = (
            summary.get(step, {}).get("result")  # type: ignore[union-attr]
            if isinstance(summary.get(step), dict)
            else None
        )
        if not isinstance(res, dict):
            continue
        metrics = res["metrics"]
        rate = metrics.get("generated_tokens_per_second") or 0
        per_doc = (metrics.get("tokens") or {}).get("completion_per_document") or 0
        if rate and per_doc:
            return {
                "from": step,
                "completion_tokens_per_document": per_doc,
                "generated_tokens_per_second": rate,
                "gpu_hours": round(1_000_000 * per_doc / rate / 3600, 2),
            }
    return None


def main(argv: list[str] | None = None) -> int:
    """Run every check; 0 when each step that could run succeeded."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--output", "-o", dest="out", required=True, type=Path)
    p.add_argument(
        "--model",
        default=None,
        help="a real local model folder for every step (default: random-init)",
    )
    p.add_argument("--docs", type=int, default=2000, help="documents of the mask steps")
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--step-timeout", type=int, default=900, help="seconds per step")
    p.add_argument(
        "--only",
        default=None,
        help="comma-separated steps (vllm,transformers,generalize,finetune,annotate)",
    )
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    model = ["--model", args.model] if args.model else []
    py = sys.executable
    mask = [
        py,
        "-m",
        "spcl.bench.gpu_check",
        "--docs",
        str(args.docs),
        "--max-tokens",
        str(args.max_tokens),
        *model,
    ]
    steps = {
        "vllm": (
            [*mask, "--output", str(args.out / "vllm"), "--backend", "vllm"],
            args.out / "vllm" / "gpu_check.json",
        ),
        "transformers": (
            [
                *mask,
                "--output",
                str(args.out / "tf"),
                "--backend",
                "transformers",
                "--batch-size",
                "64",
            ],
            args.out / "tf" / "gpu_check.json",
        ),
        "generalize": (
            [
                py,
                str(ROOT / "tools" / "gpu_check_generalize.py"),
                "--output",
                str(args.out / "gen"),
                *model,
            ],
            args.out / "gen" / "gpu_check_generalize.json",
        ),
        "finetune": (
            [
                py,
                str(ROOT / "tools" / "gpu_check_finetune.py"),
                "--output",
                str(args.out / "ft"),
                *(["--base", args.model] if args.model else []),
            ],
            args.out / "ft" / "gpu_check_finetune.json",
        ),
        "annotate": (
            [py, str(ROOT / "tools" / "annotate_gpu_check.py"), "--output", str(args.out / "ann")],
            args.out / "ann" / "annotate_gpu_check.json",
        ),
    }
    wanted = args.only.split(",") if args.only else list(steps)
    summary: dict[str, object] = {"python": sys.version.split()[0]}
    try:
        import torch

        summary["cuda"] = torch.cuda.is_available()
        summary["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    except ImportError:
        summary["cuda"] = False
    ok = True
    for name in wanted:
        if name == "vllm" and importlib.util.find_spec("vllm") is None:
            summary[name] = {"step": name, "skipped": "vllm is not importable on this machine"}
            print(json.dumps(summary[name]), file=sys.stderr, flush=True)
            continue
        cmd, result = steps[name]
        summary[name] = _step(name, cmd, result, args.step_timeout)
        ok = ok and summary[name]["rc"] == 0  # type: ignore[index]
    summary["gpu_hours_per_million_flagged"] = _gpu_hours(summary)
    (args.out / "gpu_check_all.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
