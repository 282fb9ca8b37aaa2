"""``spcl train-extractor`` end to end on CPU (slow): a tiny random-weight Llama trained a few LoRA
steps with evaluation through ``spcl eval masking``'s code, resume from a checkpoint, full
fine-tuning, records that do not fit, the adapter served by ``spcl mask --adapter``, no text in logs
or tracker events, and the real SmolLM2-135M GGUF (de-quantized by transformers) trained one step,
its adapter served by ``spcl mask``.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from spcl.cli import main
from spcl.extract.adapter import pickle_files
from spcl.extract.backends import BackendUnavailable
from spcl.finetune.config import TrainConfig
from spcl.finetune.train import TrainError, train_extractor
from spcl.manifest import sha256_file
from spcl.synth.pii import chat_record, generate_records

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A tiny model, 6 training chat records and 3 gold validation records (synthetic, seed 42)."""
    from spcl.bench.tiny_model import write_tiny_model

    root = tmp_path_factory.mktemp("ft")
    splits = generate_records(42)
    train, val = splits["train"][:6], splits["validation"][:3]
    (root / "train-chat.jsonl").write_text(
        "".join(json.dumps(chat_record(r), ensure_ascii=False) + "\n" for r in train),
        encoding="utf-8",
    )
    (root / "validation.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in val), encoding="utf-8"
    )
    secrets = sorted(
        {r["source_text"] for r in train + val}
        | {r["target_tsv"] for r in train + val if r["target_tsv"]}
        | {e["original"] for r in train + val for e in r["entities"]}
    )
    model = write_tiny_model(root / "tiny", hidden_size=64, layers=1, seed=3)
    return {
        "root": root,
        "model": model,
        "data": root / "train-chat.jsonl",
        "eval": root / "validation.jsonl",
        "secrets": secrets,
    }


def _no_secret_in(text: str, secrets: list[str]) -> None:
    leaked = [i for i, s in enumerate(secrets) if len(s) >= 3 and s in text]
    assert not leaked, f"{len(leaked)} synthetic values found"


@pytest.fixture(scope="module")
def trained(setup: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The CLI run, in process, with every log record and the console output captured."""
    out = tmp_path_factory.mktemp("run") / "lora"
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    root_logger = logging.getLogger()
    old_level = root_logger.level
    root_logger.addHandler(handler)
    root_logger.setLevel(logging.DEBUG)
    try:
        code = main(
            [
                "-v",
                "train-extractor",
                "--data",
                str(setup["data"]),
                "--eval",
                str(setup["eval"]),
                "--base",
                str(setup["model"]),
                "--output",
                str(out),
                "--max-steps",
                "2",
                "--batch-size",
                "2",
                "--grad-accum",
                "1",
                "--lora-rank",
                "4",
                "--seed",
                "0",
                "--device",
                "cpu",
                "--save-every",
                "1",
                "--eval-max-new-tokens",
                "4",
            ]
        )
    finally:
        root_logger.removeHandler(handler)
        root_logger.setLevel(old_level)
    logs = "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in records)
    return {
        "code": code,
        "out": out,
        "logs": logs,
        "card": json.loads((out / "model_card.json").read_text()),
    }


def test_two_lora_steps_write_a_checked_artifact(
    setup: dict[str, Any], trained: dict[str, Any]
) -> None:
    from transformers import AutoTokenizer

    from spcl.finetune.lossmask import encode_records
    from spcl.finetune.records import read_records

    assert trained["code"] == 0
    out, card = trained["out"], trained["card"]
    assert (out / "adapter_model.safetensors").is_file() and (out / "adapter_config.json").is_file()
    assert pickle_files(out) == []  # checkpoints included
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["step-000001", "step-000002"]
    assert card["prompt_version"] == "extract-v4" and card["method"] == "lora"
    assert card["base"]["fingerprint"]["config_sha256"] == sha256_file(
        setup["model"] / "config.json"
    )
    assert (
        card["data"]["train"]["sha256"] == sha256_file(setup["data"])
        and card["data"]["train"]["examples"] == 6
    )
    assert (
        card["hyper_parameters"]["lora_rank"] == 4 and card["hyper_parameters"]["lora_alpha"] == 8
    )
    assert card["weights"]["adapter_model.safetensors"] == sha256_file(
        out / "adapter_model.safetensors"
    )
    # the card's loss-mask counts are what the tokenizer gives for these records
    tok = AutoTokenizer.from_pretrained(str(setup["model"]), local_files_only=True)
    eos = {tok.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|im_end|>")}
    report = encode_records(tok, read_records(setup["data"])[0], max_length=2048, eos_ids=eos)
    assert (card["loss_mask"]["masked_tokens"], card["loss_mask"]["trained_tokens"]) == (
        report.masked_tokens,
        report.trained_tokens,
    )
    assert card["training"]["steps"] == 2 and math.isfinite(card["training"]["final_loss"])
    ev = card["eval"]
    assert ev["evaluated"] == 3 and math.isfinite(ev["eval_loss"])
    # the random model's output is cut at 4 tokens: every document fails closed
    masking = ev["masking"]
    assert masking["documents_evaluated"] == 3 and masking["backend_failures"] == {
        "output_truncated": 3
    }
    assert masking["parse"]["success_rate"] == 0.0 and masking["entity"]["recall"] == 0.0
    assert json.loads((out / "eval" / "metrics.json").read_text()) == masking
    events = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["params", "metrics", "metrics", "metrics"]
    assert events[0]["prompt_version"] == "extract-v4" and events[-1]["eval_entity_f1"] == 0.0


def test_no_text_in_logs_tracker_or_card(setup: dict[str, Any], trained: dict[str, Any]) -> None:
    assert "loss mask verified on 6 examples" in trained["logs"]
    for text in (
        trained["logs"],
        (trained["out"] / "train_log.jsonl").read_text(encoding="utf-8"),
        (trained["out"] / "model_card.json").read_text(encoding="utf-8"),
        (trained["out"] / "adapter_config.json").read_text(encoding="utf-8"),
    ):
        _no_secret_in(text, setup["secrets"])


def test_no_text_reaches_mlflow(setup: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("mlflow")
    store = tmp_path / "mlruns"
    card = train_extractor(
        TrainConfig(
            data=str(setup["data"]),
            base=str(setup["model"]),
            out=str(tmp_path / "o"),
            max_steps=1,
            grad_accum=1,
            lora_rank=2,
            device="cpu",
            mlflow=str(store),
        )
    )
    assert card["training"]["steps"] == 1
    files = [p for p in store.rglob("*") if p.is_file()]
    # params and metrics arrived
    assert {"lora_rank", "loss", "prompt_version"} <= {p.name for p in files}
    text = "\n".join(f"{p.relative_to(store)}\n{p.read_text(errors='replace')}" for p in files)
    _no_secret_in(text, setup["secrets"])


def test_spcl_mask_loads_the_adapter(
    setup: dict[str, Any], trained: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import torch

    from spcl.extract.backends.transformers_backend import TransformersExtractor

    base = TransformersExtractor(setup["model"], device="cpu")
    tuned = TransformersExtractor(setup["model"], adapter=trained["out"], device="cpu")
    base_w = dict(base.net.named_parameters())
    changed = [n for n, p in tuned.net.named_parameters() if not torch.equal(p, base_w[n])]
    assert changed and all("proj" in n for n in changed)  # the trained LoRA deltas are merged in
    rows = generate_records(42)["test"][:2]
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": [r["id"] for r in rows], "text": [r["source_text"] for r in rows]}),
        tmp_path / "in" / "p.parquet",
    )
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(bytes(range(32))).decode())
    args = [
        "mask",
        "--input",
        str(tmp_path / "in"),
        "--vault",
        str(tmp_path / "vault"),
        "--backend",
        "transformers",
        "--model",
        str(setup["model"]),
        "--device",
        "cpu",
        "--max-tokens",
        "4",
        "--no-names",
    ]
    assert main([*args, "--output", str(tmp_path / "out"), "--adapter", str(trained["out"])]) == 0
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["documents"] == 2 == metrics["masked"] + metrics["failed"]
    # an adapter whose card names another prompt version is refused before any document is read
    stale = tmp_path / "stale"
    shutil.copytree(trained["out"], stale)
    card = json.loads((stale / "model_card.json").read_text())
    (stale / "model_card.json").write_text(json.dumps({**card, "prompt_version": "extract-v1"}))
    assert main([*args, "--output", str(tmp_path / "out2"), "--adapter", str(stale)]) == 1
    with pytest.raises(BackendUnavailable, match="extract-v1"):
        TransformersExtractor(setup["model"], adapter=stale, device="cpu")


def _tensors(path: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(path))


def test_resume_from_a_checkpoint_continues_exactly(setup: dict[str, Any], tmp_path: Path) -> None:
    import torch

    common = {
        "data": str(setup["data"]),
        "base": str(setup["model"]),
        "max_steps": 3,
        "grad_accum": 2,
        "lora_rank": 4,
        "lora_dropout": 0.1,
        "device": "cpu",
        "save_every": 1,
        "seed": 5,
    }
    whole = train_extractor(TrainConfig(out=str(tmp_path / "whole"), **common))

    class Crash(RuntimeError):
        pass

    def crash_at_2(step: int, metrics: dict[str, float]) -> None:
        if step == 2:
            raise Crash

    with pytest.raises(Crash):
        train_extractor(TrainConfig(out=str(tmp_path / "cut"), **common), on_step=crash_at_2)
    assert not (tmp_path / "cut" / "adapter_model.safetensors").exists()
    with pytest.raises(TrainError, match="not empty"):
        train_extractor(TrainConfig(out=str(tmp_path / "cut"), **common))
    with pytest.raises(TrainError, match="other settings"):
        train_extractor(
            TrainConfig(out=str(tmp_path / "cut"), resume=True, **{**common, "seed": 6})
        )
    resumed = train_extractor(TrainConfig(out=str(tmp_path / "cut"), resume=True, **common))
    assert (
        resumed["training"]["resumed_from_step"] == 2
        and resumed["training"]["final_loss"] == whole["training"]["final_loss"]
    )
    a, b = (
        _tensors(tmp_path / "whole" / "adapter_model.safetensors"),
        _tensors(tmp_path / "cut" / "adapter_model.safetensors"),
    )
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    # the equality is not trivial: another seed (LoRA init, order, dropout) gives other weights
    train_extractor(TrainConfig(out=str(tmp_path / "other"), **{**common, "seed": 6}))
    c = _tensors(tmp_path / "other" / "adapter_model.safetensors")
    assert any(not torch.equal(a[k], c[k]) for k in a)


def test_records_that_do_not_fit_stop_the_run_or_are_dropped_by_id(
    setup: dict[str, Any], tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    from spcl.finetune.lossmask import encode_record
    from spcl.finetune.records import read_records

    tok = AutoTokenizer.from_pretrained(str(setup["model"]), local_files_only=True)
    eos = {tok.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|im_end|>")}
    recs = read_records(setup["data"])[0]
    lengths = {
        r.id: len(encode_record(tok, r, max_length=8192, eos_ids=eos).input_ids) for r in recs
    }
    longest = max(lengths, key=lengths.__getitem__)
    limit = sorted(lengths.values())[-2]  # only the longest record does not fit
    args = [
        "train-extractor",
        "--data",
        str(setup["data"]),
        "--base",
        str(setup["model"]),
        "--max-steps",
        "1",
        "--grad-accum",
        "1",
        "--lora-rank",
        "2",
        "--device",
        "cpu",
        "--max-length",
        str(limit),
    ]
    assert main([*args, "--output", str(tmp_path / "a")]) == 1
    assert main([*args, "--output", str(tmp_path / "b"), "--drop-bad-records"]) == 0
    card = json.loads((tmp_path / "b" / "model_card.json").read_text())
    assert card["data"]["left_out"]["records"] == [
        {"id": longest, "reason": "completion_truncated"}
    ]
    assert card["data"]["train"]["examples"] == 5


def test_full_fine_tuning_writes_a_model_folder_spcl_mask_loads(
    setup: dict[str, Any], tmp_path: Path
) -> None:
    import torch

    from spcl.extract.backends.transformers_backend import TransformersExtractor

    out = tmp_path / "full"
    card = train_extractor(
        TrainConfig(
            data=str(setup["data"]),
            eval=str(setup["eval"]),
            base=str(setup["model"]),
            out=str(out),
            full=True,
            max_steps=1,
            grad_accum=1,
            lr=1e-3,
            device="cpu",
            eval_generate=False,
        )
    )
    assert card["method"] == "full" and "lora_rank" not in card["hyper_parameters"]
    assert math.isfinite(card["eval"]["eval_loss"]) and "masking" not in card["eval"]
    assert (out / "model.safetensors").is_file() and pickle_files(out) == []
    tuned = TransformersExtractor(out, device="cpu")
    base = TransformersExtractor(setup["model"], device="cpu")
    assert not torch.equal(tuned.net.lm_head.weight, base.net.lm_head.weight)


def test_real_smollm2_adapter_then_spcl_mask(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The real SmolLM2 (the run's one adapter, :mod:`tests.support.smol_adapter`, also served by
    the vLLM tests): a checked card for the de-quantized base, then ``spcl mask`` (the transformers
    backend, the adapter checked against the base and merged) through the whole mask job on three
    documents; the GGUF it came from is refused as the adapter's base (a different fingerprint).

    Kept to two steps and a few generated tokens, the adapter trained once for this file and the
    vLLM tests: the suite's time budget. This is also the real-model test of the mask job
    (tests/extract/test_backends_llm.py has the tiny models and ``transformers serve``).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spcl.extract.adapter import AdapterError, base_fingerprint, check_adapter
    from tests.support.llm_docs import DOCS, KEY_B64
    from tests.support.smol_adapter import TRAIN_RECORDS, shared_smol_adapter
    from tests.support.vllm_env import smollm2_gguf

    shared = shared_smol_adapter(tmp_path_factory)
    card = check_adapter(shared.folder, shared.base)
    assert (
        card["base"]["fingerprint"] == base_fingerprint(shared.base)
        and not card["base"]["dequantized_from_gguf"]
    )
    assert card["loss_mask"]["examples"] == TRAIN_RECORDS and card["data"]["left_out"]["count"] == 0
    assert math.isfinite(card["training"]["final_loss"]) and math.isfinite(
        card["eval"]["eval_loss"]
    )
    assert "masking" not in card["eval"]
    _no_secret_in(shared.log, shared.secrets)
    with pytest.raises(AdapterError, match="different base model"):
        check_adapter(shared.folder, smollm2_gguf())

    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": list(DOCS), "text": list(DOCS.values())}), tmp_path / "in" / "p.parquet"
    )
    mask = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "mask",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "out"),
            "--vault",
            str(tmp_path / "vault"),
            "--backend",
            "transformers",
            "--model",
            str(shared.base),
            "--adapter",
            str(shared.folder),
            "--device",
            "cpu",
            "--max-tokens",
            "8",
            "--batch-size",
            "3",
        ],
        env={**env, "SPCL_VAULT_KEY": KEY_B64},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert mask.returncode == 0, mask.stderr[-3000:]
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["documents"] == 3 == metrics["masked"] + metrics["failed"]
    assert metrics["model"] == str(shared.base) and metrics["adapter"]
    assert metrics["prompt_version"].startswith("extract-") and metrics["generated_tokens"] > 0
    ids = []
    for sub in ("masked", "failed"):
        for part in (tmp_path / "out" / sub).glob("*.parquet"):
            ids += pq.read_table(part, columns=["id"]).column("id").to_pylist()
    assert sorted(ids) == sorted(DOCS)
    for value in (
        "김가상",
        "010-0000-1234",
        "yamada@mailbox.com",
        "Jordan Sample",
        "000-111-222333",
    ):
        assert value not in mask.stderr and value not in mask.stdout


def test_gpu_check_tool_cpu_smoke(tmp_path: Path) -> None:
    """The prepared GPU check runs end to end on CPU with a small random model (plumbing only)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "gpu_check_finetune.py"),
            "--output",
            str(tmp_path),
            "--device",
            "cpu",
            "--hidden",
            "64",
            "--layers",
            "1",
            "--max-steps",
            "1",
            "--batch-size",
            "1",
            "--grad-accum",
            "1",
            "--eval-limit",
            "2",
            "--eval-max-new-tokens",
            "4",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "gpu_check_finetune.json").read_text())
    assert summary["examples"] == 1600 and summary["steps"] == 1 and summary["eval_documents"] == 2
    assert summary["trained_tokens"] > 0 and summary["masked_tokens"] > summary["trained_tokens"]
