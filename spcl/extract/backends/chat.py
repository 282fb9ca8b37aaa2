"""Free-form chat generation: the one client interface every stage that talks to an LLM uses.

``ChatClient.complete(requests)`` answers a batch of :class:`ChatRequest` (messages, temperature, max
tokens, seed) with one :class:`ChatReply` each, in order, never raising for one request's failure: the
reply names a reason code instead (``timeout``, ``http_503``, ``bad_response``, ``output_truncated``,
``input_too_long``, ``tokenize_error:<Type>``, ``generation_error:<Type>``), never text. Transient
failures are retried with back-off inside the client; what is left is per request and final. A backend
that cannot serve at all (an unreachable endpoint, a model that cannot be loaded) raises
:class:`~spcl.extract.backends.errors.BackendUnavailable` instead, so the job stops and a rerun resumes.

Three clients, built by ``spcl.extract.backends.registry.make_chat`` (the one factory's chat side):

- :class:`OpenAIChat` — any OpenAI-compatible ``/v1/chat/completions`` server (vLLM serve, SGLang,
  llama.cpp, ``transformers serve``) through the ``openai`` SDK: one pooled HTTP client, a timeout for each
  whole request (``spcl.extract.backends.deadline``), ``retries`` retries of what
  ``spcl.extract.backends.transient`` calls transient (connection
  errors, timeouts, 408/409/425/429 and 5xx, malformed replies) with exponential back-off and jitter
  (``Retry-After`` honoured), ``concurrency`` requests in flight. The extract stage's ``openai``
  backend (``spcl.extract.backends.openai_backend``) sends its prompt through it too.
- :class:`TransformersChat` — a local transformers model (folder or GGUF; ``load_model``), left-padded
  batches of ``batch_size``, greedy at temperature 0 and seeded sampling above.
- :class:`VLLMChat` — in-process offline batches with ``vllm.LLM.chat`` (GPU; imported only here).

A reply cut by the token limit is ``output_truncated``, one ended otherwise than by a natural stop (a content
filter, an aborted request) ``output_incomplete:<reason>`` (its list may be cut short; callers fail closed).
Users: ``spcl annotate`` (teachers and verifier, greedy), ``spcl generalize`` and ``spcl eval reidentify``
(candidates and attacks, sampled). Logs and errors name hosts, models and reason codes, never messages.
"""

from __future__ import annotations

import logging
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from spcl.extract.backends.deadline import deadline, deadline_client
from spcl.extract.backends.engines import chat_prompt_ids, eos_token_ids, generate_padded, load_model
from spcl.extract.backends.errors import BackendUnavailable
from spcl.extract.backends.transient import RetryPolicy, is_transient, retry_after_seconds

log = logging.getLogger("spcl.extract.chat")

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
        return f"ChatRequest(messages={len(self.messages)}, temperature={self.temperature}, seed={self.seed})"


@dataclass(slots=True)
class ChatReply:
    """The model's text, or ``error`` (a reason code); tokens generated and ``prompt_tokens`` read (``None``: not
    reported) and seconds this request waited (the request for servers, the batch for in-process models)."""

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
        return f"ChatReply(ok={self.ok}, error={self.error!r}, tokens={self.tokens}, seconds={self.seconds:.3f})"


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


def _api_key() -> str:
    # servers without authentication accept any key; the SDK insists on one
    return os.environ.get("SPCL_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY") or "EMPTY"


class OpenAIChat:
    """Chat completions against ``endpoint`` (e.g. ``http://gpu-node:8000/v1``) for served model ``model``.

    The API key, if the server wants one, comes from ``SPCL_OPENAI_API_KEY`` or ``OPENAI_API_KEY`` (never
    from the command line); ``extra_body`` is sent with every request (server-specific settings).
    """

    name = "openai"

    def __init__(self, endpoint: str, model: str, *, concurrency: int = 8, timeout_s: float = 120.0,
                 retries: int = 3, extra_body: dict[str, Any] | None = None):
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
        # the SDK does not retry: this client does, by the one transient classification every job shares
        # the timeout bounds the whole request, not each socket read (a server dripping bytes cannot hold it)
        self._client = openai.OpenAI(base_url=self.endpoint, api_key=_api_key(), timeout=timeout_s, max_retries=0,
                                     http_client=deadline_client(timeout_s, self.concurrency + 2))
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="spcl-openai")

    def check(self) -> list[str]:
        """Ask the server for its models (``GET /models``); raise :class:`BackendUnavailable` if unreachable."""
        import openai

        try:
            with deadline(min(self.timeout_s, 30.0)):
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

    def _try(self, req: ChatRequest) -> tuple[ChatReply, float | None]:
        """One try of a chat completion: the reply (text or reason code) and the ``Retry-After`` it asked for."""
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
        (:func:`~spcl.extract.backends.transient.is_transient`) is tried ``retries`` more times with the
        :class:`~spcl.extract.backends.transient.RetryPolicy`'s back-off (``Retry-After`` honoured).

        Raises :class:`BackendUnavailable` when the endpoint cannot be reached on any try.
        """
        started = time.perf_counter()
        for attempt in range(self.retries + 1):
            reply, retry_after = self._try(req)
            if reply.ok or not is_transient(reply.error) or attempt == self.retries:
                break
            log.debug("request failed (%s), try %d of %d", reply.error, attempt + 1, self.retries + 1)
            time.sleep(self.policy.delay(attempt, retry_after))
        if reply.error == "unreachable":
            raise BackendUnavailable(
                f"the endpoint {self.endpoint} became unreachable ({self.retries + 1} tries)") from None
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
    """A chat-completions reply → :class:`ChatReply` (``bad_response``, ``output_truncated`` or the text)."""
    try:
        choice = reply.choices[0]
        content = choice.message.content
        finish = choice.finish_reason
    except (AttributeError, IndexError, TypeError):
        return ChatReply(error="bad_response", seconds=seconds)
    tokens, prompt_tokens = usage_counts(reply)
    if not isinstance(content, str):
        return ChatReply(error="bad_response", tokens=tokens, seconds=seconds, prompt_tokens=prompt_tokens)
    cut = finish_error(finish)
    if cut is not None:
        return ChatReply(error=cut, tokens=tokens, seconds=seconds, prompt_tokens=prompt_tokens)
    return ChatReply(text=content, tokens=tokens, seconds=seconds, prompt_tokens=prompt_tokens)


_NATURAL_STOPS = frozenset({None, "stop", "eos", "eos_token", "stop_sequence", "tool_calls", "function_call"})


def finish_error(finish: Any) -> str | None:
    """``None`` when a reply ended naturally, else the reason code: ``output_truncated`` for the token limit,
    ``output_incomplete:<reason>`` for any other end (a content filter, an aborted request): the answer may stop
    before its last rows, so callers fail closed.

    >>> finish_error("stop"), finish_error("length"), finish_error("content_filter")
    (None, 'output_truncated', 'output_incomplete:content_filter')
    """
    if finish in _NATURAL_STOPS:
        return None
    if finish == "length":
        return "output_truncated"
    return "output_incomplete:" + re.sub(r"[^a-z0-9_]", "_", str(finish).lower())[:32]


def usage_counts(reply: Any) -> tuple[int | None, int | None]:
    """``(completion_tokens, prompt_tokens)`` of a reply's ``usage`` (``None`` for what the server left out).

    >>> from types import SimpleNamespace as NS
    >>> usage_counts(NS(usage=NS(completion_tokens=7, prompt_tokens=120)))
    (7, 120)
    >>> usage_counts(NS(usage=None))
    (None, None)
    """
    usage = getattr(reply, "usage", None)
    counts = [getattr(usage, name, None) for name in ("completion_tokens", "prompt_tokens")]
    completion, prompt = (int(n) if isinstance(n, int | float) and not isinstance(n, bool) and n >= 0 else None
                          for n in counts)
    return completion, prompt


class TransformersChat:
    """Chat generation with a local transformers model, ``batch_size`` requests of equal settings at a time."""

    name = "transformers"

    def __init__(self, model: str, *, batch_size: int = 8, max_input_tokens: int = 8192, device: str = "auto",
                 dtype: str = "auto", loaded: tuple[Any, Any] | None = None):
        self.model = str(model)
        self.batch_size = max(1, batch_size)
        self.max_input_tokens = max_input_tokens
        # ``loaded``: the (model, tokenizer) an extractor already holds, so one process loads the weights once
        self.net, self.tokenizer = loaded if loaded is not None else load_model(model, device, dtype)
        self.eos_ids = eos_token_ids(self.net, self.tokenizer)

    def check(self) -> None:
        """Nothing to check: the model loaded when the client was built."""
        return None

    def _prompts(self, requests: list[ChatRequest], replies: list[ChatReply]) -> dict[tuple[float, int, int],
                                                                                      list[tuple[int, list[int]]]]:
        """Tokenize every request; ``{settings: [(index, ids)]}`` of those that fit, failures set in ``replies``."""
        groups: dict[tuple[float, int, int], list[tuple[int, list[int]]]] = {}
        for i, req in enumerate(requests):
            try:
                ids = chat_prompt_ids(self.tokenizer, req.message_dicts())
            except Exception as err:  # a tokenizer failure fails this request only
                replies[i].error = f"tokenize_error:{type(err).__name__}"
                continue
            if len(ids) > self.max_input_tokens:
                replies[i].error = "input_too_long"
                continue
            groups.setdefault(req.settings, []).append((i, ids))
        return groups

    def _generate(self, chunk: list[tuple[int, list[int]]], req: ChatRequest, replies: list[ChatReply]) -> None:
        """Generate one batch of prompts that share ``req``'s settings; fill their replies."""
        started = time.perf_counter()
        try:
            outs = generate_padded(self.net, self.tokenizer, [ids for _, ids in chunk], self.eos_ids,
                                   req.max_tokens, temperature=req.temperature, seed=req.seed)
        except Exception as err:  # the batch failed: fail its requests, keep the job going
            for i, _ in chunk:
                replies[i].error = f"generation_error:{type(err).__name__}"
            return
        elapsed = time.perf_counter() - started
        for (i, ids), (text, n, ended) in zip(chunk, outs, strict=True):
            replies[i].tokens, replies[i].seconds, replies[i].prompt_tokens = n, elapsed, len(ids)
            if ended:
                replies[i].text = text
            else:
                replies[i].error = "output_truncated"

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """Requests grouped by decoding settings, generated ``batch_size`` at a time; replies in order."""
        replies = [ChatReply() for _ in requests]
        for items in self._prompts(requests, replies).values():
            for k in range(0, len(items), self.batch_size):
                chunk = items[k:k + self.batch_size]
                self._generate(chunk, requests[chunk[0][0]], replies)
        return replies

    def close(self) -> None:
        """Drop the model."""
        self.net = None


class VLLMChat:
    """Offline batched chat generation with ``vllm.LLM`` (GPU; imported only here), prefix caching on."""

    name = "vllm"

    def __init__(self, model: str, *, batch_size: int = 256, tensor_parallel_size: int = 1,
                 gpu_memory_utilization: float = 0.85, max_model_len: int | None = None, seed: int = 0):
        try:
            from vllm import LLM  # noqa: F401  (fail early and clearly without vllm)
        except ImportError as err:
            raise BackendUnavailable(f"the vllm backend needs vllm (pip install 'spcl[gpu]'): {err.name}") from None
        self.model = str(model)
        self.batch_size = max(1, batch_size)
        kwargs: dict[str, Any] = {"model": self.model, "enable_prefix_caching": True, "seed": seed,
                                  "tensor_parallel_size": tensor_parallel_size,
                                  "gpu_memory_utilization": gpu_memory_utilization}
        if max_model_len:
            kwargs["max_model_len"] = max_model_len
        try:
            from spcl.extract.backends.engines import build_llm

            self.llm = build_llm(kwargs)  # on vLLM's CPU platform: eager, one in-process worker
        except (OSError, ValueError, RuntimeError) as err:
            raise BackendUnavailable(f"vLLM could not load {Path(self.model).name}: {type(err).__name__}") from None

    def check(self) -> None:
        """Nothing to check: the engine loaded when the client was built."""
        return None

    def _generate(self, chunk: list[int], requests: list[ChatRequest], replies: list[ChatReply]) -> None:
        """One ``LLM.chat`` call for requests of equal settings; an answer cut by ``max_tokens`` is
        ``output_truncated``, a failed call fails its requests."""
        from vllm import SamplingParams

        temperature, max_tokens, seed = requests[chunk[0]].settings
        started = time.perf_counter()
        try:
            outputs = self.llm.chat([requests[i].message_dicts() for i in chunk],
                                    SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed),
                                    use_tqdm=False)
        except Exception as err:  # the whole chunk failed: fail its requests, keep the job going
            log.warning("vLLM batch of %d failed: %s", len(chunk), type(err).__name__)
            for i in chunk:
                replies[i].error = f"generation_error:{type(err).__name__}"
                replies[i].seconds = time.perf_counter() - started
            return
        elapsed = time.perf_counter() - started
        for i, out in zip(chunk, outputs, strict=True):
            comp = out.outputs[0]
            replies[i].tokens, replies[i].seconds = len(comp.token_ids), elapsed
            replies[i].prompt_tokens = len(out.prompt_token_ids or ())
            cut = finish_error(comp.finish_reason)
            if cut is not None:
                replies[i].error = cut
            else:
                replies[i].text = comp.text

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """Requests grouped by decoding settings, ``batch_size`` per ``LLM.chat`` call; replies in order."""
        replies = [ChatReply() for _ in requests]
        groups: dict[tuple[float, int, int], list[int]] = {}
        for i, req in enumerate(requests):
            groups.setdefault(req.settings, []).append(i)
        for items in groups.values():
            for k in range(0, len(items), self.batch_size):
                self._generate(items[k:k + self.batch_size], requests, replies)
        return replies

    def close(self) -> None:
        """Drop the engine."""
        self.llm = None
