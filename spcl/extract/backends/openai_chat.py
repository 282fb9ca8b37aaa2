"""The chat client for an OpenAI-compatible server (``spcl.extract.backends.chat``'s interface).

:class:`OpenAIChat` talks to any ``/v1/chat/completions`` server (vLLM serve, SGLang, llama.cpp,
``transformers serve``) through the ``openai`` SDK (imported only when a client is built): one
pooled HTTP client, a timeout for each whole request (``spcl.extract.backends.deadline``), retries
of what ``spcl.extract.backends.transient`` calls transient with back-off, ``concurrency`` requests
in flight.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from spcl.extract.backends.chat import ChatReply, ChatRequest, finish_error, usage_counts
from spcl.extract.backends.deadline import deadline, deadline_client
from spcl.extract.backends.errors import BackendUnavailable
from spcl.extract.backends.transient import RetryPolicy, is_transient, retry_after_seconds

log = logging.getLogger("spcl.extract.chat")


def _api_key() -> str:
    # servers without authentication accept any key; the SDK insists on one
    return os.environ.get("SPCL_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY") or "EMPTY"


class OpenAIChat:
    """Chat completions against ``endpoint`` (e.g. ``http://gpu-node:8000/v1``) for served model
    ``model``.

    The API key, if the server wants one, comes from ``SPCL_OPENAI_API_KEY`` or ``OPENAI_API_KEY``
    (never from the command line); ``extra_body`` is sent with every request (server-specific
    settings).
    """

    name = "openai"

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        concurrency: int = 8,
        timeout_s: float = 120.0,
        retries: int = 3,
        extra_body: dict[str, Any] | None = None,
    ):
        import openai  # the rules-only paths never import the SDK

        if not endpoint.startswith(("http://", "https://")):
            raise ValueError("endpoint must be an http(s) URL such as http://host:8000/v1")
        self.endpoint = endpoint.rstrip("/")
        self.model = model
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self.retries = max(0, retries)
        self.extra_body = dict(extra_body or {})
        self.policy = RetryPolicy(self.retries)
        # the SDK does not retry: this client does, by the one transient classification every job
        # shares the timeout bounds the whole request, not each socket read (a server dripping bytes
        # cannot hold it)
        self._client = openai.OpenAI(
            base_url=self.endpoint,
            api_key=_api_key(),
            timeout=timeout_s,
            max_retries=0,
            http_client=deadline_client(timeout_s, self.concurrency + 2),
        )
        self._pool = ThreadPoolExecutor(
            max_workers=self.concurrency, thread_name_prefix="spcl-openai"
        )

    def check(self) -> list[str]:
        """Ask the server for its models (``GET /models``); raise :class:`BackendUnavailable` if
        unreachable."""
        import openai

        try:
            with deadline(min(self.timeout_s, 30.0)):
                reply = self._client.with_options(
                    timeout=min(self.timeout_s, 30.0), max_retries=0
                ).models.list()
            models = [str(m.id) for m in reply.data]
        except openai.APIConnectionError as err:  # includes timeouts
            raise BackendUnavailable(
                f"cannot reach the OpenAI-compatible endpoint {self.endpoint}"
                f" ({type(err).__name__}); is the server running and is --endpoint the base URL"
                " ending in /v1?"
            ) from None
        except openai.APIStatusError as err:
            raise BackendUnavailable(
                f"endpoint {self.endpoint} answered GET /models with HTTP {err.status_code}"
            ) from None
        except (openai.APIError, ValueError, TypeError, AttributeError) as err:
            raise BackendUnavailable(
                f"endpoint {self.endpoint} gave an unreadable model list ({type(err).__name__})"
            ) from None
        if models and self.model not in models:
            log.warning(
                "model %r is not in the endpoint's model list (%d served)", self.model, len(models)
            )
        return models

    def _try(self, req: ChatRequest) -> tuple[ChatReply, float | None]:
        """One try of a chat completion: the reply (text or reason code) and the ``Retry-After``
        it asked for."""
        import openai

        try:
            with deadline(self.timeout_s):
                reply = self._client.chat.completions.create(
                    model=self.model,
                    # the SDK types messages as a union of per-role TypedDicts; these are such dicts
                    messages=cast(Any, req.message_dicts()),
                    temperature=req.temperature,
                    max_tokens=req.max_tokens,
                    seed=req.seed,
                    stream=False,
                    extra_body=self.extra_body or None,
                )
        except openai.APITimeoutError:
            return ChatReply(error="timeout"), None
        except openai.APIConnectionError:  # refused, reset, DNS: the server may come back
            return ChatReply(error="unreachable"), None
        except openai.APIStatusError as err:
            headers = getattr(getattr(err, "response", None), "headers", None)
            return ChatReply(error=f"http_{err.status_code}"), retry_after_seconds(headers)
        except (openai.APIError, ValueError, TypeError):  # a reply that is not the expected JSON
            return ChatReply(error="bad_response"), None
        return _read_reply(reply, 0.0), None

    def ask(self, req: ChatRequest) -> ChatReply:
        """One chat completion, with this client's timeout and reason codes; a transient failure
        (:func:`~spcl.extract.backends.transient.is_transient`) is tried ``retries`` more times with
        the :class:`~spcl.extract.backends.transient.RetryPolicy`'s back-off (``Retry-After``
        honoured).

        Raises :class:`BackendUnavailable` when the endpoint cannot be reached on any try.
        """
        started = time.perf_counter()
        for attempt in range(self.retries + 1):
            reply, retry_after = self._try(req)
            if reply.ok or not is_transient(reply.error) or attempt == self.retries:
                break
            log.debug(
                "request failed (%s), try %d of %d", reply.error, attempt + 1, self.retries + 1
            )
            time.sleep(self.policy.delay(attempt, retry_after))
        if reply.error == "unreachable":
            raise BackendUnavailable(
                f"the endpoint {self.endpoint} became unreachable ({self.retries + 1} tries)"
            ) from None
        reply.seconds = time.perf_counter() - started
        return reply

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """One request per item, at most ``concurrency`` in flight; replies in request order."""
        return list(self._pool.map(self.ask, requests))

    def close(self) -> None:
        """Stop the request threads and close the HTTP connections."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._client.close()


def _read_reply(reply: Any, seconds: float) -> ChatReply:
    """A chat-completions reply → :class:`ChatReply` (``bad_response``, ``output_truncated`` or
    the text)."""
    try:
        choice = reply.choices[0]
        content = choice.message.content
        finish = choice.finish_reason
    except (AttributeError, IndexError, TypeError):
        return ChatReply(error="bad_response", seconds=seconds)
    tokens, prompt_tokens = usage_counts(reply)
    if not isinstance(content, str):
        return ChatReply(
            error="bad_response", tokens=tokens, seconds=seconds, prompt_tokens=prompt_tokens
        )
    cut = finish_error(finish)
    if cut is not None:
        return ChatReply(error=cut, tokens=tokens, seconds=seconds, prompt_tokens=prompt_tokens)
    return ChatReply(text=content, tokens=tokens, seconds=seconds, prompt_tokens=prompt_tokens)
