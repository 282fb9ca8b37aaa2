"""The one registry of LLM backends and the one factory that builds their clients.

A backend is registered once, by name, with what it needs (a model, an endpoint) and how to build each kind
of client it offers: an **extractor** (``spcl.extract.backends.base.Extractor``: the extract stage's
``TYPE<TAB>VALUE`` prompt, used by ``spcl mask``) and a **chat** client (``spcl.extract.backends.chat.ChatClient``:
any prompt, used by ``spcl annotate``, ``spcl generalize``, ``spcl eval reidentify``). The name tuples the CLI
offers (:data:`BACKENDS`, :data:`CHAT_BACKENDS`) are read from here, so a new backend is one
:func:`register_backend` call in its own module; :func:`make_extractor` and :func:`make_chat` are the factory's
two sides. Builders import their heavy libraries (torch, transformers, vllm, openai) themselves,
so ``rules`` runs without any of them.

>>> [b for b in backend_names("extractor")][:2], backend_names("chat")
(['rules', 'openai'], ('openai', 'transformers', 'vllm'))
>>> make_client("chat", "rules") is None  # the rules backend has no model to chat with
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from spcl.entity_types import DEFAULT_TYPES

if TYPE_CHECKING:
    from spcl.extract.backends.base import Extractor
    from spcl.extract.backends.chat import ChatClient

Kind = Literal["extractor", "chat"]
ExtractorBuilder = Callable[[str | None, str | None, tuple[str, ...], dict[str, Any]], "Extractor"]
ChatBuilder = Callable[[str | None, str | None, dict[str, Any]], "ChatClient"]


@dataclass(frozen=True, slots=True)
class BackendSpec:
    """One backend: its name, what it needs, and its builders (``None``: it offers no such client).

    ``extractor(model, endpoint, types, options)`` and ``chat(model, endpoint, options)`` build a client;
    ``chunked``: long documents may be cut into overlapping windows for its extractor (a model's context)."""

    name: str
    extractor: ExtractorBuilder | None = None
    chat: ChatBuilder | None = None
    needs_model: bool = True
    needs_endpoint: bool = False
    chunked: bool = True


_REGISTRY: dict[str, BackendSpec] = {}


def register_backend(spec: BackendSpec) -> BackendSpec:
    """Add ``spec`` (a new name, or replace one of the same name); returns it."""
    _REGISTRY[spec.name] = spec
    return spec


def backend_spec(name: str) -> BackendSpec | None:
    """The registered backend ``name``, or ``None``."""
    return _REGISTRY.get(name)


def backend_names(kind: Kind) -> tuple[str, ...]:
    """The names of the backends that offer a client of ``kind``, in registration order."""
    return tuple(n for n, s in _REGISTRY.items() if (s.extractor if kind == "extractor" else s.chat) is not None)


def make_client(kind: Kind, backend: str, *, model: str | None = None, endpoint: str | None = None,
                types: tuple[str, ...] = DEFAULT_TYPES, options: dict[str, Any] | None = None,
                chunk_chars: int = 0) -> Extractor | ChatClient | None:
    """The client of ``kind`` of ``backend`` with ``options`` as constructor arguments.

    ``None`` for a chat client of a backend that has no model (``rules``). ``ValueError`` names an unknown
    backend (and the choices), a missing ``--model`` or ``--endpoint``. With ``chunk_chars > 0`` a model
    extractor sees long documents in overlapping windows of that many characters
    (``spcl.extract.backends.chunking``).
    """
    spec = _REGISTRY.get(backend)
    builder = None if spec is None else (spec.extractor if kind == "extractor" else spec.chat)
    if spec is not None and builder is None and kind == "chat" and not spec.needs_model:
        return None
    if spec is None or builder is None:
        what = "backend" if kind == "extractor" else "chat backend"
        raise ValueError(f"unknown {what} {backend!r}; choose one of {', '.join(backend_names(kind))}")
    if spec.needs_model and not model:
        raise ValueError(f"the {backend} backend needs --model")
    if spec.needs_endpoint and not endpoint:
        raise ValueError(f"the {backend} backend needs --endpoint (e.g. http://gpu-node:8000/v1)")
    opts = dict(options or {})
    if kind == "chat":
        assert spec.chat is not None  # the builder checked above
        return spec.chat(model, endpoint, opts)
    assert spec.extractor is not None  # the builder checked above
    extractor: Extractor = spec.extractor(model, endpoint, types, opts)
    if chunk_chars <= 0 or not spec.chunked:
        return extractor
    from spcl.extract.backends.chunking import ChunkingExtractor

    return ChunkingExtractor(extractor, max_chars=chunk_chars, overlap=min(200, chunk_chars // 4))


def _rules_extractor(model: str | None, endpoint: str | None, types: tuple[str, ...],
                     options: dict[str, Any]) -> Extractor:
    from spcl.extract.backends.rules_backend import RulesExtractor

    return RulesExtractor(types)


def _openai_extractor(model: str | None, endpoint: str | None, types: tuple[str, ...],
                      options: dict[str, Any]) -> Extractor:
    from spcl.extract.backends.openai_backend import OpenAIExtractor

    return OpenAIExtractor(str(endpoint), str(model), types=types, **options)


def _openai_chat(model: str | None, endpoint: str | None, options: dict[str, Any]) -> ChatClient:
    from spcl.extract.backends.chat import OpenAIChat

    return OpenAIChat(str(endpoint), str(model), **options)


def _transformers_extractor(model: str | None, endpoint: str | None, types: tuple[str, ...],
                            options: dict[str, Any]) -> Extractor:
    from spcl.extract.backends.transformers_backend import TransformersExtractor

    return TransformersExtractor(str(model), types=types, **options)


def _transformers_chat(model: str | None, endpoint: str | None, options: dict[str, Any]) -> ChatClient:
    from spcl.extract.backends.chat import TransformersChat

    return TransformersChat(str(model), **options)


def _vllm_extractor(model: str | None, endpoint: str | None, types: tuple[str, ...],
                    options: dict[str, Any]) -> Extractor:
    from spcl.extract.backends.vllm_backend import VLLMExtractor

    return VLLMExtractor(str(model), types=types, **options)


def _vllm_chat(model: str | None, endpoint: str | None, options: dict[str, Any]) -> ChatClient:
    from spcl.extract.backends.chat import VLLMChat

    return VLLMChat(str(model), **options)


register_backend(BackendSpec("rules", extractor=_rules_extractor, needs_model=False, chunked=False))
register_backend(BackendSpec("openai", extractor=_openai_extractor, chat=_openai_chat, needs_endpoint=True))
register_backend(BackendSpec("transformers", extractor=_transformers_extractor, chat=_transformers_chat))
register_backend(BackendSpec("vllm", extractor=_vllm_extractor, chat=_vllm_chat))

BACKENDS: tuple[str, ...] = backend_names("extractor")
"""The extractor backends: rules, openai, transformers, vllm."""
CHAT_BACKENDS: tuple[str, ...] = backend_names("chat")
"""The backends with a chat client: openai, transformers, vllm."""


def make_extractor(backend: str, *, model: str | None = None, endpoint: str | None = None,
                   types: tuple[str, ...] = DEFAULT_TYPES, options: dict[str, Any] | None = None,
                   chunk_chars: int = 0) -> Extractor:
    """The extractor named ``backend`` (one of :data:`BACKENDS`); ``options`` go to its constructor
    (:func:`make_client`, its extractor side).

    With ``chunk_chars > 0`` a model backend sees long documents in overlapping windows of that many
    characters (``spcl.extract.backends.chunking``); the rules backend never needs it.

    >>> make_extractor("rules").name
    'rules'
    """
    client = make_client("extractor", backend, model=model, endpoint=endpoint, types=types, options=options,
                         chunk_chars=chunk_chars)
    assert client is not None  # an extractor builder never returns None
    return cast("Extractor", client)  # kind "extractor" builds an Extractor


def make_chat(backend: str, *, model: str | None = None, endpoint: str | None = None,
              options: dict[str, Any] | None = None) -> ChatClient | None:
    """The chat client of ``backend`` (one of :data:`CHAT_BACKENDS`) with ``options`` as constructor
    arguments; ``None`` for ``rules`` (no model). ``ValueError`` names what is missing (:func:`make_client`,
    its chat side).

    >>> make_chat("rules") is None
    True
    """
    client = make_client("chat", backend, model=model, endpoint=endpoint, options=options)
    return cast("ChatClient | None", client)  # kind "chat" builds a ChatClient (or None: no model)
