"""A scripted OpenAI-compatible chat server on loopback (a test double of a *model*, not of the
client).

The real ``openai`` backend talks HTTP to it exactly as to vLLM or ``transformers serve``; what the
"model" answers is scripted per document by the test: an answer, an HTTP status, or a hang. It
exists because no instruct model small enough for CPU tests answers on demand with "nothing", a
partial list, 503s or hangs.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_NAME = "scripted-model"

Action = str | int | tuple[str, float]
"""An answer (the completion text), an HTTP status code, or ``("hang", seconds)``."""


class ScriptedChatServer:
    """``/v1/models`` and ``/v1/chat/completions``; ``script(document, attempt) -> Action``
    decides each reply."""

    def __init__(
        self, script: Callable[[str, int], Action], retry_after: str | None = None
    ) -> None:
        self.script = script
        self.retry_after = retry_after  # sent as ``Retry-After`` with every scripted error status
        self.attempts: Counter[str] = Counter()  # requests per document text
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _send(self, code: int, body: bytes) -> None:
                self.send_response(code)
                if code >= 400 and server.retry_after is not None:
                    self.send_header("Retry-After", server.retry_after)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.end_headers()
                    self.wfile.write(body)

            def do_GET(self) -> None:
                self._send(
                    200, json.dumps({"object": "list", "data": [{"id": MODEL_NAME}]}).encode()
                )

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                document = body["messages"][-1]["content"]
                with server.lock:
                    server.attempts[document] += 1
                    attempt = server.attempts[document]
                action = server.script(document, attempt)
                if isinstance(action, tuple):
                    time.sleep(action[1])
                    action = ""
                if isinstance(action, int):
                    self._send(action, b'{"error": {"message": "scripted failure"}}')
                    return
                reply = {
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": action},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"completion_tokens": max(1, len(action) // 4)},
                }
                self._send(200, json.dumps(reply).encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """The base URL, ending in ``/v1``."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def requests(self) -> int:
        """Chat requests served so far."""
        return sum(self.attempts.values())

    def __enter__(self) -> ScriptedChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def scripted_server(
    script: Callable[[str, int], Action], retry_after: str | None = None
) -> Iterator[ScriptedChatServer]:
    """Start a :class:`ScriptedChatServer` for the ``with`` block."""
    with ScriptedChatServer(script, retry_after) as server:
        yield server
