"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint (vLLM serve, SGLang, llama.cpp
server, ``transformers serve`` …), over the standard library's HTTP client.

Requests run on a bounded thread pool (``concurrency``), each with a timeout; connection errors, timeouts,
HTTP 408/429 and 5xx are retried with exponential back-off (``backoff * 2**attempt``, capped). A document
whose request still fails gets a reason code (``timeout``, ``http_503``, ``bad_response`` …); a reply cut
by the token limit (``finish_reason == "length"``) is ``output_truncated``, because a cut list may miss
entities (fail closed). When the endpoint cannot be reached at all — at start (``check``) or for every
retry of a request — :class:`BackendUnavailable` stops the job instead of failing every document.

The API key, if the server wants one, comes from ``SPCL_OPENAI_API_KEY`` or ``OPENAI_API_KEY`` (never
from the command line). Decoding is greedy (``temperature 0``) with a fixed ``seed``.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.base import BackendUnavailable, Extraction, Extractor
from spcl.extract.prompt import PROMPT_VERSION, build_messages

log = logging.getLogger("spcl.extract.openai")

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_BACKOFF_S = 30.0


class _BadReply(Exception):
    """The server answered with something that is not a JSON object."""


class _Unreachable(Exception):
    """A connection could not be made (refused, DNS, reset before any reply)."""


def _api_key() -> str | None:
    return os.environ.get("SPCL_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY") or None


class OpenAIExtractor(Extractor):
    """Chat completions against ``endpoint`` (e.g. ``http://gpu-node:8000/v1``) for served model ``model``."""

    name = "openai"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        types: tuple[str, ...] = DEFAULT_TYPES,
        max_tokens: int = 512,
        concurrency: int = 8,
        timeout_s: float = 120.0,
        retries: int = 3,
        backoff_s: float = 1.0,
        seed: int = 0,
        extra_body: dict[str, Any] | None = None,
    ):
        super().__init__(types)
        if not endpoint.startswith(("http://", "https://")):
            raise ValueError("endpoint must be an http(s) URL such as http://host:8000/v1")
        self.endpoint = endpoint.rstrip("/")
        self.model = model
        self.max_tokens = max_tokens
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self.seed = seed
        self.extra_body = dict(extra_body or {})
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="spcl-openai")

    # -- HTTP ---------------------------------------------------------------------------------------------
    def _request(self, method: str, path: str, body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8") if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = _api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(self.endpoint + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError:
            raise
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError):
                raise TimeoutError from None
            raise _Unreachable(type(err.reason).__name__) from None
        except TimeoutError:
            raise
        except (OSError, http.client.HTTPException) as err:
            raise _Unreachable(type(err).__name__) from None
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise _BadReply from None
        if not isinstance(payload, dict):
            raise _BadReply
        return payload

    def check(self) -> list[str]:
        """Ask the server for its models (``GET /models``); raise :class:`BackendUnavailable` if unreachable."""
        try:
            reply = self._request("GET", "/models", None, min(self.timeout_s, 30.0))
        except (_Unreachable, TimeoutError, _BadReply) as err:
            raise BackendUnavailable(
                f"cannot reach the OpenAI-compatible endpoint {self.endpoint} ({type(err).__name__}: {err}); "
                "is the server running and is --endpoint the base URL ending in /v1?"
            ) from None
        except urllib.error.HTTPError as err:
            raise BackendUnavailable(f"endpoint {self.endpoint} answered GET /models with HTTP {err.code}") from None
        models = [str(m.get("id")) for m in reply.get("data", []) if isinstance(m, dict)]
        if models and self.model not in models:
            log.warning("model %r is not in the endpoint's model list (%d served)", self.model, len(models))
        return models

    def _complete(self, text: str) -> Extraction:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": build_messages(text, self.types),
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stream": False,
            **self.extra_body,
        }
        started = time.perf_counter()
        reason = "unknown"
        unreachable = 0
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(MAX_BACKOFF_S, self.backoff_s * 2 ** (attempt - 1)))
            try:
                reply = self._request("POST", "/chat/completions", body, self.timeout_s)
            except TimeoutError:
                reason = "timeout"
                continue
            except _BadReply:
                reason = "bad_response"
                continue
            except _Unreachable:
                reason = "unreachable"
                unreachable += 1
                continue
            except urllib.error.HTTPError as err:
                reason = f"http_{err.code}"
                if err.code in RETRY_STATUS:
                    continue
                break
            return self._read_reply(reply, time.perf_counter() - started)
        if unreachable == self.retries + 1:
            raise BackendUnavailable(f"the endpoint {self.endpoint} became unreachable ({self.retries + 1} tries)")
        return Extraction(error=reason, seconds=time.perf_counter() - started)

    @staticmethod
    def _read_reply(reply: dict[str, Any], seconds: float) -> Extraction:
        try:
            choice = reply["choices"][0]
            content = choice["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            return Extraction(error="bad_response", seconds=seconds)
        usage = reply.get("usage") or {}
        tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        tokens = int(tokens) if isinstance(tokens, int | float) else None
        if not isinstance(content, str):
            return Extraction(error="bad_response", generated_tokens=tokens, seconds=seconds)
        if choice.get("finish_reason") == "length":
            return Extraction(error="output_truncated", generated_tokens=tokens, seconds=seconds)
        return Extraction(raw=content, generated_tokens=tokens, seconds=seconds)

    def run(self, texts: list[str]) -> list[Extraction]:
        """One request per text, at most ``concurrency`` at a time; results in input order."""
        return list(self._pool.map(self._complete, texts))

    def close(self) -> None:
        """Stop the request threads."""
        self._pool.shutdown(wait=True, cancel_futures=True)

