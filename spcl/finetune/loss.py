"""The completion-only loss of a verified batch: summed cross-entropy over the trained tokens.

Logits are computed only from the first position whose next token is trained (``logits_to_keep``,
when the model's ``forward`` takes it): the prompt is most of every example (the extraction prompt
alone is ~800 tokens), so projecting its hidden states onto the vocabulary would cost memory for
labels that are -100 anyway. The result equals the loss over full logits (tested).
"""

from __future__ import annotations

import inspect
from typing import Any

from spcl.finetune.collate import Batch
from spcl.finetune.lossmask import IGNORE


def _takes_logits_to_keep(net: Any) -> bool:
    base = net.get_base_model() if hasattr(net, "get_base_model") else net
    return "logits_to_keep" in inspect.signature(base.forward).parameters


def completion_loss_sum(net: Any, batch: Batch, *, slice_logits: bool = True) -> Any:
    """Sum of the token cross-entropies over the batch's trained labels (a scalar tensor with
    gradient)."""
    import torch
    import torch.nn.functional as F

    width = batch.input_ids.shape[1]
    first = 0
    kwargs: dict[str, Any] = {}
    if slice_logits and batch.first_trained > 0 and _takes_logits_to_keep(net):
        first = batch.first_trained - 1  # the logits at position p predict token p + 1
        kwargs["logits_to_keep"] = torch.arange(first, width - 1, device=batch.input_ids.device)
    logits = net(input_ids=batch.input_ids, attention_mask=batch.attention_mask, **kwargs).logits
    if not kwargs:
        logits = logits[:, :-1]
    targets = batch.labels[:, first + 1 :]
    return F.cross_entropy(
        logits.flatten(0, 1).float(), targets.flatten(), ignore_index=IGNORE, reduction="sum"
    )
