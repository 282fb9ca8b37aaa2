"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint (vLLM serve, SGLang,
llama.cpp server, ``transformers serve`` …), through the one OpenAI-compatible chat client
(``spcl.extract.backends.openai_chat.OpenAIChat``, the ``openai`` SDK) that annotate and generalize
use too.

Requests run on a bounded thread pool (``concurrency``) over one SDK client (one pooled HTTP
connection set), each with a timeout. The client retries what ``spcl.extract.backends.transient``
calls transient (connection errors, timeouts, HTTP 408/409/425/429 and 5xx, malformed replies) with
exponential back-off and jitter (``Retry-After`` honoured), ``retries`` times. A document whose
request still fails gets a reason code (``timeout``, ``http_503``, ``bad_response`` …; the mask job
leaves the transient ones retryable); a reply cut by the token limit (``finish_reason == "length"``)
is ``output_truncated``, because a cut list may miss entities (fail closed). When the endpoint
cannot be reached at all — at start (``check``) or for every retry of a request —
:class:`BackendUnavailable` stops the job instead of failing every document.

The API key, if the server wants one, comes from ``SPCL_OPENAI_API_KEY`` or ``OPENAI_API_KEY``
(never from the command line). Decoding is greedy (``temperature 0``) with a fixed ``seed``.
"""

from __future__ import annotations

from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.base import Extraction, Extractor
from spcl.extract.backends.chat import ChatRequest
from spcl.extract.backends.openai_chat import OpenAIChat
from spcl.extract.prompt import PROMPT_VERSION, build_messages


class OpenAIExtractor(Extractor):
    """Chat completions against ``endpoint`` (e.g. ``http://gpu-node:8000/v1``) for served model
    ``model``."""

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
        self.chat = OpenAIChat(
            endpoint,
            model,
            concurrency=concurrency,
            timeout_s=timeout_s,
            retries=retries,
            extra_body=extra_body,
        )
        self.endpoint, self.model = self.chat.endpoint, model
        self.max_tokens = max_tokens
        self.seed = seed

    def check(self) -> list[str]:
        """Ask the server for its models (``GET /models``); raise ``BackendUnavailable`` if
        unreachable."""
        return self.chat.check()

    def run(self, texts: list[str]) -> list[Extraction]:
        """One greedy request per text, at most ``concurrency`` at a time; results in input order.

        Raises ``BackendUnavailable`` when the endpoint cannot be reached on any try of a request.
        """
        requests = [
            ChatRequest.of(
                build_messages(text, self.types),
                temperature=0.0,
                max_tokens=self.max_tokens,
                seed=self.seed,
            )
            for text in texts
        ]
        return [
            Extraction(
                raw=r.text,
                error=r.error,
                generated_tokens=r.tokens,
                seconds=r.seconds,
                prompt_tokens=r.prompt_tokens,
            )
            for r in self.chat.complete(requests)
        ]

    def close(self) -> None:
        """Stop the request threads and close the HTTP connections."""
        self.chat.close()
