"""What the LLM stage costs (issue 28): prompt and completion tokens per document in the mask and
generalize metrics, summed over chunked windows, kept across a retry, and turned into GPU-hours by
``spcl report``. Fast: test doubles stand in for the model (named as such); the real engines' counts
are checked in tests/e2e/test_vllm_cpu.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.cli import main
from spcl.extract.backends import Extraction, Extractor
from spcl.extract.backends.chat import ChatReply, ChatRequest
from spcl.extract.backends.chunking import ChunkingExtractor
from spcl.mask_stage import MaskJobConfig, run_mask_job
from spcl.report.llm_cost import token_facts

KEY_B64 = base64.b64encode(bytes(range(32))).decode()
TEXTS = [
    "연락처는 010-2345-6789입니다.",
    "山田太郎さんのメールは yamada@mailbox.com です。",
    "Jordan was treated at Leeds General Infirmary. Call 010-2345-6789.",
    "no personal data here at all",
]


pytestmark = pytest.mark.usefixtures("vault_key")


class CountingExtractor(Extractor):
    """Test double (not a model): answers nothing (an empty list), or a transient error for texts
    containing ``fail`` while ``failing``; reports ``len(text)`` prompt tokens and 5 generated
    tokens per document."""

    name = "counting"
    model = "counting-v0"

    def __init__(self, failing: bool = False):
        super().__init__()
        self.failing = failing

    def run(self, texts: list[str]) -> list[Extraction]:
        return [
            (
                Extraction(error="timeout", generated_tokens=0, prompt_tokens=len(t))
                if self.failing and "010" in t
                else Extraction(raw="", generated_tokens=5, prompt_tokens=len(t))
            )
            for t in texts
        ]


def _input(tmp: Path) -> Path:
    (tmp / "in").mkdir(exist_ok=True)
    pq.write_table(
        pa.table({"id": [f"d{i}" for i in range(len(TEXTS))], "text": TEXTS}),
        tmp / "in" / "p.parquet",
    )
    return tmp / "in"


def _cfg(tmp: Path, **kw: object) -> MaskJobConfig:
    return MaskJobConfig(
        str(_input(tmp)),
        str(tmp / "out"),
        str(tmp / "vault"),
        **kw,  # type: ignore[arg-type]
    )


def test_mask_metrics_carry_prompt_and_completion_tokens_per_document(tmp_path: Path) -> None:
    metrics = run_mask_job(_cfg(tmp_path), extractor=CountingExtractor())
    tokens = metrics["tokens"]
    prompt = sum(len(t) for t in TEXTS)
    assert tokens == {
        "documents": 4,
        "documents_counted": 4,
        "prompt": prompt,
        "completion": 20,
        "prompt_per_document": round(prompt / 4, 3),
        "completion_per_document": 5.0,
    }
    assert metrics["generated_tokens"] == 20


def test_tokens_of_failed_documents_count_and_a_retry_adds_to_them(tmp_path: Path) -> None:
    """A model's tokens are spent whether or not its answer is usable: a transient failure counts,
    and the rerun that retries exactly those documents adds its own tokens to the earlier run's."""
    first = run_mask_job(_cfg(tmp_path), extractor=CountingExtractor(failing=True))
    assert first["failed_transient"] == 2 and first["tokens"]["documents_counted"] == 4
    assert first["tokens"]["completion"] == 10  # two answered documents x 5
    again = run_mask_job(_cfg(tmp_path), extractor=CountingExtractor())
    retried = sum(len(t) for t in TEXTS if "010" in t)
    assert again["failed_transient"] == 0
    assert again["tokens"]["prompt"] == sum(len(t) for t in TEXTS) + retried
    assert again["tokens"]["completion"] == 10 + 10 and again["tokens"]["documents_counted"] == 6


def test_rules_backend_reports_no_token_counts_and_the_report_says_so(tmp_path: Path) -> None:
    metrics = run_mask_job(_cfg(tmp_path, backend="rules"))
    assert metrics["tokens"]["documents_counted"] == 0 and metrics["tokens"]["prompt"] == 0
    assert main(["report", str(tmp_path / "out"), "--gpu-tokens-per-s", "100"]) == 0
    facts = json.loads((tmp_path / "out" / "report" / "facts.json").read_text())["mask"]["tokens"]
    assert facts["gpu_hours"] is None and facts["rate_source"] == "none"
    assert "No token counts in this output" in (tmp_path / "out" / "report.html").read_text()


def test_report_gpu_hours_from_a_given_or_the_measured_rate(tmp_path: Path) -> None:
    metrics = run_mask_job(_cfg(tmp_path), extractor=CountingExtractor())
    given = token_facts(metrics, flagged=1_000_000, gpu_tokens_per_s=2500.0)
    assert given["completion_tokens"] == 5_000_000 and given["rate_source"] == "given"
    assert given["gpu_hours"] == pytest.approx(5_000_000 / 2500 / 3600, abs=1e-4)
    assert given["prompt_tokens"] == round(1_000_000 * metrics["tokens"]["prompt_per_document"])
    measured = token_facts({**metrics, "generated_tokens_per_second": 50.0}, flagged=3600)
    assert measured["rate_source"] == "measured" and measured["gpu_hours"] == pytest.approx(0.1)
    assert main(["report", str(tmp_path / "out"), "--gpu-tokens-per-s", "2500"]) == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert "GPU-hours for the flagged subset" in page and "given (--gpu-tokens-per-s)" in page
    for text in TEXTS:
        assert text not in page


def test_chunked_documents_sum_every_windows_tokens_even_after_a_failed_window() -> None:
    class Windows(Extractor):
        """Test double: fails the window holding ``BAD``, 2 generated tokens and ``len`` prompt
        tokens each."""

        def run(self, texts: list[str]) -> list[Extraction]:
            return [
                (
                    Extraction(error="output_truncated", generated_tokens=2, prompt_tokens=len(t))
                    if "BAD" in t
                    else Extraction(raw="", generated_tokens=2, prompt_tokens=len(t))
                )
                for t in texts
            ]

    text = "a" * 90 + "BAD" + "b" * 200
    ex = ChunkingExtractor(Windows(), max_chars=100, overlap=10)
    (res,) = ex.run([text])
    windows = -(-(len(text) - 10) // 90)
    assert res.error == "window_failed:output_truncated"
    assert (
        res.generated_tokens == 2 * windows
        and res.prompt_tokens is not None
        and res.prompt_tokens >= len(text)
    )


class CountingChat:
    """Test double (not a model) of a chat client: every reply is ``bad_response`` with 7 generated
    and 100 prompt tokens, so each document fails closed but its calls are still counted."""

    name = "openai"
    model = "counting-chat"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        self.calls += len(requests)
        return [ChatReply(error="bad_response", tokens=7, prompt_tokens=100) for _ in requests]

    def check(self) -> None:
        return None

    def close(self) -> None:
        return None


class OrgExtractor(Extractor):
    """Test double (not a model): prints the one ORG row of the texts that hold it; 4 generated and
    50 prompt tokens per document."""

    name = "org"
    model = "org-v0"

    def run(self, texts: list[str]) -> list[Extraction]:
        return [
            Extraction(
                raw="ORG\tLeeds General Infirmary" if "Leeds" in t else "",
                generated_tokens=4,
                prompt_tokens=50,
            )
            for t in texts
        ]


def test_generalize_metrics_count_the_extractor_and_chat_tokens(tmp_path: Path) -> None:
    from spcl.entity_types import DEFAULT_TYPES
    from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job

    _input(tmp_path)
    cfg = GeneralizeJobConfig(
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        vault=str(tmp_path / "v"),
        backend="openai",
        model="counting-chat",
        endpoint="http://127.0.0.1:9/v1",
        types=(*DEFAULT_TYPES, "ORG"),
    )
    chat = CountingChat()
    metrics = run_generalize_job(cfg, OrgExtractor(), chat)  # type: ignore[arg-type]
    tokens = metrics["tokens"]
    assert metrics["llm_calls"] == chat.calls > 0  # the ORG has no ladder: the chat model is asked
    assert tokens["prompt"] == 100 * chat.calls + 50 * len(TEXTS)
    assert tokens["completion"] == 7 * chat.calls + 4 * len(TEXTS)
    assert tokens["documents_counted"] == metrics["documents"] == len(TEXTS)
