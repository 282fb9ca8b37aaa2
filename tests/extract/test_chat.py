"""The shared chat client (``spcl.extract.backends.chat``) against the scripted OpenAI-compatible
server: replies in request order, reason codes per request, settings sent as asked, no text in reprs
or errors."""

from __future__ import annotations

import pytest

from spcl.annotate.teachers import make_client, parse_teacher, teacher_request
from spcl.extract.backends import BackendUnavailable
from spcl.extract.backends.chat import ChatReply, ChatRequest
from spcl.extract.backends.openai_chat import OpenAIChat
from spcl.extract.backends.registry import make_chat
from tests.support.scripted_llm import MODEL_NAME, scripted_server

SECRET = "김가상 010-1234-5678"


def _script(document: str, attempt: int) -> str | int | tuple[str, float]:
    if document.startswith("fail"):
        return 503
    if document.startswith("flaky"):
        return 503 if attempt == 1 else f"ok {document}"
    if document.startswith("hang"):
        return ("hang", 1.5)
    return f"echo {document}"


def test_replies_in_order_with_reason_codes() -> None:
    docs = [f"doc {i}" for i in range(10)] + ["fail 1", "flaky 1", "hang 1", SECRET]
    requests = [ChatRequest.of([{"role": "user", "content": d}], temperature=0.0) for d in docs]
    with scripted_server(_script) as server:
        chat = OpenAIChat(server.endpoint, MODEL_NAME, concurrency=4, timeout_s=0.5, retries=1)
        try:
            assert chat.check() == [MODEL_NAME]
            replies = chat.complete(requests)
        finally:
            chat.close()
    assert [r.text for r in replies[:10]] == [f"echo doc {i}" for i in range(10)]
    assert replies[10].error == "http_503" and not replies[10].ok
    assert replies[11].ok and replies[11].text == "ok flaky 1"  # retried after the 503 (back-off)
    assert replies[12].error == "timeout"
    assert replies[13].ok and server.attempts["fail 1"] == 2  # one try + one retry
    # reprs never show text
    assert SECRET not in repr(replies[13]) and SECRET not in repr(requests[13])


def test_teacher_requests_are_greedy_and_bounded() -> None:
    req = teacher_request([{"role": "user", "content": "x"}], {"max_tokens": 17, "device": "cpu"})
    assert req.settings == (0.0, 17, 0)
    assert teacher_request([{"role": "user", "content": "x"}]).max_tokens == 256
    spec = parse_teacher("openai:m@http://127.0.0.1:9/v1")
    # foreign
    client = make_client(spec, {"device": "cpu", "batch_size": 3, "retries": 0, "timeout_s": 2.0})
    # options of other backends are ignored; an unreachable server is BackendUnavailable, naming no
    # text
    try:
        with pytest.raises(BackendUnavailable, match="cannot reach"):
            client.check()
        with pytest.raises(BackendUnavailable, match="became unreachable") as err:
            client.complete([ChatRequest.of([{"role": "user", "content": SECRET}])])
        assert SECRET not in str(err.value)
    finally:
        client.close()


def test_make_chat_names_what_is_missing() -> None:
    assert make_chat("rules") is None
    with pytest.raises(ValueError, match="needs --model"):
        make_chat("openai", endpoint="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="needs --endpoint"):
        make_chat("openai", model="m")
    with pytest.raises(ValueError, match="unknown chat backend"):
        make_chat("llamafile", model="m")
    assert ChatReply(text="t").ok and not ChatReply(error="timeout").ok


def test_transient_statuses_are_retried_with_retry_after_and_permanent_ones_are_not() -> None:
    """One classification decides both what the client retries and what the jobs leave retryable
    (issue 21): 425 and 429 are retried like 503 (the SDK alone never retried 425), a 400 is asked
    once, and the server's ``Retry-After`` is the wait between tries."""
    import time

    from spcl.extract.backends.transient import RetryPolicy, is_transient, retry_after_seconds

    def script(document: str, attempt: int) -> str | int:
        status = int(document.split()[0])
        return status if attempt <= 2 else f"ok {document}"

    docs = ["425 a", "429 b", "503 c", "400 d", "422 e"]
    with scripted_server(script, retry_after="1") as server:
        chat = OpenAIChat(server.endpoint, MODEL_NAME, concurrency=5, timeout_s=5.0, retries=2)
        try:
            started = time.perf_counter()
            replies = chat.complete(
                [ChatRequest.of([{"role": "user", "content": d}]) for d in docs]
            )
            elapsed = time.perf_counter() - started
        finally:
            chat.close()
    assert [r.text for r in replies[:3]] == ["ok 425 a", "ok 429 b", "ok 503 c"]
    assert [r.error for r in replies[3:]] == ["http_400", "http_422"]
    assert [server.attempts[d] for d in docs] == [3, 3, 3, 1, 1]
    # two waits of Retry-After: 1 s (the default back-off would be 0.5 + 1 s less jitter)
    assert elapsed >= 2.0
    assert [
        is_transient(f"http_{c}") for c in (408, 409, 425, 429, 500, 503, 599, 400, 404, 413)
    ] == [True] * 7 + [False] * 3
    assert (
        retry_after_seconds({"Retry-After": "7"}) == 7.0
        and retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    )
    assert (
        retry_after_seconds({"Retry-After": "soon"}) is None
        and RetryPolicy(3).delay(0, 120.0) == 60.0
    )
    assert (
        all(0.375 <= RetryPolicy(3).delay(0) <= 0.5 for _ in range(50))
        and RetryPolicy(3).delay(9) <= 8.0
    )
