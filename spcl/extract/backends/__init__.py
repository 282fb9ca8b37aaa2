"""Extractor backends behind one interface (``spcl.extract.backends.base.Extractor``).

One registry of backends by name (``spcl.extract.backends.registry``) and one factory,
``make_client(kind, backend, ...)``, for both kinds of client; ``make_extractor(backend, ...)`` is
its extractor side and ``make_chat(backend, ...)`` its chat side (all three in the registry,
re-exported here). Heavy libraries (torch, transformers, vllm) are imported only by the backend that
needs them, so ``rules`` and ``openai`` run without them.

Free-form chat with the same models (any prompt, per-request temperature and seed) is
``spcl.extract.backends.chat``: the one ``ChatClient`` interface, with its openai / transformers /
vllm clients (``openai_chat``, ``transformers_chat``, ``vllm_chat`` beside it), used by ``spcl
annotate``, ``spcl generalize``, ``spcl eval reidentify`` and the ``openai`` extractor itself.
"""

from __future__ import annotations

from spcl.extract.backends.base import BackendUnavailable, Extraction, ExtractionError, Extractor
from spcl.extract.backends.registry import (
    ATTACK_BACKENDS,
    BACKENDS,
    CHAT_BACKENDS,
    DEFAULT_BACKEND,
    FALLBACK_BACKENDS,
    GENERALIZE_BACKENDS,
    OPTION_ALIASES,
    RULES_BACKEND,
    BackendSpec,
    backend_names,
    backends_taking,
    check_options,
    is_model_backend,
    is_server_backend,
    make_chat,
    make_client,
    make_extractor,
    register_backend,
    select_options,
    takes_option,
)

__all__ = [
    "ATTACK_BACKENDS",
    "BACKENDS",
    "CHAT_BACKENDS",
    "DEFAULT_BACKEND",
    "FALLBACK_BACKENDS",
    "GENERALIZE_BACKENDS",
    "OPTION_ALIASES",
    "RULES_BACKEND",
    "BackendSpec",
    "BackendUnavailable",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "backend_names",
    "backends_taking",
    "check_options",
    "is_model_backend",
    "is_server_backend",
    "make_chat",
    "make_client",
    "make_extractor",
    "register_backend",
    "select_options",
    "takes_option",
]
