"""Free-form chat generation: the one client interface every stage that talks to an LLM uses.

``ChatClient.complete(requests)`` answers a batch of :class:`ChatRequest` (messages, temperature,
max tokens, seed) with one :class:`ChatReply` each, in order, never raising for one request's
failure: the reply names a reason code instead (``timeout``, ``http_503``, ``bad_response``,
``output_truncated``, ``input_too_long``, ``tokenize_error:<Type>``, ``generation_error:<Type>``),
never text. Transient failures are retried with back-off inside the client; what is left is per
request and final. A backend that cannot serve at all (an unreachable endpoint, a model that cannot
be loaded) raises :class:`~spcl.extract.backends.errors.BackendUnavailable` instead, so the job
stops and a rerun resumes.

Three clients, built by ``spcl.extract.backends.registry.make_chat`` (the one factory's chat side),
each in its own module beside this one:

- :class:`~spcl.extract.backends.openai_chat.OpenAIChat` — any OpenAI-compatible
  ``/v1/chat/completions`` server (vLLM serve, SGLang, llama.cpp, ``transformers serve``) through
  the ``openai`` SDK: one pooled HTTP client, a timeout for each whole request
  (``spcl.extract.backends.deadline``), ``retries`` retries of what
  ``spcl.extract.backends.transient`` calls transient (connection errors, timeouts, 408/409/425/429
  and 5xx, malformed replies) with exponential back-off and jitter (``Retry-After`` honoured),
  ``concurrency`` requests in flight. The extract stage's ``openai`` backend
  (``spcl.extract.backends.openai_backend``) sends its prompt through it too.
- :class:`~spcl.extract.backends.transformers_chat.TransformersChat` — a local transformers model
  (folder or GGUF; ``load_model``), left-padded batches of ``batch_size``, greedy at temperature 0
  and seeded sampling above.
- :class:`~spcl.extract.backends.vllm_chat.VLLMChat` — in-process offline batches with
  ``vllm.LLM.chat`` (GPU; imported only there).

A reply cut by the token limit is ``output_truncated``, one ended otherwise than by a natural stop
(a content filter, an aborted request) ``output_incomplete:<reason>`` (its list may be cut short;
callers fail closed). Users: ``spcl annotate`` (teachers and verifier, greedy), ``spcl generalize``
and ``spcl eval reidentify`` (candidates and attacks, sampled). Logs and errors name hosts, models
and reason codes, never messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat completion to make: the messages and its decoding settings."""

    messages: tuple[tuple[str, str], ...]  # (role, content)
    temperature: float = 0.3
    max_tokens: int = 512
    seed: int = 0

    @classmethod
    def of(cls, messages: list[dict[str, str]], **kw: Any) -> ChatRequest:
        """A request from OpenAI-style message dicts."""
        return cls(tuple((m["role"], m["content"]) for m in messages), **kw)

    def message_dicts(self) -> list[dict[str, str]]:
        """The messages as OpenAI-style dicts."""
        return [{"role": r, "content": c} for r, c in self.messages]

    @property
    def settings(self) -> tuple[float, int, int]:
        """``(temperature, max_tokens, seed)``: requests with equal settings can share a batch."""
        return self.temperature, self.max_tokens, self.seed

    def __repr__(self) -> str:  # never print the messages: they quote the document
        return (
            f"ChatRequest(messages={len(self.messages)}, temperature={self.temperature},"
            f" seed={self.seed})"
        )


@dataclass(slots=True)
class ChatReply:
    """The model's text, or ``error`` (a reason code); tokens generated and ``prompt_tokens`` read
    (``None``: not reported) and seconds this request waited (the request for servers, the batch for
    in-process models)."""

    text: str | None = None
    error: str | None = None
    tokens: int | None = None
    seconds: float = 0.0
    prompt_tokens: int | None = None

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.error is None and self.text is not None

    def __repr__(self) -> str:  # never print the text: it may quote the document
        return (
            f"ChatReply(ok={self.ok}, error={self.error!r}, tokens={self.tokens},"
            f" seconds={self.seconds:.3f})"
        )


class ChatClient(Protocol):
    """Batch chat generation; ``name`` is the backend, ``model`` what it runs."""

    name: str
    model: str

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """One reply per request, in order; never raises for a single request's failure."""
        ...

    def check(self) -> object:
        """Raise ``BackendUnavailable`` when the backend cannot serve at all."""
        ...

    def close(self) -> None:
        """Release threads, connections or models."""
        ...


_NATURAL_STOPS = frozenset(
    {None, "stop", "eos", "eos_token", "stop_sequence", "tool_calls", "function_call"}
)


def finish_error(finish: Any) -> str | None:
    """``None`` when a reply ended naturally, else the reason code: ``output_truncated`` for the
    token limit, ``output_incomplete:<reason>`` for any other end (a content filter, an aborted
    request): the answer may stop before its last rows, so callers fail closed.

    >>> finish_error("stop"), finish_error("length"), finish_error("content_filter")
    (None, 'output_truncated', 'output_incomplete:content_filter')
    """
    if finish in _NATURAL_STOPS:
        return None
    if finish == "length":
        return "output_truncated"
    return "output_incomplete:" + re.sub(r"[^a-z0-9_]", "_", str(finish).lower())[:32]


def usage_counts(reply: Any) -> tuple[int | None, int | None]:
    """``(completion_tokens, prompt_tokens)`` of a reply's ``usage`` (``None`` for what the server
    left out).

    >>> from types import SimpleNamespace as NS
    >>> usage_counts(NS(usage=NS(completion_tokens=7, prompt_tokens=120)))
    (7, 120)
    >>> usage_counts(NS(usage=None))
    (None, None)
    """
    usage = getattr(reply, "usage", None)
    counts = [getattr(usage, name, None) for name in ("completion_tokens", "prompt_tokens")]
    completion, prompt = (
        int(n) if isinstance(n, int | float) and not isinstance(n, bool) and n >= 0 else None
        for n in counts
    )
    return completion, prompt
