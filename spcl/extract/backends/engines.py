"""The in-process engines every client of ``spcl.extract.backends`` shares: loading a local
transformers model and generating from left-padded batches, and building a ``vllm.LLM`` for this
machine (CPU or GPU).

The extractors (``transformers_backend``, ``vllm_backend``), the chat clients (``chat``) and
fine-tuning use these; none of them imports another client's module for them. torch, transformers
and vllm are imported inside the functions, so importing this module needs none of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from spcl.extract.backends.errors import BackendUnavailable


def load_model(model: str | Path, device: str = "auto", dtype: str = "auto") -> tuple[Any, Any]:
    """``(model, tokenizer)`` from a local folder or ``.gguf`` file, on ``device`` (``auto``:
    CUDA if present)."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as err:
        raise BackendUnavailable(
            "the transformers backend needs torch and transformers (pip install 'spcl[llm]'):"
            f" {err.name}"
        ) from None
    path = Path(model)
    if not path.exists():
        raise BackendUnavailable(
            f"model path {path} does not exist (the transformers backend loads local files)"
        )
    kwargs: dict[str, Any] = {"local_files_only": True}
    if path.is_file():
        if path.suffix != ".gguf":
            raise BackendUnavailable(
                f"model file {path.name} is not a .gguf file; pass a folder or a GGUF file"
            )
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
    # transformers' wrapper of ``to`` is typed for a model argument, not a device
    cast(Any, net).to(device)
    net.eval()
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    if not getattr(tokenizer, "chat_template", None):
        raise BackendUnavailable(f"the tokenizer at {path} has no chat template")
    return net, tokenizer


def chat_prompt_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    """The token ids of ``messages`` under the tokenizer's chat template, with the generation
    prompt.

    The one place the prompt is tokenized: inference here and fine-tuning
    (``spcl.finetune.lossmask``).
    """
    ids = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True, return_dict=False
    )
    if isinstance(ids, dict) or hasattr(ids, "keys"):  # some tokenizers return a BatchEncoding
        ids = ids["input_ids"]
    return [int(i) for i in ids]


def eos_token_ids(net: Any, tokenizer: Any) -> frozenset[int]:
    """The end-of-turn ids generation stops at (the model's generation config, else the
    tokenizer's eos)."""
    eos = net.generation_config.eos_token_id if getattr(net, "generation_config", None) else None
    ids = [e for e in (eos if isinstance(eos, list) else [eos]) if e is not None] or [
        tokenizer.eos_token_id
    ]
    return frozenset(int(e) for e in ids)


def generate_padded(
    net: Any,
    tokenizer: Any,
    prompts: list[list[int]],
    eos_ids: frozenset[int],
    max_new_tokens: int,
    *,
    temperature: float = 0.0,
    seed: int = 0,
) -> list[tuple[str, int, bool]]:
    """Generate for left-padded ``prompts`` in one batch: ``(text, generated tokens, ended)`` per
    prompt.

    ``ended`` is True when an end-of-turn id was generated (the text stops before it); otherwise the
    output hit ``max_new_tokens``. Greedy at temperature 0, else seeded sampling (top-p 1, no
    top-k).
    """
    import torch

    width = max(len(p) for p in prompts)
    pad = int(tokenizer.pad_token_id)
    device = net.device
    input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=device)
    attention = torch.tensor(
        [[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device
    )
    sample = temperature > 0
    if sample:
        torch.manual_seed(seed)
    with torch.inference_mode():
        out = net.generate(
            input_ids=input_ids,
            attention_mask=attention,
            max_new_tokens=max_new_tokens,
            do_sample=sample,
            temperature=temperature if sample else None,
            top_p=1.0 if sample else None,
            top_k=0 if sample else None,
            pad_token_id=pad,
        )
    results: list[tuple[str, int, bool]] = []
    for row in out[:, width:].tolist():
        end = next((k for k, tok in enumerate(row) if tok in eos_ids), None)
        n = len(row) if end is None else end + 1
        results.append(
            (
                tokenizer.decode(row[: n if end is None else end], skip_special_tokens=True),
                n,
                end is not None,
            )
        )
    return results


CPU_ENV_DEFAULTS: dict[str, str] = {
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
}
"""Environment a CPU engine gets unless already set: a 1 GiB KV cache (without it vLLM asks for most
of the machine's memory), the engine core in this process (no extra process on a small machine)."""


def on_cpu() -> bool:
    """True when the installed vLLM runs on its CPU platform (``vllm-cpu``)."""
    try:
        from vllm.platforms import current_platform
    except ImportError:
        return False
    return bool(current_platform.is_cpu())


def engine_kwargs(kwargs: dict[str, Any], cpu: bool | None = None) -> dict[str, Any]:
    """``vllm.LLM`` arguments for this machine: on the CPU platform eager mode, one in-process
    worker and no GPU memory share, unless ``kwargs`` says otherwise.

    >>> engine_kwargs({"model": "m", "gpu_memory_utilization": 0.85}, cpu=True)["enforce_eager"]
    True
    >>> conf = {"model": "m", "gpu_memory_utilization": 0.85}
    >>> "gpu_memory_utilization" in engine_kwargs(conf, cpu=True)
    False
    >>> engine_kwargs({"model": "m"}, cpu=False)
    {'model': 'm'}
    """
    if not (on_cpu() if cpu is None else cpu):
        return dict(kwargs)
    out = {k: v for k, v in kwargs.items() if k != "gpu_memory_utilization"}
    out.setdefault("enforce_eager", True)
    out.setdefault("distributed_executor_backend", "uni")
    return out


def build_llm(kwargs: dict[str, Any]) -> Any:
    """``vllm.LLM(**engine_kwargs(kwargs))``; on the CPU platform :data:`CPU_ENV_DEFAULTS` are set
    first where the environment does not set them. Raises what ``vllm.LLM`` raises."""
    from vllm import LLM

    cpu = on_cpu()
    if cpu:
        for name, value in CPU_ENV_DEFAULTS.items():
            os.environ.setdefault(name, value)
    return LLM(**engine_kwargs(kwargs, cpu))
