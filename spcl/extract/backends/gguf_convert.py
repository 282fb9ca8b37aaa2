"""A GGUF model file → a safetensors model folder, for engines that cannot read GGUF (vLLM's CPU
build).

transformers de-quantizes the GGUF (``spcl.extract.backends.transformers_backend.load_model``) but
refuses to ``save_pretrained`` a model loaded from one, so the weights are copied into a fresh model
of the same config and that is saved, with the GGUF's tokenizer (and its chat template) beside it.
The folder is written under a temporary name and moved into place, so a half-written folder is never
mistaken for a model, and it names its source in ``spcl_source.json`` (file name, SHA-256):
:func:`cached_folder` reuses a folder whose source matches and converts otherwise.
"""

from __future__ import annotations

import copy
import json
import os
import secrets
import shutil
from pathlib import Path

from spcl.extract.backends.engines import load_model
from spcl.manifest import sha256_file

SOURCE_FILE = "spcl_source.json"


def gguf_to_folder(gguf: str | Path, out: str | Path, dtype: str = "bfloat16") -> Path:
    """Write the de-quantized model of ``gguf`` as a safetensors folder ``out`` (``dtype`` weights);
    returns it.

    ``out`` must not exist yet. The folder loads with ``AutoModelForCausalLM.from_pretrained`` and
    ``vllm.LLM``.
    """
    import torch
    from transformers import AutoModelForCausalLM

    src, dest = Path(gguf), Path(out)
    if dest.exists():
        raise FileExistsError(f"{dest} exists")
    net, tokenizer = load_model(src, device="cpu", dtype="float32")
    config = copy.deepcopy(net.config)
    # the weights are de-quantized now: no GGUF loader wanted
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    fresh = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    missing, unexpected = fresh.load_state_dict(net.state_dict(), strict=False)
    # tied embeddings have no lm_head of their own
    if [k for k in missing if "lm_head" not in k] or unexpected:
        raise ValueError(
            f"weights of {src.name} do not fit its config ({len(missing)} missing, "
            f"{len(unexpected)} unexpected)"
        )
    if getattr(fresh.config, "tie_word_embeddings", False):
        fresh.tie_weights()
    fresh.generation_config = net.generation_config
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        fresh.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / SOURCE_FILE).write_text(
            json.dumps({"gguf": src.name, "sha256": sha256_file(src), "dtype": dtype}, indent=1)
            + "\n",
            encoding="utf-8",
        )
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def cached_folder(gguf: str | Path, cache: str | Path, dtype: str = "bfloat16") -> Path:
    """The folder of ``gguf`` under ``cache`` (converted once; reused while the GGUF's SHA-256 is
    the same)."""
    src = Path(gguf)
    digest = sha256_file(src)
    dest = Path(cache) / f"{src.stem}-{dtype}-{digest[:12]}"
    marker = dest / SOURCE_FILE
    if marker.is_file() and json.loads(marker.read_text(encoding="utf-8")).get("sha256") == digest:
        return dest
    Path(cache).mkdir(parents=True, exist_ok=True)
    try:
        return gguf_to_folder(src, dest, dtype)
    except OSError:  # another process converted it meanwhile (a rename onto its folder fails)
        if marker.is_file():
            return dest
        raise
