"""The ``transformers`` backend: in-process generation on CPU or GPU from a local model folder or a
GGUF file.

``model`` is a folder written by ``save_pretrained`` (config, weights, tokenizer with a chat
template) or a ``.gguf`` file (transformers de-quantizes it; needs the ``gguf`` package). Nothing is
fetched from a hub: loading uses ``local_files_only``. Decoding is greedy over left-padded batches.
A document whose prompt does not fit ``max_input_tokens`` fails with ``input_too_long`` (the model
would not see its tail), and one whose generation hits ``max_tokens`` without an end-of-sequence
fails with ``output_truncated`` (its list may be cut short): both fail closed. If a whole batch
raises, each document is retried alone so one bad document fails only itself.

``adapter`` names a folder written by ``spcl train-extractor`` (a PEFT LoRA adapter in safetensors
with its ``model_card.json``): it is checked (no pickle, same prompt version, same base model) by
``spcl.extract.adapter.check_adapter`` and merged into the base weights before generation.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.adapter import AdapterError, check_adapter
from spcl.extract.backends.base import BackendUnavailable, BatchedExtractor, Extraction, timed_batch
from spcl.extract.backends.engines import (
    chat_prompt_ids,
    eos_token_ids,
    generate_padded,
    load_model,
)
from spcl.extract.prompt import PROMPT_VERSION, build_messages

log = logging.getLogger("spcl.extract.transformers")

__all__ = [
    "TransformersExtractor",
    "apply_adapter",
    "chat_prompt_ids",
    "eos_token_ids",
    "generate_padded",
    "load_model",
]


def apply_adapter(net: Any, base: str | Path, adapter: str | Path) -> Any:
    """``net`` with the checked LoRA adapter at ``adapter`` merged in (raises
    ``BackendUnavailable``)."""

    try:
        check_adapter(adapter, base)
        from peft import PeftModel
    except AdapterError as err:
        raise BackendUnavailable(f"adapter {Path(adapter).name}: {err}") from None
    except ImportError:
        raise BackendUnavailable("--adapter needs peft (pip install 'spcl[llm]')") from None
    merged = PeftModel.from_pretrained(net, str(adapter), is_trainable=False).merge_and_unload()
    merged.eval()
    return merged


class TransformersExtractor(BatchedExtractor):
    """Greedy chat generation with a local transformers model, ``batch_size`` documents at a
    time."""

    name = "transformers"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        model: str | Path,
        *,
        types: tuple[str, ...] = DEFAULT_TYPES,
        max_tokens: int = 512,
        max_input_tokens: int = 4096,
        batch_size: int = 8,
        device: str = "auto",
        dtype: str = "auto",
        adapter: str | Path | None = None,
    ):
        super().__init__(types)
        self.model = str(model)
        self.adapter = str(adapter) if adapter else None
        self.max_tokens = max_tokens
        self.max_input_tokens = max_input_tokens
        self.batch_size = max(1, batch_size)
        self.net, self.tokenizer = load_model(model, device, dtype)
        if adapter:
            self.net = apply_adapter(self.net, model, adapter)
        self.device = self.net.device
        self.eos_ids = eos_token_ids(self.net, self.tokenizer)

    def _prompt_ids(self, text: str) -> list[int]:
        return chat_prompt_ids(self.tokenizer, build_messages(text, self.types))

    def _generate(self, prompts: list[list[int]]) -> list[tuple[str, int, bool]]:
        return generate_padded(self.net, self.tokenizer, prompts, self.eos_ids, self.max_tokens)

    def _run_batch(self, texts: list[str]) -> list[Extraction]:
        started = time.perf_counter()
        results = [Extraction() for _ in texts]
        todo: list[tuple[int, list[int]]] = []
        for i, text in enumerate(texts):
            try:
                ids = self._prompt_ids(text)
            except Exception as err:  # a tokenizer failure fails this document only
                results[i].error = f"tokenize_error:{type(err).__name__}"
                continue
            if len(ids) > self.max_input_tokens:
                results[i].error = "input_too_long"
            else:
                todo.append((i, ids))
        groups = [todo] if todo else []
        try:
            outputs = [self._generate([ids for _, ids in todo])] if todo else []
        except Exception as err:
            log.warning(
                "batch generation failed (%s); retrying its %d documents one by one",
                type(err).__name__,
                len(todo),
            )
            groups, outputs = [], []
            for item in todo:
                try:
                    outputs.append(self._generate([item[1]]))
                    groups.append([item])
                except Exception as one_err:
                    results[item[0]].error = f"generation_error:{type(one_err).__name__}"
        for group, outs in zip(groups, outputs, strict=True):
            for (i, ids), (text, n, ended) in zip(group, outs, strict=True):
                results[i].generated_tokens, results[i].prompt_tokens = n, len(ids)
                if ended:
                    results[i].raw = text
                else:
                    results[i].error = "output_truncated"
        return timed_batch(results, started)

    def close(self) -> None:
        """Drop the model."""
        self.net = None
