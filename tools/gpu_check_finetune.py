"""GPU check of ``spcl train-extractor`` for a lent GPU machine (no internet needed).

    PYTHONPATH=. python tools/gpu_check_finetune.py --output /tmp/ft-gpu  # random-init Llama
    PYTHONPATH=. python tools/gpu_check_finetune.py --output /tmp/ft-gpu \\
        --base /models/qwen3-1.7b --epochs 1

It writes the synthetic PII set (``spcl synth pii``, seed 42: 1,600 training documents) and its chat
records, takes ``--base`` (a real model folder if the machine has one) or writes a random-init Llama
chat model sized by ``--hidden``/``--layers`` (``spcl.bench.tiny_model``), trains a LoRA adapter on
CUDA for ``--max-steps`` (or ``--epochs``), evaluates on the validation split (eval loss and ``spcl
eval masking`` metrics of the served adapter) and prints one JSON summary (also
``OUT/gpu_check_finetune.json``): tokens/s, peak GPU memory, loss, eval metrics, wall time. A
random-init model learns the format only slowly and its eval metrics mean nothing: quality numbers
need a real base model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Run the check; 0 when training and evaluation finished."""
    parser = argparse.ArgumentParser(
        prog="gpu_check_finetune",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--output", "-o", dest="out", required=True, type=Path)
    parser.add_argument(
        "--base", default=None, help="a real base model folder/GGUF (default: random-init Llama)"
    )
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--max-steps", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--grad-accum", type=int, default=2)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--eval-limit", type=int, default=64)
    parser.add_argument("--eval-max-new-tokens", type=int, default=128)
    args = parser.parse_args(argv)

    import torch

    from spcl.finetune.config import TrainConfig
    from spcl.finetune.train import train_extractor
    from spcl.synth.pii import generate, write_chat

    started = time.perf_counter()
    data = args.out / "pii-synth"
    generate(data, seed=42)
    write_chat(data / "train.jsonl", data / "train-chat.jsonl")
    base = args.base
    if base is None:
        from spcl.bench.tiny_model import write_tiny_model

        heads = max(1, args.hidden // 64)
        base = str(
            write_tiny_model(
                args.out / "random-llama",
                hidden_size=args.hidden,
                layers=args.layers,
                heads=heads,
                seed=0,
            )
        )
    cfg = TrainConfig(
        data=str(data / "train-chat.jsonl"),
        eval=str(data / "validation.jsonl"),
        base=base,
        out=str(args.out / "run"),
        full=args.full,
        max_steps=args.max_steps,
        epochs=args.epochs,
        batch_size=args.batch_size,
        grad_accum=args.grad_accum,
        device=args.device,
        seed=0,
        save_every=max(1, args.max_steps or 100),
        eval_limit=args.eval_limit,
        eval_max_new_tokens=args.eval_max_new_tokens,
        eval_batch_size=16,
    )
    card = train_extractor(cfg)
    ev = card.get("eval") or {}
    masking = ev.get("masking") or {}
    summary = {
        "device": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else args.device,
        "base": "random-init llama" if args.base is None else str(args.base),
        "method": card["method"],
        "steps": card["training"]["steps"],
        "examples": card["loss_mask"]["examples"],
        "trained_tokens": card["loss_mask"]["trained_tokens"],
        "masked_tokens": card["loss_mask"]["masked_tokens"],
        "tokens_per_s": card["training"]["tokens_per_s"],
        "peak_memory_gib": round(card["training"]["peak_memory_bytes"] / 2**30, 2),
        "final_loss": card["training"]["final_loss"],
        "eval_loss": ev.get("eval_loss"),
        "eval_documents": masking.get("documents_evaluated"),
        "entity": masking.get("entity"),
        "doc_leak_rate": (masking.get("documents") or {}).get("leak_rate"),
        "parse_success_rate": (masking.get("parse") or {}).get("success_rate"),
        "backend_failures": masking.get("backend_failures"),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    text = json.dumps(summary, indent=2)
    print(text)
    (args.out / "gpu_check_finetune.json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
