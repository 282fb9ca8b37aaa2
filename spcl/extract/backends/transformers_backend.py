"""The ``transformers`` backend: in-process generation on CPU or GPU from a local model folder or a GGUF file.

``model`` is a folder written by ``save_pretrained`` (config, weights, tokenizer with a chat template) or a
``.gguf`` file (transformers de-quantizes it; needs the ``gguf`` package). Nothing is fetched from a hub:
loading uses ``local_files_only``. Decoding is greedy over left-padded batches. A document whose prompt
does not fit ``max_input_tokens`` fails with ``input_too_long`` (the model would not see its tail), and one
whose generation hits ``max_new_tokens`` without an end-of-sequence fails with ``output_truncated`` (its
list may be cut short): both fail closed. If a whole batch raises, each document is retried alone so one
bad document fails only itself.

``adapter`` names a folder written by ``spcl train-extractor`` (a PEFT LoRA adapter in safetensors with its
``model_card.json``): it is checked (no pickle, same prompt version, same base model) by
``spcl.extract.adapter.check_adapter`` and merged into the base weights before generation.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.base import BackendUnavailable, BatchedExtractor, Extraction, timed_batch
from spcl.extract.prompt import PROMPT_VERSION, build_messages

log = logging.getLogger("spcl.extract.transformers")


def load_model(model: str | Path, device: str = "auto", dtype: str = "auto") -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a local folder or ``.gguf`` file, on ``device`` (``auto``: CUDA if present)."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as err:
        raise BackendUnavailable(
            f"the transformers backend needs torch and transformers (pip install 'spcl[llm]'): {err.name}"
        ) from None
    path = Path(model)
    if not path.exists():
        raise BackendUnavailable(f"model path {path} does not exist (the transformers backend loads local files)")
    kwargs: dict[str, Any] = {"local_files_only": True}
    if path.is_file():
        if path.suffix != ".gguf":
            raise BackendUnavailable(f"model file {path.name} is not a .gguf file; pass a folder or a GGUF file")
        source, kwargs["gguf_file"] = str(path.parent), path.name
    else:
        source = str(path)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    torch_dtype: Any
    if dtype == "auto":
        torch_dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    else:
        torch_dtype = getattr(torch, dtype)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        net = AutoModelForCausalLM.from_pretrained(source, dtype=torch_dtype, **kwargs)
    except (OSError, ValueError) as err:
        raise BackendUnavailable(f"cannot load the model at {path}: {type(err).__name__}") from None
    net.to(device)
    net.eval()
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    if not getattr(tokenizer, "chat_template", None):
        raise BackendUnavailable(f"the tokenizer at {path} has no chat template")
    return net, tokenizer


def chat_prompt_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    """The token ids of ``messages`` under the tokenizer's chat template, with the generation prompt.

    The one place the prompt is tokenized: inference here and fine-tuning (``spcl.finetune.lossmask``).
    """
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
    if isinstance(ids, dict) or hasattr(ids, "keys"):  # some tokenizers return a BatchEncoding
        ids = ids["input_ids"]
    return [int(i) for i in ids]


def eos_token_ids(net: Any, tokenizer: Any) -> frozenset[int]:
    """The end-of-turn ids generation stops at (the model's generation config, else the tokenizer's eos)."""
    eos = net.generation_config.eos_token_id if getattr(net, "generation_config", None) else None
    ids = [e for e in (eos if isinstance(eos, list) else [eos]) if e is not None] or [tokenizer.eos_token_id]
    return frozenset(int(e) for e in ids)


def generate_padded(net: Any, tokenizer: Any, prompts: list[list[int]], eos_ids: frozenset[int],
                    max_new_tokens: int, *, temperature: float = 0.0, seed: int = 0) -> list[tuple[str, int, bool]]:
    """Generate for left-padded ``prompts`` in one batch: ``(text, generated tokens, ended)`` per prompt.

    ``ended`` is True when an end-of-turn id was generated (the text stops before it); otherwise the output
    hit ``max_new_tokens``. Greedy at temperature 0, else seeded sampling (top-p 1, no top-k).
    """
    import torch

    width = max(len(p) for p in prompts)
    pad = int(tokenizer.pad_token_id)
    device = net.device
    input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=device)
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    sample = temperature > 0
    if sample:
        torch.manual_seed(seed)
    with torch.inference_mode():
        out = net.generate(input_ids=input_ids, attention_mask=attention, max_new_tokens=max_new_tokens,
                           do_sample=sample, temperature=temperature if sample else None,
                           top_p=1.0 if sample else None, top_k=0 if sample else None, pad_token_id=pad)
    results: list[tuple[str, int, bool]] = []
    for row in out[:, width:].tolist():
        end = next((k for k, tok in enumerate(row) if tok in eos_ids), None)
        n = len(row) if end is None else end + 1
        results.append((tokenizer.decode(row[: n if end is None else end], skip_special_tokens=True), n,
                        end is not None))
    return results


def apply_adapter(net: Any, base: str | Path, adapter: str | Path) -> Any:
    """``net`` with the checked LoRA adapter at ``adapter`` merged in (raises ``BackendUnavailable``)."""
    from spcl.extract.adapter import AdapterError, check_adapter

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
    """Greedy chat generation with a local transformers model, ``batch_size`` documents at a time."""

    name = "transformers"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        model: str | Path,
        *,
        types: tuple[str, ...] = DEFAULT_TYPES,
        max_new_tokens: int = 512,
        max_input_tokens: int = 4096,
        batch_size: int = 8,
        device: str = "auto",
        dtype: str = "auto",
        adapter: str | Path | None = None,
    ):
        super().__init__(types)
        self.model = str(model)
        self.adapter = str(adapter) if adapter else None
        self.max_new_tokens = max_new_tokens
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
        return generate_padded(self.net, self.tokenizer, prompts, self.eos_ids, self.max_new_tokens)

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
            log.warning("batch generation failed (%s); retrying its %d documents one by one",
                        type(err).__name__, len(todo))
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
