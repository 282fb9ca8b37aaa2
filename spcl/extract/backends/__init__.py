"""Extractor backends behind one interface (``spcl.extract.backends.base.Extractor``).

One registry of backends by name (``spcl.extract.backends.registry``) and one factory, ``make_client(kind,
backend, ...)``, for both kinds of client; ``make_extractor(backend, ...)`` is its extractor side and
``spcl.extract.backends.chat.make_chat`` its chat side. Heavy libraries (torch, transformers, vllm) are
imported only by the backend that needs them, so ``rules`` and ``openai`` run without them.

Free-form chat with the same models (any prompt, per-request temperature and seed) is
``spcl.extract.backends.chat``: the one ``ChatClient`` interface and its openai / transformers / vllm clients,
used by ``spcl annotate``, ``spcl generalize``, ``spcl eval reidentify`` and the ``openai`` extractor itself.
"""

from __future__ import annotations

from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.base import BackendUnavailable, Extraction, ExtractionError, Extractor
from spcl.extract.backends.registry import BackendSpec, backend_names, make_client, register_backend

BACKENDS: tuple[str, ...] = backend_names("extractor")
"""The extractor backends (``spcl.extract.backends.registry``): rules, openai, transformers, vllm."""

__all__ = ["BACKENDS", "BackendSpec", "BackendUnavailable", "Extraction", "ExtractionError", "Extractor",
           "make_client", "make_extractor", "register_backend"]


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
    (``spcl.extract.backends.registry.make_client``).

    With ``chunk_chars > 0`` a model backend sees long documents in overlapping windows of that many
    characters (``spcl.extract.backends.chunking``); the rules backend never needs it.

    >>> make_extractor("rules").name
    'rules'
    """
    client = make_client("extractor", backend, model=model, endpoint=endpoint, types=types, options=options,
                         chunk_chars=chunk_chars)
    assert client is not None  # an extractor builder never returns None
    return client  # type: ignore[return-value]
