"""The training loop of ``spcl train-extractor``: seeded, resumable, completion-only loss.

``train_extractor(TrainConfig(...))`` reads and checks the chat records, tokenizes them with the
base model's chat template (``spcl.finetune.lossmask``), wraps the model in a PEFT LoRA adapter (or
trains every weight with ``full=True``) and runs AdamW with a linear warm-up/decay schedule. The
loss is the summed cross-entropy over trained tokens divided by the trained tokens of the optimizer
step, so every completion token weighs the same whatever the padding and gradient accumulation.

Deterministic: the LoRA initialisation is seeded, each epoch's order is the examples sorted by
``sha256(seed:epoch:id)``, and the dropout generator is reseeded from ``(seed, step)`` before each
step, so a run resumed from a checkpoint continues exactly as the uninterrupted one would. Records
that fail their checks stop the run (``TrainError`` naming ids and reasons) unless
``drop_bad_records``; dropped ids are listed in the model card. Logs and tracker events carry ids,
counts and numbers only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

from spcl.errors import RunFailed
from spcl.extract.adapter import base_fingerprint, pickle_files, write_model_card
from spcl.extract.backends.transformers_backend import eos_token_ids, load_model
from spcl.extract.prompt import PROMPT_VERSION
from spcl.finetune.checkpoint import STATE_NAME, latest_checkpoint, load_checkpoint, save_checkpoint
from spcl.finetune.config import TrainConfig
from spcl.finetune.loop import TrainLoop
from spcl.finetune.lossmask import EncodeReport, encode_records
from spcl.finetune.metrics import eval_loss, hashed_order, is_gold_file, masking_metrics
from spcl.finetune.records import read_records
from spcl.finetune.tracking import Tracker
from spcl.manifest import manifest_ref, sha256_file

log = logging.getLogger("spcl.finetune")


class TrainError(RunFailed, RuntimeError):
    """The run cannot go on (bad records, a checkpoint from other settings); names ids and
    reasons only."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class LeftOutRecord(TypedDict):
    """A record left out of training or evaluation: its id and why."""

    id: str
    reason: str


class ProblemSummary(TypedDict):
    """The records left out (the card's ``left_out``): how many, per reason, and each one."""

    count: int
    by_reason: dict[str, int]
    records: list[LeftOutRecord]


def _problem_summary(problems: list[tuple[str, str]]) -> ProblemSummary:
    return {
        "count": len(problems),
        "by_reason": dict(sorted(Counter(r for _, r in problems).items())),
        "records": [{"id": i, "reason": r} for i, r in problems],
    }


def _prepare_out(cfg: TrainConfig) -> Path:
    out = Path(cfg.out)
    if out.exists() and any(out.iterdir()) and not cfg.resume:
        raise TrainError(
            f"output folder {out} is not empty (pass --resume to continue a run there)"
        )
    out.mkdir(parents=True, exist_ok=True)
    return out


def _wrap(net: Any, cfg: TrainConfig) -> Any:
    import torch

    torch.manual_seed(cfg.seed)
    if cfg.full:
        for p in net.parameters():
            p.requires_grad_(True)
        return net
    from peft import LoraConfig, get_peft_model

    hp = cfg.hyper_parameters()
    targets: Any = (
        cfg.target_modules if cfg.target_modules == "all-linear" else cfg.target_modules.split(",")
    )
    lora = LoraConfig(
        r=cfg.lora_rank,
        lora_alpha=hp["lora_alpha"],
        lora_dropout=cfg.lora_dropout,
        target_modules=targets,
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(net, lora)


def train_extractor(
    cfg: TrainConfig, on_step: Callable[[int, dict[str, float]], None] | None = None
) -> dict[str, Any]:
    """Train, save the artifact under ``cfg.out``, evaluate, and return the model card.

    ``on_step(step, metrics)`` is called after every optimizer step (progress, tests).
    """
    import torch  # noqa: F401  (without torch, fail here: before the output folder is made)

    out = _prepare_out(cfg)
    records, record_problems = read_records(cfg.data)
    net, tokenizer = load_model(cfg.base, cfg.device, cfg.dtype)
    eos_ids = eos_token_ids(net, tokenizer)
    report, problems = _encode_checked(
        cfg, tokenizer, records, [(p.id, p.reason) for p in record_problems], eos_ids
    )
    loop = TrainLoop.start(
        cfg, _wrap(net, cfg), report.examples, int(tokenizer.pad_token_id), eos_ids
    )
    data_sha = sha256_file(cfg.data)
    settings = _sha(
        json.dumps(
            {
                "hp": cfg.hyper_parameters(),
                "data": data_sha,
                "total": loop.total,
                "base": base_fingerprint(cfg.base),
            },
            sort_keys=True,
        )
    )
    ckpt_dir = out / "checkpoints"
    first = _resume(cfg, ckpt_dir, settings, loop)
    tracker = Tracker(out / "train_log.jsonl", cfg.mlflow)
    tracker.log_params(
        {
            **cfg.hyper_parameters(),
            "base": Path(cfg.base).name[:64],
            "device": str(loop.device),
            "examples": len(loop.examples),
            "dropped": len(problems),
            "total_steps": loop.total,
            "prompt_version": _prompt_version(),
        }
    )
    try:
        history, train_seconds = _run_steps(loop, first, tracker, ckpt_dir, settings, on_step)
        loop.net.save_pretrained(out, safe_serialization=True)
        if cfg.full:
            tokenizer.save_pretrained(out)
        card = _model_card(
            cfg,
            loop,
            report,
            problems,
            n_records=len(records) + len(record_problems),
            data_sha=data_sha,
            first=first,
            history=history,
            train_seconds=train_seconds,
        )
        write_model_card(out, card)
        if cfg.eval:
            card["eval"] = _evaluate(
                cfg, loop.net, tokenizer, eos_ids, loop.pad_id, loop.device, out
            )
            tracker.log_metrics(_flat_eval(card["eval"]), loop.total)
            write_model_card(out, card)
    finally:
        tracker.close()
    bad = pickle_files(out)
    if bad:  # pragma: no cover - write_model_card already refuses
        raise TrainError(f"pickle-capable files in {out}: {', '.join(bad)}")
    return json.loads((out / "model_card.json").read_text(encoding="utf-8"))


def _encode_checked(
    cfg: TrainConfig,
    tokenizer: Any,
    records: list[Any],
    record_problems: list[tuple[str, str]],
    eos_ids: frozenset[int],
) -> tuple[EncodeReport, list[tuple[str, str]]]:
    """Tokenize the records with their loss masks; ``(report, problems)``. Records that fail their
    checks stop the run (``TrainError`` with ids and reasons) unless ``cfg.drop_bad_records``; no
    example left stops it."""
    report: EncodeReport = encode_records(
        tokenizer, records, max_length=cfg.max_length, eos_ids=eos_ids
    )
    problems = record_problems + report.problems
    if problems:
        reasons = Counter(r for _, r in problems)
        log.warning(
            "%d training record(s) fail their checks (%s); ids: %s",
            len(problems),
            ", ".join(f"{r}={n}" for r, n in sorted(reasons.items())),
            ", ".join(i for i, _ in problems[:20]),
        )
        if not cfg.drop_bad_records:
            raise TrainError(
                f"{len(problems)} training record(s) fail their checks "
                f"({', '.join(f'{r}={n}' for r, n in sorted(reasons.items()))}; first ids: "
                f"{', '.join(i for i, _ in problems[:10])}); fix them, raise --max-length, "
                "or pass --drop-bad-records"
            )
    if not report.examples:
        raise TrainError("no training example is left")
    log.info(
        "loss mask verified on %d examples: %d masked and %d trained tokens (%d dropped)",
        len(report.examples),
        report.masked_tokens,
        report.trained_tokens,
        len(problems),
    )
    return report, problems


def _resume(cfg: TrainConfig, ckpt_dir: Path, settings: str, loop: TrainLoop) -> int:
    """The step to start at: 0, or with ``cfg.resume`` the latest checkpoint's (weights and
    optimizer restored); a checkpoint of other settings, data or base model is refused."""
    ckpt = latest_checkpoint(ckpt_dir) if cfg.resume else None
    if ckpt is None:
        return 0
    if json.loads((ckpt / STATE_NAME).read_text()).get("settings_sha256") != settings:
        raise TrainError(
            f"checkpoint {ckpt.name} was written with other settings, data or base model"
        )
    try:
        first = int(load_checkpoint(ckpt, loop.net, loop.optimizer)["step"])
    except (ValueError, KeyError) as err:
        raise TrainError(
            f"checkpoint {ckpt.name} cannot be restored: {type(err).__name__}"
        ) from None
    log.info("resuming from %s (step %d of %d)", ckpt.name, first, loop.total)
    return first


def _run_steps(
    loop: TrainLoop,
    first: int,
    tracker: Tracker,
    ckpt_dir: Path,
    settings: str,
    on_step: Callable[[int, dict[str, float]], None] | None,
) -> tuple[list[dict[str, float]], float]:
    """Steps ``first`` … ``total - 1``: each logged, tracked and reported, a checkpoint every
    ``save_every`` steps and after the last; ``(metrics per step, seconds)``."""
    started = time.perf_counter()
    history: list[dict[str, float]] = []
    for step in range(first, loop.total):
        metrics = loop.step(step, lambda: time.perf_counter() - started)
        history.append(metrics)
        tracker.log_metrics(metrics, step + 1)
        log.info(
            "step %d/%d loss %.4f lr %.2e grad-norm %.3f %.0f tokens/s",
            step + 1,
            loop.total,
            metrics["loss"],
            metrics["lr"],
            metrics["grad_norm"],
            metrics["tokens_per_s"],
        )
        if (step + 1) % max(1, loop.cfg.save_every) == 0 or step + 1 == loop.total:
            save_checkpoint(
                ckpt_dir, step + 1, loop.net, loop.optimizer, {"settings_sha256": settings}
            )
        if on_step is not None:
            on_step(step + 1, metrics)
    return history, time.perf_counter() - started


def _model_card(
    cfg: TrainConfig,
    loop: TrainLoop,
    report: EncodeReport,
    problems: list[tuple[str, str]],
    *,
    n_records: int,
    data_sha: str,
    first: int,
    history: list[dict[str, float]],
    train_seconds: float,
) -> dict[str, Any]:
    """The artifact's model card (before evaluation): method, base, settings, data, loss mask,
    training."""
    import torch

    return {
        "method": "full" if cfg.full else "lora",
        "base": {
            "path": str(cfg.base),
            "fingerprint": base_fingerprint(cfg.base),
            "dequantized_from_gguf": str(cfg.base).endswith(".gguf"),
        },
        "hyper_parameters": cfg.hyper_parameters(),
        "data": {
            "train": {
                "file": Path(cfg.data).name,
                "sha256": data_sha,
                "records": n_records,
                "examples": len(loop.examples),
                "dataset_manifest": manifest_ref(Path(cfg.data).parent),
            },
            "left_out": _problem_summary(problems),
        },
        "loss_mask": {
            "examples": len(loop.examples),
            "masked_tokens": report.masked_tokens,
            "trained_tokens": report.trained_tokens,
            "rule": "labels -100 on system/user/template tokens; completion + end-of-turn trained",
        },
        "training": {
            "steps": loop.total,
            "resumed_from_step": first,
            "seconds_this_run": round(train_seconds, 3),
            "tokens_per_s": (
                round(loop.tokens_seen / train_seconds, 1) if train_seconds > 0 else None
            ),
            "final_loss": history[-1]["loss"] if history else None,
            "device": str(loop.device),
            "peak_memory_bytes": _peak_memory(loop.device),
            "torch": torch.__version__,
        },
        "eval": None,
    }


def _prompt_version() -> str:

    return PROMPT_VERSION


def _peak_memory(device: Any) -> int:
    import torch

    if getattr(device, "type", "cpu") == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux reports KiB


def _evaluate(
    cfg: TrainConfig,
    net: Any,
    tokenizer: Any,
    eos_ids: frozenset[int],
    pad_id: int,
    device: Any,
    out: Path,
) -> dict[str, Any]:
    """Eval loss (verified batches) and, for a gold split, ``spcl eval masking`` metrics of the
    served artifact."""

    assert cfg.eval is not None
    records, problems = read_records(cfg.eval)
    order = hashed_order([r.id for r in records], cfg.seed, "eval")
    chosen = [records[i] for i in sorted(order[: cfg.eval_limit] if cfg.eval_limit > 0 else order)]
    report = encode_records(tokenizer, chosen, max_length=cfg.max_length, eos_ids=eos_ids)
    result: dict[str, Any] = {
        "file": Path(cfg.eval).name,
        "sha256": sha256_file(cfg.eval),
        "records": len(records) + len(problems),
        "evaluated": len(chosen),
        "left_out": _problem_summary([(p.id, p.reason) for p in problems] + report.problems),
    }
    if report.examples:
        result.update(
            eval_loss(
                net,
                report.examples,
                batch_size=cfg.batch_size,
                pad_id=pad_id,
                eos_ids=eos_ids,
                device=device,
            )
        )
    if cfg.eval_generate and is_gold_file(cfg.eval):
        base = out if cfg.full else cfg.base
        adapter = None if cfg.full else out
        result["masking"] = masking_metrics(
            cfg.eval,
            out / "eval",
            base=base,
            adapter=adapter,
            limit=cfg.eval_limit,
            seed=cfg.seed,
            device=cfg.device,
            max_new_tokens=cfg.eval_max_new_tokens,
            batch_size=cfg.eval_batch_size,
        )
    log.info("eval: %s", json.dumps({k: v for k, v in _flat_eval(result).items()}))
    return result


def _flat_eval(result: dict[str, Any]) -> dict[str, float]:
    flat = {k: float(result[k]) for k in ("eval_loss",) if k in result}
    m = result.get("masking")
    if m:
        flat.update(
            {
                "eval_entity_precision": m["entity"]["precision"],
                "eval_entity_recall": m["entity"]["recall"],
                "eval_entity_f1": m["entity"]["f1"],
                "eval_doc_leak_rate": m["documents"]["leak_rate"],
                "eval_parse_success_rate": m["parse"]["success_rate"],
            }
        )
    return flat
