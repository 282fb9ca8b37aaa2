"""The openai backend's timeout bounds the whole request: a real local HTTP server that drips its
answer (or its headers) one byte at a time cannot hold a request past it."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from spcl.extract.backends.chat import ChatRequest
from spcl.extract.backends.openai_chat import OpenAIChat

REPLY = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "PERSON\tA"},
            }
        ],
    }
).encode()


def _serve(sock: socket.socket, mode: str, stop: threading.Event) -> None:
    served = 0
    while not stop.is_set():
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        this = ("drip_body" if served == 0 else "fast") if mode == "drip_once" else mode
        served += 1
        threading.Thread(target=_answer, args=(conn, this, stop), daemon=True).start()


def _read_request(conn: socket.socket) -> bool:
    """Read one HTTP request (headers and body) from ``conn``; False when the client closed it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(
            h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
        )
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        body += chunk
    return True


def _answer(conn: socket.socket, mode: str, stop: threading.Event) -> None:
    """Answer on ``conn``: ``fast`` serves every request the client sends on it (keep-alive, as a
    real server does, so a pooled connection is never closed under the client); the drip modes
    answer one request a byte at a time."""
    headers = (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(REPLY)}\r\n\r\n"
    ).encode()
    out = headers + REPLY
    with conn:
        try:
            if mode == "fast":
                while not stop.is_set() and _read_request(conn):
                    conn.sendall(out)
                return
            if not _read_request(conn):
                return
            start = 0 if mode == "drip_headers" else len(headers)
            conn.sendall(out[:start])
            # one byte every 0.2 s: each read is quick, the request is not
            for i in range(start, len(out)):
                if stop.is_set():
                    return
                conn.sendall(out[i : i + 1])
                time.sleep(0.2)
        except OSError:
            return


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    stop = threading.Event()
    threading.Thread(target=_serve, args=(sock, request.param, stop), daemon=True).start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    stop.set()
    sock.close()


@pytest.mark.parametrize("server", ["drip_body", "drip_headers"], indirect=True)
def test_a_dripping_server_cannot_hold_a_request_past_the_timeout(server: str) -> None:
    chat = OpenAIChat(server, "m", timeout_s=1.5, retries=0)
    try:
        started = time.monotonic()
        reply = chat.ask(ChatRequest.of([{"role": "user", "content": "x"}]))
        took = time.monotonic() - started
    finally:
        chat.close()
    assert reply.error == "timeout" and reply.text is None
    assert took < 3.0  # the drip would take ≈ 40 s (200 bytes × 0.2 s)


@pytest.mark.parametrize("server", ["fast"], indirect=True)
def test_a_prompt_server_still_answers_with_the_deadline_in_place(server: str) -> None:
    """The deadline machinery does not cut answers that come in time (10 s: room for a loaded CI
    machine)."""
    chat = OpenAIChat(server, "m", timeout_s=10.0, retries=0)
    try:
        replies = chat.complete(
            [ChatRequest.of([{"role": "user", "content": str(i)}]) for i in range(5)]
        )
    finally:
        chat.close()
    assert [r.text for r in replies] == ["PERSON\tA"] * 5


@pytest.mark.parametrize("server", ["drip_once"], indirect=True)
def test_after_a_timed_out_request_the_client_answers_the_next_one(server: str) -> None:
    """The connection of the timed-out request is not reused half-read: the next request gets its
    answer."""
    chat = OpenAIChat(server, "m", timeout_s=1.5, retries=0)
    try:
        first = chat.ask(ChatRequest.of([{"role": "user", "content": "1"}]))
        second = chat.ask(ChatRequest.of([{"role": "user", "content": "2"}]))
    finally:
        chat.close()
    assert first.error == "timeout" and second.text == "PERSON\tA"
