"""The chat client for in-process offline vLLM batches (``spcl.extract.backends.chat``'s interface).

:class:`VLLMChat` loads a ``vllm.LLM`` (GPU; vLLM is imported only when a client is built) with
prefix caching and answers requests of equal decoding settings ``batch_size`` per ``LLM.chat`` call.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from spcl.extract.backends.chat import ChatReply, ChatRequest, finish_error
from spcl.extract.backends.engines import build_llm
from spcl.extract.backends.errors import BackendUnavailable

log = logging.getLogger("spcl.extract.chat")


class VLLMChat:
    """Offline batched chat generation with ``vllm.LLM`` (GPU; imported only here), prefix
    caching on."""

    name = "vllm"

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 256,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.85,
        max_model_len: int | None = None,
        seed: int = 0,
    ):
        try:
            from vllm import LLM  # noqa: F401  (fail early and clearly without vllm)
        except ImportError as err:
            raise BackendUnavailable(
                f"the vllm backend needs vllm (pip install 'spcl[gpu]'): {err.name}"
            ) from None
        self.model = str(model)
        self.batch_size = max(1, batch_size)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "enable_prefix_caching": True,
            "seed": seed,
            "tensor_parallel_size": tensor_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization,
        }
        if max_model_len:
            kwargs["max_model_len"] = max_model_len
        try:
            self.llm = build_llm(kwargs)  # on vLLM's CPU platform: eager, one in-process worker
        except (OSError, ValueError, RuntimeError) as err:
            raise BackendUnavailable(
                f"vLLM could not load {Path(self.model).name}: {type(err).__name__}"
            ) from None

    def check(self) -> None:
        """Nothing to check: the engine loaded when the client was built."""
        return None

    def _generate(
        self, chunk: list[int], requests: list[ChatRequest], replies: list[ChatReply]
    ) -> None:
        """One ``LLM.chat`` call for requests of equal settings; an answer cut by ``max_tokens`` is
        ``output_truncated``, a failed call fails its requests."""
        from vllm import SamplingParams

        temperature, max_tokens, seed = requests[chunk[0]].settings
        started = time.perf_counter()
        try:
            outputs = self.llm.chat(
                [requests[i].message_dicts() for i in chunk],
                SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed),
                use_tqdm=False,
            )
        except Exception as err:  # the whole chunk failed: fail its requests, keep the job going
            log.warning("vLLM batch of %d failed: %s", len(chunk), type(err).__name__)
            for i in chunk:
                replies[i].error = f"generation_error:{type(err).__name__}"
                replies[i].seconds = time.perf_counter() - started
            return
        elapsed = time.perf_counter() - started
        for i, out in zip(chunk, outputs, strict=True):
            comp = out.outputs[0]
            replies[i].tokens, replies[i].seconds = len(comp.token_ids), elapsed
            replies[i].prompt_tokens = len(out.prompt_token_ids or ())
            cut = finish_error(comp.finish_reason)
            if cut is not None:
                replies[i].error = cut
            else:
                replies[i].text = comp.text

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """Requests grouped by decoding settings, ``batch_size`` per ``LLM.chat`` call; replies
        in order."""
        replies = [ChatReply() for _ in requests]
        groups: dict[tuple[float, int, int], list[int]] = {}
        for i, req in enumerate(requests):
            groups.setdefault(req.settings, []).append(i)
        for items in groups.values():
            for k in range(0, len(items), self.batch_size):
                self._generate(items[k : k + self.batch_size], requests, replies)
        return replies

    def close(self) -> None:
        """Drop the engine."""
        self.llm = None
