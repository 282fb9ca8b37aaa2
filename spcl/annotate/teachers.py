"""Teachers: which LLMs label the sample, named and built as chat clients.

A teacher spec is ``BACKEND:MODEL[@ENDPOINT]``:

- ``openai:NAME@http://host:8000/v1`` — any OpenAI-compatible chat-completions server (vLLM, SGLang,
  llama.cpp, ``transformers serve``), ``concurrency`` requests in flight, with the chat client's
  retries and back-off (``spcl.extract.backends.transient``); a server unreachable for every try of
  a request (or at ``check``) raises ``BackendUnavailable``, which stops the job (a rerun resumes).
- ``transformers:/models/x`` — in-process generation (local folder or GGUF, CPU or GPU), left-padded
  batches.
- ``vllm:/models/x`` — in-process offline batches with ``vllm.LLM.chat`` (GPU).

:func:`make_client` builds the shared chat client of ``spcl.extract.backends.chat`` for a spec;
every teacher answers greedily (:func:`teacher_request`: temperature 0, fixed seed), one reply per
document (text, or a reason code such as ``timeout``, ``http_503``, ``output_truncated``,
``input_too_long``). Errors and logs name hosts, models and reason codes, never document text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from spcl.extract.backends.chat import ChatClient, ChatRequest
from spcl.extract.backends.registry import (
    CHAT_BACKENDS,
    backend_names,
    is_server_backend,
    make_chat,
    select_options,
    takes_option,
)

TEACHER_BACKENDS: tuple[str, ...] = CHAT_BACKENDS
TEACHER_MAX_TOKENS = 256
"""Generated tokens per answer, thinking included, unless ``options["max_tokens"]`` says
otherwise."""
TEACHER_MAX_INPUT_TOKENS = 4096
"""In-process teachers: a longer prompt fails ``input_too_long`` (longer documents were dropped
at ``--max-chars``)."""


class TeacherJson(TypedDict):
    """A :class:`TeacherSpec` in configs, reports and manifests."""

    name: str
    backend: str
    model: str
    endpoint: str | None


@dataclass(frozen=True, slots=True)
class TeacherSpec:
    """A parsed ``--teacher``/``--verifier`` value; ``name`` labels its votes and rejection
    reasons."""

    name: str
    backend: str
    model: str
    endpoint: str | None = None

    def to_json(self) -> TeacherJson:
        """A plain dict (for configs, reports and manifests), in field order."""
        return {
            "name": self.name,
            "backend": self.backend,
            "model": self.model,
            "endpoint": self.endpoint,
        }


def parse_teacher(spec: str, name: str | None = None) -> TeacherSpec:
    """``BACKEND:MODEL[@ENDPOINT]`` → :class:`TeacherSpec` (``openai`` needs the endpoint, the
    others refuse one).

    The default name is the model's last path component without ``.gguf``.

    >>> parse_teacher("openai:swallow-8b@http://gpu-a:8000/v1")
    TeacherSpec(name='swallow-8b', backend='openai', model='swallow-8b',
    endpoint='http://gpu-a:8000/v1')
    >>> parse_teacher("vllm:/models/gemma-2-9b").name
    'gemma-2-9b'
    """
    backend, sep, rest = spec.partition(":")
    if not sep or backend not in TEACHER_BACKENDS:
        raise ValueError(
            f"teacher {spec!r}: expected BACKEND:MODEL[@ENDPOINT] with BACKEND one of "
            f"{', '.join(TEACHER_BACKENDS)}"
        )
    model, endpoint = rest, None
    at = rest.rfind("@")
    if at >= 0 and rest[at + 1 :].startswith(("http://", "https://")):
        model, endpoint = rest[:at], rest[at + 1 :]
    if not model:
        raise ValueError(f"teacher {spec!r}: no model")
    server = is_server_backend(backend)
    if server and not endpoint:
        raise ValueError(f"teacher {spec!r}: the {backend} backend needs @http://host:port/v1")
    if not server and endpoint:
        servers = " and ".join(backend_names("chat", server=True))
        raise ValueError(f"teacher {spec!r}: only the {servers} backend takes an endpoint")
    default = Path(model.rstrip("/")).name.removesuffix(".gguf") or model
    return TeacherSpec(name or default, backend, model, endpoint)


def name_teachers(specs: list[TeacherSpec]) -> list[TeacherSpec]:
    """The same specs with distinct names: a repeated name gets ``-2``, ``-3`` … in order."""
    seen: dict[str, int] = {}
    out = []
    for s in specs:
        seen[s.name] = seen.get(s.name, 0) + 1
        out.append(
            s
            if seen[s.name] == 1
            else TeacherSpec(f"{s.name}-{seen[s.name]}", s.backend, s.model, s.endpoint)
        )
    if len({s.name for s in out}) != len(out):
        raise ValueError("teacher names collide; give the models distinct names")
    return out


def teacher_request(
    messages: list[dict[str, str]], options: dict[str, Any] | None = None
) -> ChatRequest:
    """The request a teacher answers: greedy (temperature 0, seed 0), ``options["max_tokens"]``
    tokens at most."""
    max_tokens = int((options or {}).get("max_tokens", TEACHER_MAX_TOKENS))
    return ChatRequest.of(messages, temperature=0.0, max_tokens=max_tokens, seed=0)


def make_client(spec: TeacherSpec, options: dict[str, Any] | None = None) -> ChatClient:
    """The chat client of ``spec``; the ``options`` its backend's constructor takes are passed, the
    rest ignored (one option set serves every teacher: ``device`` means nothing to a server,
    ``timeout_s`` to a GPU)."""
    client = make_chat(
        spec.backend,
        model=spec.model,
        endpoint=spec.endpoint,
        options=_accepted(spec.backend, dict(options or {})),
    )
    assert client is not None  # only the rules backend has no client, and no teacher is one
    return client


def _accepted(backend: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options the chat client of ``backend`` takes (the registry says which; a client with an
    input limit gets the teacher's); never ``loaded`` (weights another client holds)."""
    if takes_option(backend, "chat", "max_input_tokens"):
        options.setdefault("max_input_tokens", TEACHER_MAX_INPUT_TOKENS)
    return {k: v for k, v in select_options(backend, "chat", options).items() if k != "loaded"}
