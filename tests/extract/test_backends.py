"""Backends without a model: the interface, the rules backend's contract, the OpenAI client's
error paths."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from spcl.extract.backends import (
    BackendUnavailable,
    Extraction,
    ExtractionError,
    Extractor,
    make_extractor,
)
from spcl.extract.backends.openai_backend import OpenAIExtractor
from spcl.extract.backends.rules_backend import (
    RulesExtractor,
    en_person_names,
    format_rows,
    ja_person_names,
    ko_person_names,
    rules_rows,
)
from spcl.extract.contract import parse_extraction


class _Fixed(Extractor):
    name = "fixed"

    def run(self, texts: list[str]) -> list[Extraction]:
        return [
            Extraction(raw="PHONE\t1") if "ok" in t else Extraction(error="timeout") for t in texts
        ]


def test_extract_returns_raw_or_raises_with_reasons() -> None:
    assert _Fixed().extract(["ok", "ok too"]) == ["PHONE\t1", "PHONE\t1"]
    with pytest.raises(ExtractionError) as err:
        _Fixed().extract(["ok", "bad", "worse"])
    assert err.value.failures == {1: "timeout", 2: "timeout"}
    assert "worse" not in str(err.value)
    assert "010" not in repr(Extraction(raw="secret 010-1234-5678"))


def test_make_extractor_validates_arguments() -> None:
    assert make_extractor("rules").name == "rules"
    with pytest.raises(ValueError, match="unknown backend"):
        make_extractor("gpt")
    with pytest.raises(ValueError, match="needs --model"):
        make_extractor("openai", endpoint="http://127.0.0.1:1/v1")
    with pytest.raises(ValueError, match="needs --endpoint"):
        make_extractor("openai", model="m")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "연락처 010-1234-5678, 주민번호 900101-1234568",
            [("PHONE", "010-1234-5678"), ("RRN", "900101-1234568")],
        ),
        (
            "김모(33)씨는 A씨(42)와 박씨를 만났다",
            [("PERSON", "김모"), ("PERSON", "A씨"), ("PERSON", "박씨")],
        ),
        (
            "보호자: 어머니 강서윤, 신청인 한유진의 번호",
            [("REL", "어머니"), ("PERSON", "강서윤"), ("PERSON", "한유진")],
        ),
        (
            "山田太郎さんと佐藤さんの母親",
            [("PERSON", "山田太郎"), ("PERSON", "佐藤"), ("REL", "母親")],
        ),
        (
            "Dr. Jane Roe and her husband; card 4111 1111 1111 1111",
            [("PERSON", "Jane Roe"), ("REL", "husband"), ("CARD", "4111 1111 1111 1111")],
        ),
        ("Call (335) 555-0109, not 800-555-0100", [("PHONE", "(335) 555-0109")]),
        ("대표번호 1588-0000으로 문의하세요. 제품 코드 AB-1234", []),
    ],
)
def test_rules_rows(text: str, expected: list[tuple[str, str]]) -> None:
    assert rules_rows(text) == expected


def test_rules_output_meets_the_contract() -> None:
    texts = [
        "김가상 씨 연락처 010-0000-1234, 이메일 kim@mailbox.com",
        "",
        "東京都渋谷区神宮前1-2-3 山田太郎さん",
    ]
    raws = RulesExtractor().extract(texts)
    assert raws[1] == ""
    for raw, text in zip(raws, texts, strict=True):
        parsed = parse_extraction(raw, text)
        assert parsed.parse_success and not parsed.hallucinated_rows
        assert len(parsed.candidates) == raw.count("\n")
    assert format_rows([("PERSON", "a")]) == "PERSON\ta\n"


def test_rules_respects_types_and_skips_invalid_hits() -> None:
    ex = RulesExtractor(types=("PHONE",))
    assert ex.extract(["김가상 씨 010-0000-1234"]) == ["PHONE\t010-0000-1234\n"]
    assert "RRN" not in rules_rows("번호 900101-1234567")  # failed check digit, validated=False


def test_name_finders_positions() -> None:
    text = "山田太郎さん"
    assert ja_person_names(text) == [(0, "山田太郎")]
    assert ja_person_names("東京で会った") == []
    assert ko_person_names("장군이 왔다") == []  # mecab-ko tags it 인명; the shape check drops it
    assert en_person_names("Morgan Doe met Main Street") == [(0, "Morgan Doe")]


# --- OpenAI-compatible client: error paths against a failure-injecting loopback stub --------------
# The happy path runs against a real server (`transformers serve`) in test_backends_llm.py; this
# stub exists only to produce what a real server will not do on demand (503s, hangs, broken JSON).


class _Stub(BaseHTTPRequestHandler):
    script: ClassVar[list[Any]] = []
    seen: ClassVar[list[dict]] = []

    def log_message(self, *args: Any) -> None:
        return None

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        with contextlib.suppress(BrokenPipeError):  # the client timed out first (the timeout test)
            self.end_headers()
            self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(200, json.dumps({"data": [{"id": "stub-model"}]}).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        action = type(self).script.pop(0) if type(self).script else "ok"
        if action == "hang":
            time.sleep(1.5)
            action = "ok"
        if isinstance(action, int):
            self._send(action, b'{"error": "x"}')
        elif action == "garbage":
            self._send(200, b"not json")
        elif action == "length":
            self._send(
                200,
                json.dumps(
                    {
                        "choices": [
                            {"message": {"content": "PHONE\t0"}, "finish_reason": "length"}
                        ],
                        "usage": {"completion_tokens": 7},
                    }
                ).encode(),
            )
        else:
            content = "<think>hm</think>PHONE\t010-1234-5678"
            self._send(
                200,
                json.dumps(
                    {
                        "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                        "usage": {"completion_tokens": 5},
                    }
                ).encode(),
            )


@pytest.fixture
def stub() -> Any:
    """A loopback HTTP server that answers per ``_Stub.script``."""
    _Stub.script, _Stub.seen = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _client(server: Any, **kw: Any) -> OpenAIExtractor:
    opts = {"concurrency": 2, "timeout_s": 1.0, "retries": 2, **kw}
    return OpenAIExtractor(f"http://127.0.0.1:{server.server_address[1]}/v1", "stub-model", **opts)


def test_openai_retries_then_succeeds(stub: Any) -> None:
    _Stub.script = [503, 429]
    with _client(stub, concurrency=1) as ex:
        assert ex.check() == ["stub-model"]
        [res] = ex.run(["연락처 010-1234-5678"])
    assert res.ok and res.generated_tokens == 5
    assert parse_extraction(res.raw or "", "연락처 010-1234-5678").candidates == [
        ("PHONE", "010-1234-5678")
    ]
    assert len(_Stub.seen) == 3
    req = _Stub.seen[-1]
    assert (
        req["temperature"] == 0.0
        and req["model"] == "stub-model"
        and req["messages"][0]["role"] == "system"
    )
    assert req["messages"][1]["content"] == "연락처 010-1234-5678"


def test_openai_per_document_failures(stub: Any) -> None:
    _Stub.script = [400, "length", "garbage", "garbage", "garbage"]
    with _client(stub, concurrency=1) as ex:
        results = ex.run(["a", "b", "c"])
    assert [r.error for r in results] == ["http_400", "output_truncated", "bad_response"]
    assert results[1].generated_tokens == 7


def test_openai_timeout(stub: Any) -> None:
    _Stub.script = ["hang", "hang"]
    with _client(stub, concurrency=1, timeout_s=0.3, retries=1) as ex:
        [res] = ex.run(["a"])
    assert res.error == "timeout"


def test_openai_bounded_concurrency_keeps_order(stub: Any) -> None:
    with _client(stub, concurrency=4) as ex:
        results = ex.run([f"doc {i}" for i in range(12)])
    assert all(r.ok for r in results) and len(_Stub.seen) == 12


def test_openai_unreachable_is_clear() -> None:
    ex = OpenAIExtractor("http://127.0.0.1:9/v1", "m", retries=1, timeout_s=2)
    with pytest.raises(
        BackendUnavailable,
        match=r"cannot reach the OpenAI-compatible endpoint http://127.0.0.1:9/v1",
    ):
        ex.check()
    with pytest.raises(BackendUnavailable, match="became unreachable"):
        ex.run(["a"])
    ex.close()
    with pytest.raises(ValueError, match="http"):
        OpenAIExtractor("127.0.0.1:8000", "m")
