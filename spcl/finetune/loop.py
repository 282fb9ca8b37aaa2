"""The optimizer loop of ``spcl train-extractor``: AdamW over the trainable weights, a linear
warm-up/decay schedule, each epoch's examples in a seeded hashed order, dropout reseeded from
``(seed, step)`` before each step (so a resumed run continues exactly as the uninterrupted one
would), accumulated micro-batches and clipped gradients."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from spcl.finetune.collate import collate
from spcl.finetune.config import TrainConfig
from spcl.finetune.loss import completion_loss_sum
from spcl.finetune.metrics import hashed_order


def lr_at(step: int, total: int, peak: float, warmup: int) -> float:
    """Linear warm-up over ``warmup`` steps to ``peak``, then linear decay to 0 at ``total``."""
    if warmup > 0 and step < warmup:
        return peak * (step + 1) / warmup
    return peak * max(0.0, (total - step) / max(1, total - warmup))


@dataclass
class TrainLoop:
    """The optimizer loop's state: the wrapped model, its optimizer, the examples and the step
    plan."""

    cfg: TrainConfig
    net: Any
    optimizer: Any
    trainable: list[Any]
    examples: list[Any]
    pad_id: int
    eos_ids: frozenset[int]
    device: Any
    per_step: int
    steps_per_epoch: int
    total: int
    orders: dict[int, list[int]] = field(default_factory=dict)
    tokens_seen: int = 0

    @classmethod
    def start(
        cls, cfg: TrainConfig, net: Any, examples: list[Any], pad_id: int, eos_ids: frozenset[int]
    ) -> TrainLoop:
        """Put ``net`` in training mode with AdamW over its trainable weights; plan ``total``
        optimizer steps."""
        import torch

        net.train()
        trainable = [p for p in net.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(
            trainable, lr=cfg.learning_rate, weight_decay=cfg.weight_decay
        )
        per_step = cfg.batch_size * cfg.grad_accum
        steps_per_epoch = math.ceil(len(examples) / per_step)
        total = cfg.max_steps if cfg.max_steps > 0 else cfg.epochs * steps_per_epoch
        return cls(
            cfg,
            net,
            optimizer,
            trainable,
            examples,
            pad_id,
            eos_ids,
            next(net.parameters()).device,
            per_step,
            steps_per_epoch,
            total,
        )

    def _chosen(self, step: int) -> tuple[int, list[Any]]:
        """``(epoch, examples)`` of optimizer step ``step``: its slice of the epoch's hashed
        order."""
        epoch, j = divmod(step, self.steps_per_epoch)
        if epoch not in self.orders:
            self.orders = {
                epoch: hashed_order([e.id for e in self.examples], self.cfg.seed, f"epoch{epoch}")
            }
        return epoch, [
            self.examples[i]
            for i in self.orders[epoch][j * self.per_step : (j + 1) * self.per_step]
        ]

    def step(self, step: int, elapsed: Callable[[], float]) -> dict[str, float]:
        """One optimizer step (scheduled learning rate, reseeded dropout, accumulated micro-batches,
        clipped gradients); its metrics. ``elapsed()`` gives the seconds since training began, for
        tokens/s."""
        import torch

        cfg = self.cfg
        epoch, chosen = self._chosen(step)
        lr = lr_at(step, self.total, cfg.learning_rate, cfg.warmup_steps)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        torch.manual_seed(
            int.from_bytes(hashlib.sha256(f"{cfg.seed}:step:{step}".encode()).digest()[:7], "big")
        )
        step_trained = sum(e.completion_tokens for e in chosen)
        loss_sum, step_tokens = 0.0, 0
        for k in range(0, len(chosen), cfg.batch_size):
            batch = collate(chosen[k : k + cfg.batch_size], self.pad_id, self.eos_ids).to(
                self.device
            )
            loss = completion_loss_sum(self.net, batch)
            (loss / step_trained).backward()
            loss_sum += float(loss.detach())
            step_tokens += batch.masked_tokens + batch.trained_tokens
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.trainable, cfg.max_grad_norm))
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.tokens_seen += step_tokens
        seconds = elapsed()
        return {
            "loss": loss_sum / step_trained,
            "lr": lr,
            "grad_norm": grad_norm,
            "epoch": epoch,
            "trained_tokens": step_trained,
            "tokens": step_tokens,
            "tokens_per_s": self.tokens_seen / seconds if seconds > 0 else 0.0,
        }
