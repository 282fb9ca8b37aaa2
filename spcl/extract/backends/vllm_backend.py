"""The ``vllm`` backend: in-process offline batch generation on GPUs with ``vllm.LLM``.

Greedy decoding (``temperature 0``), the model's chat template (``LLM.chat``), prefix caching on (every
request shares the long system prompt), ``batch_size`` documents per ``chat`` call and ``max_tokens`` per
answer. A document whose prompt exceeds ``max_input_tokens`` fails with ``input_too_long``; an answer cut by
``max_tokens`` fails with ``output_truncated`` (fail closed). ``vllm`` is imported only when this backend
is built, so nothing else in spcl needs it (install with ``pip install 'spcl[gpu]'``).

``model`` is a local folder or a ``.gguf`` file (vLLM reads GGUF with the tokenizer of ``tokenizer``,
default: the GGUF's own). ``tensor_parallel_size``, ``gpu_memory_utilization`` and ``max_model_len`` are
passed to ``vllm.LLM``; ``llm_kwargs`` adds anything else.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.base import BackendUnavailable, BatchedExtractor, Extraction, timed_batch
from spcl.extract.prompt import PROMPT_VERSION, build_messages

log = logging.getLogger("spcl.extract.vllm")


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
        tokenizer: str | None = None,
        seed: int = 0,
        adapter: str | Path | None = None,
        llm_kwargs: dict[str, Any] | None = None,
    ):
        super().__init__(types)
        self.lora_request: Any = None
        try:
            from vllm import LLM, SamplingParams
        except ImportError as err:
            raise BackendUnavailable(f"the vllm backend needs vllm (pip install 'spcl[gpu]'): {err.name}") from None
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
        if tokenizer:
            kwargs["tokenizer"] = tokenizer
        if adapter is not None:  # a LoRA adapter of `spcl train-extractor`, served without merging
            kwargs.update(self._lora_settings(adapter))
        kwargs.update(llm_kwargs or {})
        try:
            self.llm = LLM(**kwargs)
        except (OSError, ValueError, RuntimeError) as err:
            raise BackendUnavailable(f"vLLM could not load {Path(self.model).name}: {type(err).__name__}") from None
        self.sampling = SamplingParams(temperature=0.0, max_tokens=max_tokens, seed=seed)
        self.tokenizer = self.llm.get_tokenizer()

    def _lora_settings(self, adapter: str | Path) -> dict[str, Any]:
        """Check the adapter (``spcl.finetune.artifact.check_adapter``) and prepare its ``LoRARequest``."""
        from spcl.finetune.artifact import AdapterError, check_adapter

        try:
            card = check_adapter(adapter, self.model)
            from vllm.lora.request import LoRARequest
        except AdapterError as err:
            raise BackendUnavailable(f"adapter {Path(adapter).name}: {err}") from None
        except ImportError as err:
            raise BackendUnavailable(f"this vllm has no LoRA support: {err.name}") from None
        self.lora_request = LoRARequest("spcl-extractor", 1, str(Path(adapter).resolve()))
        rank = int(card.get("hyper_parameters", {}).get("lora_rank") or 64)
        return {"enable_lora": True, "max_lora_rank": max(8, rank), "max_loras": 1}

    def _prompt_len(self, text: str) -> int:
        ids = self.tokenizer.apply_chat_template(build_messages(text, self.types), add_generation_prompt=True,
                                                 tokenize=True)
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
                outputs = self.llm.chat(conversations, self.sampling, use_tqdm=False, lora_request=self.lora_request)
            except Exception as err:  # the whole batch failed: fail its documents, keep the job going
                log.warning("vLLM batch of %d failed: %s", len(todo), type(err).__name__)
                for i in todo:
                    results[i].error = f"generation_error:{type(err).__name__}"
                return timed_batch(results, started)
            for i, out in zip(todo, outputs, strict=True):
                comp = out.outputs[0]
                results[i].generated_tokens = len(comp.token_ids)
                if comp.finish_reason == "length":
                    results[i].error = "output_truncated"
                else:
                    results[i].raw = comp.text
        return timed_batch(results, started)

    def close(self) -> None:
        """Drop the engine."""
        self.llm = None
