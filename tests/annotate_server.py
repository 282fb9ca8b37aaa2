"""A real OpenAI-compatible HTTP server on loopback whose models are *scripted teachers* (no LLM).

``/v1/chat/completions`` reads the document out of the annotate prompt and answers with what the script
returns for ``(model, document)``: ``(200, content)`` or an HTTP error status. ``answered`` counts the
requests answered per ``(model, document)``; ``down`` makes the server drop every connection unanswered
(a server that went away). Test helper only; lives outside the library.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[str, str], tuple[int, str]]


def document_of(prompt: str) -> str:
    """The document inside an ``annotate-v1`` prompt."""
    return prompt.rsplit("\nDocument:\n", 1)[1].rsplit("\n\nAnswer:", 1)[0]


class ScriptedTeacherServer:
    """Serve scripted teachers on ``127.0.0.1``; use as a context manager; ``url`` is the /v1 base URL."""

    def __init__(self, script: Script, models: tuple[str, ...] = ("scripted-a", "scripted-b")):
        self.script = script
        self.models = models
        self.answered: Counter[tuple[str, str]] = Counter()
        self.down = False
        self.down_after: int | None = None
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                return None

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in owner.models]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with owner._lock:
                    total = sum(owner.answered.values())
                    if owner.down or (owner.down_after is not None and total >= owner.down_after):
                        self.close_connection = True
                        return  # no reply at all: the client sees the server go away
                if self.path != "/v1/chat/completions" or body.get("temperature") != 0.0:
                    self._send(400, {"error": "bad request"})
                    return
                doc = document_of(body["messages"][-1]["content"])
                status, content = owner.script(body["model"], doc)
                with owner._lock:
                    owner.answered[(body["model"], doc)] += 1
                if status != 200:
                    self._send(status, {"error": {"message": "scripted failure"}})
                    return
                self._send(200, {"id": "x", "object": "chat.completion", "model": body["model"],
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": content}}],
                                 "usage": {"completion_tokens": len(content.split()) + 1}})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The OpenAI base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedTeacherServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
