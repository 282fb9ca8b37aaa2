"""Training checkpoints in safetensors: the trainable weights, the optimizer state and a JSON state.

``checkpoints/step-000040/`` holds ``trainable.safetensors`` (every parameter that trains, by name),
``optimizer.safetensors`` (AdamW's per-parameter tensors, keyed ``<param index>.<name>``) and
``state.json`` (the step, the optimizer's hyper-parameter groups, the run's settings fingerprint).
No pickle is written or read, so resuming never runs code from a file. A checkpoint is written to a
temporary folder and renamed into place, so a crash never leaves a half-written one that looks
complete.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

STATE_NAME = "state.json"


def _dense(t: Any) -> Any:
    return t.detach().contiguous().cpu()


def save_checkpoint(
    folder: str | Path, step: int, net: Any, optimizer: Any, state: dict[str, Any]
) -> Path:
    """Write the checkpoint for ``step`` under ``folder`` and return its path."""
    from safetensors.torch import save_file

    root = Path(folder)
    final = root / f"step-{step:06d}"
    tmp = root / f".step-{step:06d}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    weights = {name: _dense(p) for name, p in net.named_parameters() if p.requires_grad}
    save_file(weights, str(tmp / "trainable.safetensors"))
    opt = optimizer.state_dict()
    tensors: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for idx, entry in opt["state"].items():
        for key, value in entry.items():
            if hasattr(value, "detach"):
                tensors[f"{idx}.{key}"] = _dense(value)
            else:
                scalars[f"{idx}.{key}"] = value
    save_file(tensors, str(tmp / "optimizer.safetensors"))
    doc = {"step": step, "param_groups": opt["param_groups"], "optimizer_scalars": scalars, **state}
    (tmp / STATE_NAME).write_text(json.dumps(doc, indent=2) + "\n")
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    return final


def latest_checkpoint(folder: str | Path) -> Path | None:
    """The complete checkpoint with the highest step under ``folder``, or ``None``."""
    root = Path(folder)
    done = (
        sorted(p for p in root.glob("step-*") if (p / STATE_NAME).is_file())
        if root.is_dir()
        else []
    )
    return done[-1] if done else None


def load_checkpoint(path: str | Path, net: Any, optimizer: Any) -> dict[str, Any]:
    """Restore the trainable weights and optimizer state from ``path``; returns its
    ``state.json``."""
    import torch
    from safetensors.torch import load_file

    root = Path(path)
    doc = json.loads((root / STATE_NAME).read_text())
    weights = load_file(str(root / "trainable.safetensors"))
    params = dict(net.named_parameters())
    trainable = {name for name, p in params.items() if p.requires_grad}
    if set(weights) != trainable:
        raise ValueError(f"checkpoint {root.name} does not match the model's trainable parameters")
    with torch.no_grad():
        for name, value in weights.items():
            params[name].copy_(value.to(params[name].device, params[name].dtype))
    tensors = load_file(str(root / "optimizer.safetensors"))
    state: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        idx, name = key.split(".", 1)
        state.setdefault(int(idx), {})[name] = value
    for key, value in doc.get("optimizer_scalars", {}).items():
        idx, name = key.split(".", 1)
        state.setdefault(int(idx), {})[name] = value
    optimizer.load_state_dict({"state": state, "param_groups": doc["param_groups"]})
    return doc
