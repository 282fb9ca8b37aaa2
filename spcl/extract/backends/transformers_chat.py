"""The chat client for a local transformers model (``spcl.extract.backends.chat``'s interface).

:class:`TransformersChat` tokenizes each request with the model's chat template, groups requests by
decoding settings and generates left-padded batches of ``batch_size``
(``spcl.extract.backends.engines``): greedy at temperature 0, seeded sampling above.
"""

from __future__ import annotations

import time
from typing import Any

from spcl.extract.backends.chat import ChatReply, ChatRequest
from spcl.extract.backends.engines import (
    chat_prompt_ids,
    eos_token_ids,
    generate_padded,
    load_model,
)


class TransformersChat:
    """Chat generation with a local transformers model, ``batch_size`` requests of equal settings
    at a time."""

    name = "transformers"

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 8,
        max_input_tokens: int = 8192,
        device: str = "auto",
        dtype: str = "auto",
        loaded: tuple[Any, Any] | None = None,
    ):
        self.model = str(model)
        self.batch_size = max(1, batch_size)
        self.max_input_tokens = max_input_tokens
        # ``loaded``: the (model, tokenizer) an extractor already holds, so one process loads the
        # weights once
        self.net, self.tokenizer = (
            loaded if loaded is not None else load_model(model, device, dtype)
        )
        self.eos_ids = eos_token_ids(self.net, self.tokenizer)

    def check(self) -> None:
        """Nothing to check: the model loaded when the client was built."""
        return None

    def _prompts(
        self, requests: list[ChatRequest], replies: list[ChatReply]
    ) -> dict[tuple[float, int, int], list[tuple[int, list[int]]]]:
        """Tokenize every request; ``{settings: [(index, ids)]}`` of those that fit, failures set
        in ``replies``."""
        groups: dict[tuple[float, int, int], list[tuple[int, list[int]]]] = {}
        for i, req in enumerate(requests):
            try:
                ids = chat_prompt_ids(self.tokenizer, req.message_dicts())
            except Exception as err:  # a tokenizer failure fails this request only
                replies[i].error = f"tokenize_error:{type(err).__name__}"
                continue
            if len(ids) > self.max_input_tokens:
                replies[i].error = "input_too_long"
                continue
            groups.setdefault(req.settings, []).append((i, ids))
        return groups

    def _generate(
        self, chunk: list[tuple[int, list[int]]], req: ChatRequest, replies: list[ChatReply]
    ) -> None:
        """Generate one batch of prompts that share ``req``'s settings; fill their replies."""
        started = time.perf_counter()
        try:
            outs = generate_padded(
                self.net,
                self.tokenizer,
                [ids for _, ids in chunk],
                self.eos_ids,
                req.max_tokens,
                temperature=req.temperature,
                seed=req.seed,
            )
        except Exception as err:  # the batch failed: fail its requests, keep the job going
            for i, _ in chunk:
                replies[i].error = f"generation_error:{type(err).__name__}"
            return
        elapsed = time.perf_counter() - started
        for (i, ids), (text, n, ended) in zip(chunk, outs, strict=True):
            replies[i].tokens, replies[i].seconds, replies[i].prompt_tokens = n, elapsed, len(ids)
            if ended:
                replies[i].text = text
            else:
                replies[i].error = "output_truncated"

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """Requests grouped by decoding settings, generated ``batch_size`` at a time; replies in
        order."""
        replies = [ChatReply() for _ in requests]
        for items in self._prompts(requests, replies).values():
            for k in range(0, len(items), self.batch_size):
                chunk = items[k : k + self.batch_size]
                self._generate(chunk, requests[chunk[0][0]], replies)
        return replies

    def close(self) -> None:
        """Drop the model."""
        self.net = None
