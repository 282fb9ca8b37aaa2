"""Teacher clients: free-form chat generation, one document per request, behind one small interface.

The extraction backends (``spcl.extract.backends``) send the extraction prompt; annotation needs its own
messages, so this module holds thin clients of the same three kinds (the openai one reuses the LLM stage's
HTTP client), built from a teacher spec
``BACKEND:MODEL[@ENDPOINT]``:

- ``openai:NAME@http://host:8000/v1`` — any OpenAI-compatible chat-completions server (vLLM, SGLang,
  llama.cpp, ``transformers serve``) through the LLM stage's client (``OpenAIExtractor.chat``: the ``openai``
  SDK, its retries with back-off, its reason codes), ``concurrency`` requests in flight; a server unreachable
  for every try of a request (or at ``check``) raises :class:`BackendUnavailable`, which stops the job (a
  rerun resumes).
- ``transformers:/models/x`` — in-process greedy generation (``spcl.extract.backends.transformers_backend
  .load_model``: local folder or GGUF, CPU or GPU), left-padded batches.
- ``vllm:/models/x`` — in-process offline batches with ``vllm.LLM.chat`` (GPU).

Every client returns one :class:`~spcl.extract.backends.base.Extraction` per conversation (``raw`` or a
reason code such as ``timeout``, ``http_503``, ``output_truncated``, ``input_too_long``); decoding is greedy
(temperature 0, fixed seed). Errors and logs name hosts, models and reason codes, never document text.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from spcl.extract.backends.base import BackendUnavailable, Extraction, timed_batch
from spcl.extract.backends.transformers_backend import chat_prompt_ids, eos_token_ids, generate_padded, load_model

log = logging.getLogger("spcl.annotate.clients")

TEACHER_BACKENDS: tuple[str, ...] = ("openai", "transformers", "vllm")
Messages = list[dict[str, str]]


@dataclass(frozen=True, slots=True)
class TeacherSpec:
    """A parsed ``--teacher``/``--verifier`` value; ``name`` labels its votes and rejection reasons."""

    name: str
    backend: str
    model: str
    endpoint: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A plain dict (for configs, reports and manifests)."""
        return asdict(self)


def parse_teacher(spec: str, name: str | None = None) -> TeacherSpec:
    """``BACKEND:MODEL[@ENDPOINT]`` → :class:`TeacherSpec` (``openai`` needs the endpoint, the others refuse one).

    The default name is the model's last path component without ``.gguf``.

    >>> parse_teacher("openai:swallow-8b@http://gpu-a:8000/v1")
    TeacherSpec(name='swallow-8b', backend='openai', model='swallow-8b', endpoint='http://gpu-a:8000/v1')
    >>> parse_teacher("vllm:/models/gemma-2-9b").name
    'gemma-2-9b'
    """
    backend, sep, rest = spec.partition(":")
    if not sep or backend not in TEACHER_BACKENDS:
        raise ValueError(f"teacher {spec!r}: expected BACKEND:MODEL[@ENDPOINT] with BACKEND one of "
                         f"{', '.join(TEACHER_BACKENDS)}")
    model, endpoint = rest, None
    at = rest.rfind("@")
    if at >= 0 and rest[at + 1:].startswith(("http://", "https://")):
        model, endpoint = rest[:at], rest[at + 1:]
    if not model:
        raise ValueError(f"teacher {spec!r}: no model")
    if backend == "openai" and not endpoint:
        raise ValueError(f"teacher {spec!r}: the openai backend needs @http://host:port/v1")
    if backend != "openai" and endpoint:
        raise ValueError(f"teacher {spec!r}: only the openai backend takes an endpoint")
    default = Path(model.rstrip("/")).name.removesuffix(".gguf") or model
    return TeacherSpec(name or default, backend, model, endpoint)


def name_teachers(specs: list[TeacherSpec]) -> list[TeacherSpec]:
    """The same specs with distinct names: a repeated name gets ``-2``, ``-3`` … in order."""
    seen: dict[str, int] = {}
    out = []
    for s in specs:
        seen[s.name] = seen.get(s.name, 0) + 1
        out.append(s if seen[s.name] == 1 else TeacherSpec(f"{s.name}-{seen[s.name]}", s.backend, s.model,
                                                           s.endpoint))
    if len({s.name for s in out}) != len(out):
        raise ValueError("teacher names collide; give the models distinct names")
    return out


class ChatClient(ABC):
    """Greedy chat generation for a list of conversations; one :class:`Extraction` per conversation."""

    backend: str = "base"
    model: str = ""

    @abstractmethod
    def generate(self, conversations: list[Messages]) -> list[Extraction]:
        """One result per conversation, in order; a single document's failure never raises."""

    def check(self) -> None:
        """Raise :class:`BackendUnavailable` if the client cannot serve at all (default: nothing to check)."""
        return None

    def close(self) -> None:
        """Release threads or models."""
        return None


class OpenAIChat(ChatClient):
    """Chat completions against an OpenAI-compatible ``endpoint`` for served model ``model``: the LLM stage's
    own client (``OpenAIExtractor.chat``: the ``openai`` SDK, its retries with back-off, the same reason
    codes), ``concurrency`` requests in flight."""

    backend = "openai"

    def __init__(self, endpoint: str, model: str, *, max_tokens: int = 256, concurrency: int = 8,
                 timeout_s: float = 120.0, retries: int = 3, seed: int = 0):
        from spcl.extract.backends.openai_backend import OpenAIExtractor

        self.model = model
        self._http = OpenAIExtractor(endpoint, model, max_tokens=max_tokens, concurrency=1, timeout_s=timeout_s,
                                     retries=retries, seed=seed)
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="spcl-annotate")

    def check(self) -> None:
        """``GET /models``; :class:`BackendUnavailable` when the server cannot be reached or refuses."""
        self._http.check()

    def generate(self, conversations: list[Messages]) -> list[Extraction]:
        """One request per conversation, ``concurrency`` in flight, greedy; results in input order."""
        return list(self._pool.map(lambda messages: self._http.chat(messages, temperature=0.0), conversations))

    def close(self) -> None:
        """Stop the request threads and close the HTTP connections."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._http.close()


class TransformersChat(ChatClient):
    """Greedy generation with a local transformers model (folder or GGUF), ``batch_size`` at a time."""

    backend = "transformers"

    def __init__(self, model: str, *, max_tokens: int = 256, max_input_tokens: int = 4096, batch_size: int = 8,
                 device: str = "auto"):
        self.model = str(model)
        self.max_tokens = max_tokens
        self.max_input_tokens = max_input_tokens
        self.batch_size = max(1, batch_size)
        self.net, self.tokenizer = load_model(model, device)
        self.eos_ids = eos_token_ids(self.net, self.tokenizer)

    def _ids(self, messages: Messages) -> list[int]:
        return chat_prompt_ids(self.tokenizer, messages)

    def _batch(self, conversations: list[Messages]) -> list[Extraction]:
        started = time.perf_counter()
        results = [Extraction() for _ in conversations]
        todo: list[tuple[int, list[int]]] = []
        for i, messages in enumerate(conversations):
            try:
                ids = self._ids(messages)
            except Exception as err:  # a tokenizer failure fails this document only
                results[i].error = f"tokenize_error:{type(err).__name__}"
                continue
            if len(ids) > self.max_input_tokens:
                results[i].error = "input_too_long"
            else:
                todo.append((i, ids))
        if not todo:
            return timed_batch(results, started)
        try:
            outputs = generate_padded(self.net, self.tokenizer, [ids for _, ids in todo], self.eos_ids,
                                      self.max_tokens)
        except Exception as err:  # the batch failed: fail its documents, keep the job going
            for i, _ in todo:
                results[i].error = f"generation_error:{type(err).__name__}"
            return timed_batch(results, started)
        for (i, _), (text, n, ended) in zip(todo, outputs, strict=True):
            results[i].generated_tokens = n
            if ended:
                results[i].raw = text
            else:
                results[i].error = "output_truncated"
        return timed_batch(results, started)

    def generate(self, conversations: list[Messages]) -> list[Extraction]:
        """Generate in chunks of ``batch_size``; one result per conversation."""
        out: list[Extraction] = []
        for k in range(0, len(conversations), self.batch_size):
            out += self._batch(conversations[k:k + self.batch_size])
        return out

    def close(self) -> None:
        """Drop the model."""
        self.net = None


class VLLMChat(ChatClient):
    """Offline batched greedy chat generation with ``vllm.LLM`` (GPU; imported only here)."""

    backend = "vllm"

    def __init__(self, model: str, *, max_tokens: int = 256, batch_size: int = 256, tensor_parallel_size: int = 1,
                 gpu_memory_utilization: float = 0.85, max_model_len: int | None = None, seed: int = 0):
        try:
            from vllm import LLM, SamplingParams
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
            self.llm = LLM(**kwargs)
        except (OSError, ValueError, RuntimeError) as err:
            raise BackendUnavailable(f"vLLM could not load {Path(self.model).name}: {type(err).__name__}") from None
        self.sampling = SamplingParams(temperature=0.0, max_tokens=max_tokens, seed=seed)

    def generate(self, conversations: list[Messages]) -> list[Extraction]:
        """``LLM.chat`` in chunks of ``batch_size``; an answer cut by ``max_tokens`` is ``output_truncated``."""
        out: list[Extraction] = []
        for k in range(0, len(conversations), self.batch_size):
            chunk = conversations[k:k + self.batch_size]
            started = time.perf_counter()
            try:
                outputs = self.llm.chat(chunk, self.sampling, use_tqdm=False)
            except Exception as err:  # the whole chunk failed: fail its documents, keep the job going
                log.warning("vLLM batch of %d failed: %s", len(chunk), type(err).__name__)
                out += timed_batch([Extraction(error=f"generation_error:{type(err).__name__}") for _ in chunk],
                                   started)
                continue
            results = []
            for o in outputs:
                comp = o.outputs[0]
                truncated = comp.finish_reason == "length"
                results.append(Extraction(raw=None if truncated else comp.text,
                                          error="output_truncated" if truncated else None,
                                          generated_tokens=len(comp.token_ids)))
            out += timed_batch(results, started)
        return out

    def close(self) -> None:
        """Drop the engine."""
        self.llm = None


def make_client(spec: TeacherSpec, options: dict[str, Any] | None = None) -> ChatClient:
    """The client for ``spec``; ``options`` are passed to its constructor (unknown ones are ignored)."""
    import inspect

    cls: type[ChatClient] = {"openai": OpenAIChat, "transformers": TransformersChat, "vllm": VLLMChat}[spec.backend]
    accepted = set(inspect.signature(cls.__init__).parameters)
    opts = {k: v for k, v in (options or {}).items() if k in accepted}
    if spec.backend == "openai":
        assert spec.endpoint is not None
        return OpenAIChat(spec.endpoint, spec.model, **opts)
    return cls(spec.model, **opts)  # type: ignore[call-arg]
