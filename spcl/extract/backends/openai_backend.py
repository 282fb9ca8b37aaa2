"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint (vLLM serve, SGLang, llama.cpp
server, ``transformers serve`` …), through the ``openai`` SDK.

Requests run on a bounded thread pool (``concurrency``) over one SDK client (one pooled HTTP connection set),
each with a timeout. The SDK retries connection errors, timeouts, HTTP 408/409/429 and 5xx with exponential
back-off and jitter (it honours ``Retry-After``), ``retries`` times. A document whose request still fails gets
a reason code (``timeout``, ``http_503``, ``bad_response`` …); a reply cut by the token limit
(``finish_reason == "length"``) is ``output_truncated``, because a cut list may miss entities (fail closed).
When the endpoint cannot be reached at all — at start (``check``) or for every retry of a request —
:class:`BackendUnavailable` stops the job instead of failing every document.

The API key, if the server wants one, comes from ``SPCL_OPENAI_API_KEY`` or ``OPENAI_API_KEY`` (never
from the command line). Decoding is greedy (``temperature 0``) with a fixed ``seed``.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.base import BackendUnavailable, Extraction, Extractor
from spcl.extract.prompt import PROMPT_VERSION, build_messages

log = logging.getLogger("spcl.extract.openai")


def _api_key() -> str:
    # servers without authentication accept any key; the SDK insists on one
    return os.environ.get("SPCL_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY") or "EMPTY"


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
        self.seed = seed
        self.extra_body = dict(extra_body or {})
        self._client = openai.OpenAI(base_url=self.endpoint, api_key=_api_key(), timeout=timeout_s,
                                     max_retries=self.retries)
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="spcl-openai")

    def check(self) -> list[str]:
        """Ask the server for its models (``GET /models``); raise :class:`BackendUnavailable` if unreachable."""
        try:
            reply = self._client.with_options(timeout=min(self.timeout_s, 30.0), max_retries=0).models.list()
            models = [str(m.id) for m in reply.data]
        except openai.APIConnectionError as err:  # includes timeouts
            raise BackendUnavailable(
                f"cannot reach the OpenAI-compatible endpoint {self.endpoint} ({type(err).__name__}); "
                "is the server running and is --endpoint the base URL ending in /v1?"
            ) from None
        except openai.APIStatusError as err:
            raise BackendUnavailable(f"endpoint {self.endpoint} answered GET /models with HTTP "
                                     f"{err.status_code}") from None
        except (openai.APIError, ValueError, TypeError, AttributeError) as err:
            raise BackendUnavailable(f"endpoint {self.endpoint} gave an unreadable model list "
                                     f"({type(err).__name__})") from None
        if models and self.model not in models:
            log.warning("model %r is not in the endpoint's model list (%d served)", self.model, len(models))
        return models

    def chat(self, messages: list[dict[str, str]], *, temperature: float = 0.0, max_tokens: int | None = None,
             seed: int | None = None) -> Extraction:
        """One chat completion for ``messages`` (any prompt), with this client's retries, timeout and reason codes.

        Raises :class:`BackendUnavailable` when the endpoint cannot be reached on any try.
        """
        started = time.perf_counter()
        try:
            reply = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=temperature,
                max_tokens=self.max_tokens if max_tokens is None else max_tokens,
                seed=self.seed if seed is None else seed,
                stream=False,
                extra_body=self.extra_body or None,
            )
        except openai.APITimeoutError:
            return Extraction(error="timeout", seconds=time.perf_counter() - started)
        except openai.APIConnectionError:
            raise BackendUnavailable(
                f"the endpoint {self.endpoint} became unreachable ({self.retries + 1} tries)") from None
        except openai.APIStatusError as err:
            return Extraction(error=f"http_{err.status_code}", seconds=time.perf_counter() - started)
        except (openai.APIError, ValueError, TypeError):  # a reply that is not the expected JSON
            return Extraction(error="bad_response", seconds=time.perf_counter() - started)
        return self._read_reply(reply, time.perf_counter() - started)

    def _complete(self, text: str) -> Extraction:
        return self.chat(build_messages(text, self.types))

    def map(self, fn: Any, items: list[Any]) -> list[Any]:
        """``fn`` over ``items`` on this client's bounded thread pool, results in order."""
        return list(self._pool.map(fn, items))

    @staticmethod
    def _read_reply(reply: Any, seconds: float) -> Extraction:
        try:
            choice = reply.choices[0]
            content = choice.message.content
            finish = choice.finish_reason
        except (AttributeError, IndexError, TypeError):
            return Extraction(error="bad_response", seconds=seconds)
        usage = getattr(reply, "usage", None)
        tokens = getattr(usage, "completion_tokens", None)
        tokens = int(tokens) if isinstance(tokens, int | float) else None
        if not isinstance(content, str):
            return Extraction(error="bad_response", generated_tokens=tokens, seconds=seconds)
        if finish == "length":
            return Extraction(error="output_truncated", generated_tokens=tokens, seconds=seconds)
        return Extraction(raw=content, generated_tokens=tokens, seconds=seconds)

    def run(self, texts: list[str]) -> list[Extraction]:
        """One request per text, at most ``concurrency`` at a time; results in input order."""
        return list(self._pool.map(self._complete, texts))

    def close(self) -> None:
        """Stop the request threads and close the HTTP connections."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._client.close()
