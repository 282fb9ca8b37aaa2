"""The one registry of LLM backends and the one factory that builds their clients.

A backend is registered once, by name, with what it needs (a model, an endpoint) and how to build
each kind of client it offers: an **extractor** (``spcl.extract.backends.base.Extractor``: the
extract stage's ``TYPE<TAB>VALUE`` prompt, used by ``spcl mask``) and a **chat** client
(``spcl.extract.backends.chat.ChatClient``: any prompt, used by ``spcl annotate``, ``spcl
generalize``, ``spcl eval reidentify``). The name tuples the CLI offers (:data:`BACKENDS`,
:data:`CHAT_BACKENDS`) are read from here, so a new backend is one :func:`register_backend` call in
its own module; :func:`make_extractor` and :func:`make_chat` are the factory's two sides. The
backend modules import their heavy libraries (torch, transformers, vllm, openai) only when a client
is built, so ``rules`` runs without any of them.

The registry also owns each backend's **options** (the constructor keywords of its clients, one name
per idea: ``max_tokens`` everywhere), their validation (:func:`check_options`: an unknown option is
a ``ValueError`` naming the backend and what it takes; an old spelling in :data:`OPTION_ALIASES` is
mapped with a ``DeprecationWarning``), and what the commands offer (:func:`backend_names` with its
filters, and the facts a job asks instead of comparing names: :func:`is_model_backend`,
:func:`is_server_backend`, :func:`takes_option`). No module outside this package spells a backend's
name.

>>> [b for b in backend_names("extractor")][:2], backend_names("chat")
(['rules', 'openai'], ('openai', 'transformers', 'vllm'))
>>> make_client("chat", "rules") is None  # the rules backend has no model to chat with
True
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.base import Extractor
from spcl.extract.backends.chat import ChatClient
from spcl.extract.backends.chunking import ChunkingExtractor
from spcl.extract.backends.openai_backend import OpenAIExtractor
from spcl.extract.backends.openai_chat import OpenAIChat
from spcl.extract.backends.rules_backend import RulesExtractor
from spcl.extract.backends.transformers_backend import TransformersExtractor
from spcl.extract.backends.transformers_chat import TransformersChat
from spcl.extract.backends.vllm_backend import VLLMExtractor
from spcl.extract.backends.vllm_chat import VLLMChat

Kind = Literal["extractor", "chat"]
ExtractorBuilder = Callable[[str | None, str | None, tuple[str, ...], dict[str, Any]], Extractor]
ChatBuilder = Callable[[str | None, str | None, dict[str, Any]], ChatClient]


@dataclass(frozen=True, slots=True)
class BackendSpec:
    """One backend: its name, what it needs, and its builders (``None``: it offers no such client).

    ``extractor(model, endpoint, types, options)`` and ``chat(model, endpoint, options)`` build a
    client; ``chunked``: long documents may be cut into overlapping windows for its extractor (a
    model's context). ``needs_endpoint``: a server (reached over the network, asked concurrently,
    probed before a run). ``extractor_options`` / ``chat_options``: the keywords each client's
    constructor takes (the only options :func:`make_client` passes on; ``None``: not declared, every
    option is passed on and the constructor decides). ``generalize``: ``spcl generalize`` can use it
    (one model finds the spans and answers the prompts, or no model at all)."""

    name: str
    extractor: ExtractorBuilder | None = None
    chat: ChatBuilder | None = None
    needs_model: bool = True
    needs_endpoint: bool = False
    chunked: bool = True
    extractor_options: frozenset[str] | None = None
    chat_options: frozenset[str] | None = None
    generalize: bool = False

    def options(self, kind: Kind) -> frozenset[str] | None:
        """The option names the client of ``kind`` takes; ``None``: not declared (passed on
        unchecked)."""
        return self.extractor_options if kind == "extractor" else self.chat_options


_REGISTRY: dict[str, BackendSpec] = {}


def register_backend(spec: BackendSpec) -> BackendSpec:
    """Add ``spec`` (a new name, or replace one of the same name); returns it."""
    _REGISTRY[spec.name] = spec
    return spec


def backend_spec(name: str) -> BackendSpec | None:
    """The registered backend ``name``, or ``None``."""
    return _REGISTRY.get(name)


def backend_names(
    kind: Kind,
    *,
    needs_model: bool | None = None,
    server: bool | None = None,
    generalize: bool | None = None,
) -> tuple[str, ...]:
    """The names of the backends that offer a client of ``kind``, in registration order; a filter
    that is not ``None`` keeps those whose ``needs_model`` / ``needs_endpoint`` / ``generalize``
    equals it.

    >>> backend_names("extractor", generalize=True), backend_names("chat", generalize=True)
    (('rules', 'openai', 'transformers'), ('openai', 'transformers'))
    >>> (backend_names("extractor", needs_model=False),
    ...  backend_names("extractor", needs_model=True, server=False))
    (('rules',), ('transformers', 'vllm'))
    """
    return tuple(
        n
        for n, s in _REGISTRY.items()
        if (s.extractor if kind == "extractor" else s.chat) is not None
        and (needs_model is None or s.needs_model == needs_model)
        and (server is None or s.needs_endpoint == server)
        and (generalize is None or s.generalize == generalize)
    )


def is_model_backend(name: str) -> bool:
    """True unless ``name`` is a registered backend without a model (``rules``): an unknown name (a
    caller's own extractor) counts as a model."""
    spec = _REGISTRY.get(name)
    return spec is None or spec.needs_model


def is_server_backend(name: str) -> bool:
    """True when ``name`` is a registered backend reached over the network (it needs an
    endpoint)."""
    spec = _REGISTRY.get(name)
    return spec is not None and spec.needs_endpoint


def takes_option(backend: str, kind: Kind, option: str) -> bool:
    """True when the client of ``kind`` of ``backend`` takes ``option`` (its one name, not an
    alias)."""
    spec = _REGISTRY.get(backend)
    return spec is not None and option in (spec.options(kind) or ())


def backends_taking(kind: Kind, option: str) -> tuple[str, ...]:
    """The backends whose client of ``kind`` takes ``option``, in registration order."""
    return tuple(n for n in backend_names(kind) if takes_option(n, kind, option))


OPTION_ALIASES: dict[str, str] = {"max_new_tokens": "max_tokens"}
"""Old option spellings still accepted (with a ``DeprecationWarning``), each with its one name."""


def canonical_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` with every old spelling (:data:`OPTION_ALIASES`) renamed to its one name, warning
    once per use; ``ValueError`` when both spellings are given.

    >>> canonical_options({"max_tokens": 8, "batch_size": 2})
    {'max_tokens': 8, 'batch_size': 2}
    """
    out: dict[str, Any] = {}
    for key, value in (options or {}).items():
        name = OPTION_ALIASES.get(key, key)
        if name != key:
            if name in (options or {}):
                raise ValueError(f"backend options: give {name} only ({key} is its old spelling)")
            warnings.warn(
                f"backend option {key} is deprecated; use {name}", DeprecationWarning, stacklevel=3
            )
        out[name] = value
    return out


def check_options(backend: str, kind: Kind, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` in their one spelling (:func:`canonical_options`), checked against what the
    client of ``kind`` of ``backend`` takes: ``ValueError`` names an option it does not take and
    lists those it does."""
    opts = canonical_options(options)
    spec = _REGISTRY.get(backend)
    allowed = spec.options(kind) if spec is not None else None
    if allowed is None:
        return opts
    unknown = sorted(set(opts) - allowed)
    if unknown:
        takes = ", ".join(sorted(allowed)) or "none"
        raise ValueError(
            f"the {backend} backend takes no option {', '.join(unknown)} (its options: {takes})"
        )
    return opts


def select_options(backend: str, kind: Kind, values: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``values`` (one option set for every backend, e.g. from the command line) that
    the client of ``kind`` of ``backend`` declares; the rest is dropped (``device`` means nothing to
    a server; a backend that declares no options gets none)."""
    spec = _REGISTRY.get(backend)
    allowed = (spec.options(kind) if spec is not None else None) or frozenset()
    return {k: v for k, v in canonical_options(values).items() if k in allowed}


def make_client(
    kind: Kind,
    backend: str,
    *,
    model: str | None = None,
    endpoint: str | None = None,
    types: tuple[str, ...] = DEFAULT_TYPES,
    options: dict[str, Any] | None = None,
    chunk_chars: int = 0,
) -> Extractor | ChatClient | None:
    """The client of ``kind`` of ``backend`` with ``options`` as constructor arguments.

    ``None`` for a chat client of a backend that has no model (``rules``). ``ValueError`` names an
    unknown backend (and the choices), a missing ``--model`` or ``--endpoint``, an option the client
    does not take (:func:`check_options`). With ``chunk_chars > 0`` a model extractor sees long
    documents in overlapping windows of that many characters (``spcl.extract.backends.chunking``).
    """
    spec = _REGISTRY.get(backend)
    builder = None if spec is None else (spec.extractor if kind == "extractor" else spec.chat)
    if spec is not None and builder is None and kind == "chat" and not spec.needs_model:
        return None
    if spec is None or builder is None:
        what = "backend" if kind == "extractor" else "chat backend"
        raise ValueError(
            f"unknown {what} {backend!r}; choose one of {', '.join(backend_names(kind))}"
        )
    if spec.needs_model and not model:
        raise ValueError(f"the {backend} backend needs --model")
    if spec.needs_endpoint and not endpoint:
        raise ValueError(f"the {backend} backend needs --endpoint (e.g. http://gpu-node:8000/v1)")
    opts = check_options(backend, kind, options)
    if kind == "chat":
        assert spec.chat is not None  # the builder checked above
        return spec.chat(model, endpoint, opts)
    assert spec.extractor is not None  # the builder checked above
    extractor: Extractor = spec.extractor(model, endpoint, types, opts)
    if chunk_chars <= 0 or not spec.chunked:
        return extractor
    return ChunkingExtractor(extractor, max_chars=chunk_chars, overlap=min(200, chunk_chars // 4))


def _rules_extractor(
    model: str | None, endpoint: str | None, types: tuple[str, ...], options: dict[str, Any]
) -> Extractor:
    return RulesExtractor(types)


def _openai_extractor(
    model: str | None, endpoint: str | None, types: tuple[str, ...], options: dict[str, Any]
) -> Extractor:
    return OpenAIExtractor(str(endpoint), str(model), types=types, **options)


def _openai_chat(model: str | None, endpoint: str | None, options: dict[str, Any]) -> ChatClient:
    return OpenAIChat(str(endpoint), str(model), **options)


def _transformers_extractor(
    model: str | None, endpoint: str | None, types: tuple[str, ...], options: dict[str, Any]
) -> Extractor:
    return TransformersExtractor(str(model), types=types, **options)


def _transformers_chat(
    model: str | None, endpoint: str | None, options: dict[str, Any]
) -> ChatClient:
    return TransformersChat(str(model), **options)


def _vllm_extractor(
    model: str | None, endpoint: str | None, types: tuple[str, ...], options: dict[str, Any]
) -> Extractor:
    return VLLMExtractor(str(model), types=types, **options)


def _vllm_chat(model: str | None, endpoint: str | None, options: dict[str, Any]) -> ChatClient:
    return VLLMChat(str(model), **options)


RULES_BACKEND = "rules"
"""The backend without a model: the CPU rules (and the person-name finders); the only fallback."""
DEFAULT_BACKEND = RULES_BACKEND
"""The backend a job uses unless told otherwise."""

register_backend(
    BackendSpec(
        RULES_BACKEND,
        extractor=_rules_extractor,
        needs_model=False,
        chunked=False,
        generalize=True,
        extractor_options=frozenset(),
        chat_options=frozenset(),
    )
)
register_backend(
    BackendSpec(
        "openai",
        extractor=_openai_extractor,
        chat=_openai_chat,
        needs_endpoint=True,
        generalize=True,
        extractor_options=frozenset(
            {"max_tokens", "concurrency", "timeout_s", "retries", "seed", "extra_body"}
        ),
        chat_options=frozenset({"concurrency", "timeout_s", "retries", "extra_body"}),
    )
)
register_backend(
    BackendSpec(
        "transformers",
        extractor=_transformers_extractor,
        chat=_transformers_chat,
        generalize=True,
        extractor_options=frozenset(
            {"max_tokens", "max_input_tokens", "batch_size", "device", "dtype", "adapter"}
        ),
        chat_options=frozenset({"batch_size", "max_input_tokens", "device", "dtype", "loaded"}),
    )
)
register_backend(
    BackendSpec(
        "vllm",
        extractor=_vllm_extractor,
        chat=_vllm_chat,
        extractor_options=frozenset(
            {
                "max_tokens",
                "max_input_tokens",
                "batch_size",
                "tensor_parallel_size",
                "gpu_memory_utilization",
                "max_model_len",
                "dtype",
                "tokenizer",
                "seed",
                "adapter",
                "llm_kwargs",
            }
        ),
        chat_options=frozenset(
            {
                "batch_size",
                "tensor_parallel_size",
                "gpu_memory_utilization",
                "max_model_len",
                "seed",
            }
        ),
    )
)

BACKENDS: tuple[str, ...] = backend_names("extractor")
"""The extractor backends: rules, openai, transformers, vllm."""
CHAT_BACKENDS: tuple[str, ...] = backend_names("chat")
"""The backends with a chat client: openai, transformers, vllm."""
FALLBACK_BACKENDS: tuple[str, ...] = backend_names("extractor", needs_model=False)
"""The backends a model run may fall back to (no model): rules."""
GENERALIZE_BACKENDS: tuple[str, ...] = backend_names("extractor", generalize=True)
"""The backends ``spcl generalize`` runs with: rules, openai, transformers."""
ATTACK_BACKENDS: tuple[str, ...] = backend_names("chat", generalize=True)
"""The chat backends of the generalize attack (and ``spcl eval reidentify``): openai,
transformers."""


def make_extractor(
    backend: str,
    *,
    model: str | None = None,
    endpoint: str | None = None,
    types: tuple[str, ...] = DEFAULT_TYPES,
    options: dict[str, Any] | None = None,
    chunk_chars: int = 0,
) -> Extractor:
    """The extractor named ``backend`` (one of :data:`BACKENDS`); ``options`` go to its constructor
    (:func:`make_client`, its extractor side).

    With ``chunk_chars > 0`` a model backend sees long documents in overlapping windows of that many
    characters (``spcl.extract.backends.chunking``); the rules backend never needs it.

    >>> make_extractor("rules").name
    'rules'
    """
    client = make_client(
        "extractor",
        backend,
        model=model,
        endpoint=endpoint,
        types=types,
        options=options,
        chunk_chars=chunk_chars,
    )
    assert client is not None  # an extractor builder never returns None
    return cast("Extractor", client)  # kind "extractor" builds an Extractor


def make_chat(
    backend: str,
    *,
    model: str | None = None,
    endpoint: str | None = None,
    options: dict[str, Any] | None = None,
) -> ChatClient | None:
    """The chat client of ``backend`` (one of :data:`CHAT_BACKENDS`) with ``options`` as constructor
    arguments; ``None`` for ``rules`` (no model). ``ValueError`` names what is missing
    (:func:`make_client`, its chat side).

    >>> make_chat("rules") is None
    True
    """
    client = make_client("chat", backend, model=model, endpoint=endpoint, options=options)
    return cast("ChatClient | None", client)  # kind "chat" builds a ChatClient (or None: no model)
