"""Batches of examples: right-padded tensors whose loss mask is re-verified on every batch.

``collate`` is the only way the trainer and the evaluator build a batch, so the check runs on every
batch-building path: each row's labels must equal its example's verified labels, padding must carry
``-100`` and no attention, and the counts of masked and trained tokens must add up to the batch
size.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from spcl.finetune.lossmask import IGNORE, Example, LossMaskError, verify_example


@dataclass(slots=True)
class Batch:
    """Padded ``input_ids``, ``attention_mask`` and ``labels`` (torch tensors) with their token
    counts."""

    ids: list[str]
    input_ids: Any
    attention_mask: Any
    labels: Any
    masked_tokens: int
    trained_tokens: int
    pad_tokens: int
    first_trained: int = 0  # the first position any row trains (the shortest prompt)

    def to(self, device: Any) -> Batch:
        """The same batch with its tensors on ``device``."""
        return Batch(
            self.ids,
            self.input_ids.to(device),
            self.attention_mask.to(device),
            self.labels.to(device),
            self.masked_tokens,
            self.trained_tokens,
            self.pad_tokens,
            self.first_trained,
        )


def collate(examples: Sequence[Example], pad_id: int, eos_ids: Collection[int]) -> Batch:
    """Pad ``examples`` on the right into one verified :class:`Batch`; raises
    :class:`LossMaskError`."""
    import torch

    if not examples:
        raise LossMaskError("empty_batch")
    masked = trained = 0
    for ex in examples:
        m, t = verify_example(ex, eos_ids)
        masked, trained = masked + m, trained + t
    width = max(len(ex.input_ids) for ex in examples)
    input_ids = torch.full((len(examples), width), int(pad_id), dtype=torch.long)
    labels = torch.full((len(examples), width), IGNORE, dtype=torch.long)
    attention = torch.zeros((len(examples), width), dtype=torch.long)
    for row, ex in enumerate(examples):
        n = len(ex.input_ids)
        input_ids[row, :n] = torch.tensor(ex.input_ids, dtype=torch.long)
        labels[row, :n] = torch.tensor(ex.labels, dtype=torch.long)
        attention[row, :n] = 1
    pad = int((attention == 0).sum())
    batch = Batch(
        [ex.id for ex in examples],
        input_ids,
        attention,
        labels,
        masked,
        trained,
        pad,
        min(ex.prompt_tokens for ex in examples),
    )
    verify_batch(batch, examples)
    return batch


def verify_batch(batch: Batch, examples: Sequence[Example]) -> None:
    """Check a built batch against its examples (labels per row, padding, counts); raises on any
    mismatch."""
    trained_mask = batch.labels != IGNORE
    if int(trained_mask.sum()) != batch.trained_tokens or batch.trained_tokens != sum(
        e.completion_tokens for e in examples
    ):
        raise LossMaskError("batch_trained_count_mismatch", batch.ids)
    if batch.masked_tokens + batch.trained_tokens + batch.pad_tokens != batch.labels.numel():
        raise LossMaskError("batch_token_count_mismatch", batch.ids)
    if bool((batch.labels[batch.attention_mask == 0] != IGNORE).any()):
        raise LossMaskError("padding_trained", batch.ids)
    if bool((batch.labels[:, : batch.first_trained] != IGNORE).any()):
        raise LossMaskError("prompt_token_trained", batch.ids)
    for row, ex in enumerate(examples):
        n = len(ex.input_ids)
        if batch.labels[row, :n].tolist() != list(ex.labels) or batch.input_ids[
            row, :n
        ].tolist() != list(ex.input_ids):
            raise LossMaskError("batch_row_differs_from_example", [ex.id])
