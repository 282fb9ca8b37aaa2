"""``spcl train-extractor``: fine-tune the LLM-stage extractor on chat records (completion-only
loss).

    spcl train-extractor --data data/pii-synth/train-chat.jsonl \\
        --eval data/pii-synth/validation.jsonl --base /models/qwen3-1.7b \\
        --output models/extractor-lora --lora-rank 16 --epochs 2 --seed 0 --device cuda
    spcl train-extractor --data train-chat.jsonl --base SmolLM2-135M-Instruct.Q4_1.gguf \\
        --output smoke/ --max-steps 2 --device cpu                   # a CPU smoke run
    spcl mask ... --backend transformers --model /models/qwen3-1.7b --adapter models/extractor-lora

The prompt is the LLM stage's versioned prompt (``spcl.extract.prompt``); the loss sees only the
assistant's ``TYPE<TAB>ORIGINAL`` lines and its end-of-turn token, checked on every record and
batch. A GGUF base is de-quantized to float weights by transformers and the adapter trains on those.

Exit status: 0 trained (and evaluated); 1 the run failed (model cannot load, records fail their
checks, a checkpoint from other settings); 2 bad usage.
"""

from __future__ import annotations

import argparse
import json

from spcl.config_models import job_config
from spcl.errors import RunFailed, UsageError
from spcl.extract.adapter import AdapterError
from spcl.extract.backends import BackendUnavailable
from spcl.finetune.config import TrainConfig
from spcl.finetune.lossmask import LossMaskError
from spcl.finetune.train import TrainError, train_extractor


def run_from_args(args: argparse.Namespace) -> int:
    """Run a training; exit code 0 ok, 1 failed, 2 bad usage."""
    for name in ("epochs", "batch_size", "grad_accum", "max_length", "lora_rank"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_steps < 0 or args.eval_limit < 0:
        raise UsageError("--max-steps and --eval-limit must be >= 0")
    cfg = job_config(
        TrainConfig, cli={k: v for k, v in vars(args).items() if k in TrainConfig.model_fields}
    )
    try:
        card = train_extractor(cfg)
    except (LossMaskError, AdapterError, BackendUnavailable, TrainError):
        raise  # exit 1 with their own message (spcl.cli)
    except ValueError as err:
        raise UsageError(f"{type(err).__name__}: {err}") from err
    except OSError as err:
        raise RunFailed(f"{type(err).__name__}: {err}") from err
    summary = {
        "out": args.out,
        "method": card["method"],
        "steps": card["training"]["steps"],
        "final_loss": card["training"]["final_loss"],
        "loss_mask": card["loss_mask"],
        "left_out": card["data"]["left_out"]["count"],
    }
    if card.get("eval"):
        ev = card["eval"]
        summary["eval"] = {k: ev[k] for k in ("eval_loss", "evaluated") if k in ev}
        if "masking" in ev:
            summary["eval"]["entity"] = ev["masking"]["entity"]
            summary["eval"]["doc_leak_rate"] = ev["masking"]["documents"]["leak_rate"]
    print(json.dumps(summary, indent=2))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``spcl train-extractor``."""
    p = sub.add_parser(
        "train-extractor",
        help="fine-tune the LLM extractor (LoRA or full; completion-only loss)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--data", required=True, metavar="CHAT.jsonl", help="chat records ('spcl synth to-chat')"
    )
    p.add_argument(
        "--eval",
        default=None,
        metavar="SPLIT.jsonl",
        help=(
            "validation split (PII records: eval loss + 'spcl eval masking' metrics; chat: loss"
            " only)"
        ),
    )
    p.add_argument("--base", required=True, help="base model: a local folder or a .gguf file")
    p.add_argument(
        "--output",
        "-o",
        dest="out",
        required=True,
        metavar="DIR",
        help="output folder (adapter, model_card.json)",
    )
    p.add_argument("--full", action="store_true", help="full fine-tuning instead of a LoRA adapter")
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=None, help="default 2 x rank")
    p.add_argument("--lora-dropout", type=float, default=0.05)
    p.add_argument(
        "--target-modules",
        default="all-linear",
        help="all-linear (default) or comma-separated names",
    )
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument(
        "--max-steps", type=int, default=0, help="optimizer steps (overrides --epochs when > 0)"
    )
    p.add_argument(
        "--batch-size", type=int, default=1, help="examples per forward pass (default 1)"
    )
    p.add_argument(
        "--grad-accum", type=int, default=8, help="forward passes per optimizer step (default 8)"
    )
    p.add_argument(
        "--lr", type=float, default=None, help="peak learning rate (default 2e-4 LoRA, 1e-5 full)"
    )
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--warmup-steps", type=int, default=0)
    p.add_argument("--max-grad-norm", type=float, default=1.0)
    p.add_argument(
        "--max-length",
        type=int,
        default=2048,
        help="tokens per example; a longer record is never cut: the run stops (or drops it)",
    )
    p.add_argument(
        "--drop-bad-records",
        action="store_true",
        help=(
            "drop records that fail their checks (listed by id in the model card) instead of"
            " stopping"
        ),
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda, auto (default)")
    p.add_argument(
        "--dtype", default="auto", help="auto (bfloat16 on CUDA, float32 on CPU), float32, bfloat16"
    )
    p.add_argument(
        "--save-every", type=int, default=100, help="checkpoint every N steps (and at the end)"
    )
    p.add_argument(
        "--resume", action="store_true", help="continue from the latest checkpoint in --output"
    )
    p.add_argument(
        "--eval-limit", type=int, default=0, help="evaluate on N hashed-sampled documents (0 = all)"
    )
    p.add_argument("--eval-max-new-tokens", type=int, default=256)
    p.add_argument("--eval-batch-size", type=int, default=8)
    p.add_argument(
        "--no-eval-generate",
        dest="eval_generate",
        action="store_false",
        help="eval loss only (skip serving the artifact on the eval split)",
    )
    p.add_argument(
        "--mlflow", default=None, metavar="DIR", help="also track to a local MLflow file store"
    )
    p.set_defaults(func=run_from_args)
