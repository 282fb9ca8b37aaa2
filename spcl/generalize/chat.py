"""Free-form chat generation for the two stages: a thin layer over the LLM stage's own backends.

``ChatClient.complete(requests)`` answers a batch of :class:`ChatRequest` (messages, temperature, seed,
max tokens) with one :class:`ChatReply` each, never raising for one request's failure (the reply names a
reason code). Two clients:

- :class:`OpenAIChat` — any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM serve, SGLang,
  ``transformers serve`` …). It reuses ``spcl.extract.backends.openai_backend.OpenAIExtractor`` for the HTTP
  client, the API key, ``check()`` and the retry policy; requests run ``concurrency`` at a time.
- :class:`TransformersChat` — a local transformers model (folder or GGUF) loaded by the extract backend's
  ``load_model``; sampled generation over left-padded batches, seeded with ``torch.manual_seed`` per batch.

A reply cut by the token limit is ``output_truncated`` (its list may be cut short; the caller fails closed).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from spcl.extract.backends.transformers_backend import chat_prompt_ids, eos_token_ids, generate_padded, load_model


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat completion to make."""

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

    def __repr__(self) -> str:  # never print the messages: they quote the document
        return f"ChatRequest(messages={len(self.messages)}, temperature={self.temperature}, seed={self.seed})"


@dataclass(slots=True)
class ChatReply:
    """The model's text, or ``error`` (a reason code); tokens generated and seconds waited."""

    text: str | None = None
    error: str | None = None
    tokens: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.error is None and self.text is not None

    def __repr__(self) -> str:
        return f"ChatReply(ok={self.ok}, error={self.error!r}, tokens={self.tokens})"


class ChatClient(ABC):
    """Batch chat generation; ``name`` is the backend, ``model`` what it runs."""

    name: str = "base"
    model: str = ""

    @abstractmethod
    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """One reply per request, in order; never raises for a single request's failure."""

    def check(self) -> None:
        """Raise ``BackendUnavailable`` when the backend cannot serve (default: nothing to check)."""
        return None

    def close(self) -> None:
        """Release what the client holds."""
        return None


class OpenAIChat(ChatClient):
    """Chat completions against an OpenAI-compatible endpoint, ``concurrency`` requests in flight."""

    name = "openai"

    def __init__(self, endpoint: str, model: str, *, concurrency: int = 8, timeout_s: float = 120.0,
                 retries: int = 3, extra_body: dict[str, Any] | None = None):
        from spcl.extract.backends.openai_backend import OpenAIExtractor

        self._http = OpenAIExtractor(endpoint, model, concurrency=concurrency, timeout_s=timeout_s,
                                     retries=retries, extra_body=extra_body)
        self.model = model

    def check(self) -> None:
        """``GET /models``; raises ``BackendUnavailable`` when the endpoint cannot be reached."""
        self._http.check()

    def _one(self, req: ChatRequest) -> ChatReply:
        ex = self._http.chat(req.message_dicts(), temperature=req.temperature, max_tokens=req.max_tokens,
                             seed=req.seed)
        return ChatReply(text=ex.raw, error=ex.error, tokens=ex.generated_tokens or 0, seconds=ex.seconds)

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """All requests at once on the backend's thread pool; replies in request order."""
        return self._http.map(self._one, requests)

    def close(self) -> None:
        """Stop the request threads."""
        self._http.close()


class TransformersChat(ChatClient):
    """Sampled chat generation with a local transformers model, ``batch_size`` requests at a time."""

    name = "transformers"

    def __init__(self, model: str, *, batch_size: int = 8, max_input_tokens: int = 8192, device: str = "auto",
                 dtype: str = "auto", loaded: tuple[Any, Any] | None = None):
        self.model = str(model)
        self.batch_size = max(1, batch_size)
        self.max_input_tokens = max_input_tokens
        # ``loaded``: the (model, tokenizer) an extractor already holds, so one process loads the weights once
        self.net, self.tokenizer = loaded if loaded is not None else load_model(model, device, dtype)
        self.eos_ids = eos_token_ids(self.net, self.tokenizer)

    def _ids(self, req: ChatRequest) -> list[int]:
        return chat_prompt_ids(self.tokenizer, req.message_dicts())

    def _generate(self, prompts: list[list[int]], req: ChatRequest) -> list[tuple[str, int, bool]]:
        return generate_padded(self.net, self.tokenizer, prompts, self.eos_ids, req.max_tokens,
                               temperature=req.temperature, seed=req.seed)

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        """Requests grouped by decoding settings, generated ``batch_size`` at a time."""
        replies = [ChatReply() for _ in requests]
        groups: dict[tuple[float, int, int], list[tuple[int, list[int]]]] = {}
        for i, req in enumerate(requests):
            try:
                ids = self._ids(req)
            except Exception as err:
                replies[i].error = f"tokenize_error:{type(err).__name__}"
                continue
            if len(ids) > self.max_input_tokens:
                replies[i].error = "input_too_long"
                continue
            groups.setdefault((req.temperature, req.max_tokens, req.seed), []).append((i, ids))
        for items in groups.values():
            for k in range(0, len(items), self.batch_size):
                chunk = items[k:k + self.batch_size]
                started = time.perf_counter()
                try:
                    outs = self._generate([ids for _, ids in chunk], requests[chunk[0][0]])
                except Exception as err:
                    for i, _ in chunk:
                        replies[i].error = f"generation_error:{type(err).__name__}"
                    continue
                elapsed = time.perf_counter() - started
                for (i, _), (text, n, ended) in zip(chunk, outs, strict=True):
                    replies[i].tokens, replies[i].seconds = n, elapsed
                    if ended:
                        replies[i].text = text
                    else:
                        replies[i].error = "output_truncated"
        return replies

    def close(self) -> None:
        """Drop the model."""
        self.net = None


def make_chat(backend: str, *, model: str | None = None, endpoint: str | None = None,
              options: dict[str, Any] | None = None) -> ChatClient | None:
    """The chat client of ``backend`` (``openai`` or ``transformers``); ``None`` for ``rules`` (no model)."""
    opts = dict(options or {})
    if backend == "rules":
        return None
    if not model:
        raise ValueError(f"the {backend} backend needs --model")
    if backend == "openai":
        if not endpoint:
            raise ValueError("the openai backend needs --endpoint (e.g. http://gpu-node:8000/v1)")
        return OpenAIChat(endpoint, model, **opts)
    if backend == "transformers":
        return TransformersChat(model, **opts)
    raise ValueError(f"unknown generalize backend {backend!r}; choose rules, openai or transformers "
                     "(serve a vLLM model with `vllm serve` and use --backend openai)")
