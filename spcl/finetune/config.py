"""The settings of ``spcl train-extractor`` (:class:`TrainConfig`): paths, model, LoRA and optimizer
settings, evaluation. The settings that change the trained weights go into the model card
(:meth:`hyper_parameters`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from spcl.config_models import TrainerSettings


class TrainConfig(TrainerSettings):
    """Everything a run depends on (paths, model, LoRA and optimizer settings, evaluation)."""

    data: str
    base: str
    out: str
    eval: str | None = None
    full: bool = False
    lora_rank: int = Field(16, ge=1)
    lora_alpha: int | None = None
    lora_dropout: float = 0.05
    target_modules: str = "all-linear"
    epochs: int = Field(1, ge=1)
    max_steps: int = Field(0, ge=0)
    batch_size: int = Field(1, ge=1)
    grad_accum: int = Field(8, ge=1)
    lr: float | None = None
    weight_decay: float = 0.0
    warmup_steps: int = 0
    max_grad_norm: float = 1.0
    max_length: int = Field(2048, ge=1)
    drop_bad_records: bool = False
    seed: int = 0
    device: str = "auto"
    dtype: str = "auto"
    save_every: int = 100
    resume: bool = False
    eval_limit: int = Field(0, ge=0)
    eval_max_new_tokens: int = 256
    eval_batch_size: int = 8
    eval_generate: bool = True
    mlflow: str | None = None

    @property
    def learning_rate(self) -> float:
        """``lr``, or the default: 2e-4 for LoRA, 1e-5 for full fine-tuning."""
        return self.lr if self.lr is not None else (1e-5 if self.full else 2e-4)

    def hyper_parameters(self) -> dict[str, Any]:
        """The settings that change the trained weights (what the model card and the tracker
        record)."""
        keys = (
            "full",
            "lora_rank",
            "lora_dropout",
            "target_modules",
            "epochs",
            "max_steps",
            "batch_size",
            "grad_accum",
            "weight_decay",
            "warmup_steps",
            "max_grad_norm",
            "max_length",
            "seed",
            "dtype",
        )
        hp = {k: getattr(self, k) for k in keys}
        hp["lora_alpha"] = self.lora_alpha if self.lora_alpha is not None else 2 * self.lora_rank
        hp["lr"] = self.learning_rate
        if self.full:
            for k in ("lora_rank", "lora_alpha", "lora_dropout", "target_modules"):
                hp.pop(k)
        return hp
