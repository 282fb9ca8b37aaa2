"""Evaluation of a fine-tuned extractor: the masked eval loss and the ``spcl eval masking`` metrics.

``eval_loss`` runs the eval examples through the same verified batches as training (``collate``).
``masking_metrics`` serves the saved artifact exactly as ``spcl mask`` would
(``TransformersExtractor`` with ``adapter=``, or the full model folder), writes ``gold.jsonl`` and
``pred.jsonl`` (``{id, raw}``; a document the backend failed on has no prediction and counts as a
failed parse) under ``eval/`` and scores them with ``spcl.evaluate.masking.evaluate_masking``. Those
two files hold the eval split's text and the model's output in clear: use synthetic or gold data
only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from spcl.evaluate.masking import MaskingReport, evaluate_masking
from spcl.extract.backends.transformers_backend import TransformersExtractor
from spcl.finetune.collate import collate
from spcl.finetune.loss import completion_loss_sum
from spcl.finetune.lossmask import Example
from spcl.io.jsonl import iter_jsonl, load_jsonl


def hashed_order(ids: list[str], seed: int, salt: str) -> list[int]:
    """Indices of ``ids`` ordered by ``sha256(seed:salt:id)`` (a pure function of ids and seed)."""
    return sorted(
        range(len(ids)), key=lambda i: hashlib.sha256(f"{seed}:{salt}:{ids[i]}".encode()).digest()
    )


def eval_loss(
    net: Any,
    examples: list[Example],
    *,
    batch_size: int,
    pad_id: int,
    eos_ids: Collection[int],
    device: Any,
) -> dict[str, float]:
    """Mean cross-entropy per trained token over ``examples`` (teacher forcing, completion tokens
    only)."""
    import torch

    total, tokens = 0.0, 0
    was_training = net.training
    net.eval()
    with torch.no_grad():
        for i in range(0, len(examples), batch_size):
            batch = collate(examples[i : i + batch_size], pad_id, eos_ids).to(device)
            total += float(completion_loss_sum(net, batch))
            tokens += batch.trained_tokens
    if was_training:
        net.train()
    return {
        "eval_loss": total / tokens if tokens else float("nan"),
        "eval_trained_tokens": float(tokens),
    }


def is_gold_file(path: str | Path) -> bool:
    """True when the first record of ``path`` is a gold PII record (``source_text`` and
    ``entities``)."""
    for item in iter_jsonl(path):
        rec = item.value
        return (
            item.error is None
            and isinstance(rec, dict)
            and "source_text" in rec
            and "entities" in rec
        )
    return False


def masking_metrics(
    gold_path: str | Path,
    out_dir: str | Path,
    *,
    base: str | Path,
    adapter: str | Path | None,
    limit: int,
    seed: int,
    device: str,
    max_new_tokens: int,
    batch_size: int,
) -> MaskingReport:
    """Serve the artifact on (a hashed sample of ``limit``) gold documents and score them;
    returns the metrics."""

    with open(gold_path, encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip()]  # copied verbatim into gold.jsonl below
    records = load_jsonl(gold_path)
    order = hashed_order([str(r["id"]) for r in records], seed, "eval")
    chosen = sorted(order[:limit] if limit > 0 else order)
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    gold_out, pred_out = root / "gold.jsonl", root / "pred.jsonl"
    extractor = TransformersExtractor(
        base, adapter=adapter, device=device, max_tokens=max_new_tokens, batch_size=batch_size
    )
    try:
        results = extractor.run([records[i]["source_text"] for i in chosen])
    finally:
        extractor.close()
    fd = os.open(gold_out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.writelines(lines[i] if lines[i].endswith("\n") else lines[i] + "\n" for i in chosen)
    fd = os.open(pred_out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        for i, res in zip(chosen, results, strict=True):
            if res.ok:
                fh.write(
                    json.dumps({"id": records[i]["id"], "raw": res.raw}, ensure_ascii=False) + "\n"
                )
    metrics = evaluate_masking(gold_out, pred_out)
    failures: dict[str, int] = {}
    for res in results:
        if not res.ok:
            failures[str(res.error)] = failures.get(str(res.error), 0) + 1
    metrics["backend_failures"] = dict(sorted(failures.items()))
    metrics["documents_evaluated"] = len(chosen)
    (root / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    return metrics
