"""Extractor backends behind one interface (``spcl.extract.backends.base.Extractor``).

``make_extractor(backend, ...)`` builds one by name; heavy libraries (torch, transformers, vllm) are
imported only by the backend that needs them, so ``rules`` and ``openai`` run without them.

Free-form chat with the same models (any prompt, per-request temperature and seed) is
``spcl.extract.backends.chat``: the one ``ChatClient`` interface and its openai / transformers / vllm clients,
used by ``spcl annotate``, ``spcl generalize``, ``spcl eval reidentify`` and the ``openai`` extractor itself.
"""

from __future__ import annotations

from typing import Any

from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.base import BackendUnavailable, Extraction, ExtractionError, Extractor

BACKENDS: tuple[str, ...] = ("rules", "openai", "transformers", "vllm")

__all__ = ["BACKENDS", "BackendUnavailable", "Extraction", "ExtractionError", "Extractor", "make_extractor"]


def make_extractor(
    backend: str,
    *,
    model: str | None = None,
    endpoint: str | None = None,
    types: tuple[str, ...] = DEFAULT_TYPES,
    options: dict[str, Any] | None = None,
    chunk_chars: int = 0,
) -> Extractor:
    """The extractor named ``backend`` (one of :data:`BACKENDS`); ``options`` go to its constructor.

    With ``chunk_chars > 0`` a model backend sees long documents in overlapping windows of that many
    characters (``spcl.extract.backends.chunking``); the rules backend never needs it.

    >>> make_extractor("rules").name
    'rules'
    """
    opts = dict(options or {})
    if backend == "rules":
        from spcl.extract.backends.rules_backend import RulesExtractor

        return RulesExtractor(types)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if not model:
        raise ValueError(f"the {backend} backend needs --model")
    if backend == "openai":
        if not endpoint:
            raise ValueError("the openai backend needs --endpoint (e.g. http://gpu-node:8000/v1)")
        from spcl.extract.backends.openai_backend import OpenAIExtractor

        return _chunked(OpenAIExtractor(endpoint, model, types=types, **opts), chunk_chars)
    if backend == "transformers":
        from spcl.extract.backends.transformers_backend import TransformersExtractor

        return _chunked(TransformersExtractor(model, types=types, **opts), chunk_chars)
    from spcl.extract.backends.vllm_backend import VLLMExtractor

    return _chunked(VLLMExtractor(model, types=types, **opts), chunk_chars)


def _chunked(extractor: Extractor, chunk_chars: int) -> Extractor:
    if chunk_chars <= 0:
        return extractor
    from spcl.extract.backends.chunking import ChunkingExtractor

    return ChunkingExtractor(extractor, max_chars=chunk_chars, overlap=min(200, chunk_chars // 4))
