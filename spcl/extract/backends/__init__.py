"""Extractor backends behind one interface (``spcl.extract.backends.base.Extractor``).

One registry of backends by name (``spcl.extract.backends.registry``) and one factory, ``make_client(kind,
backend, ...)``, for both kinds of client; ``make_extractor(backend, ...)`` is its extractor side and
``make_chat(backend, ...)`` its chat side (all three in the registry, re-exported here). Heavy libraries
(torch, transformers, vllm) are imported only by the backend that needs them, so ``rules`` and ``openai`` run
without them.

Free-form chat with the same models (any prompt, per-request temperature and seed) is
``spcl.extract.backends.chat``: the one ``ChatClient`` interface and its openai / transformers / vllm clients,
used by ``spcl annotate``, ``spcl generalize``, ``spcl eval reidentify`` and the ``openai`` extractor itself.
"""

from __future__ import annotations

from spcl.extract.backends.base import BackendUnavailable, Extraction, ExtractionError, Extractor
from spcl.extract.backends.registry import (
    BACKENDS,
    CHAT_BACKENDS,
    BackendSpec,
    make_chat,
    make_client,
    make_extractor,
    register_backend,
)

__all__ = ["BACKENDS", "CHAT_BACKENDS", "BackendSpec", "BackendUnavailable", "Extraction", "ExtractionError",
           "Extractor", "make_chat", "make_client", "make_extractor", "register_backend"]
