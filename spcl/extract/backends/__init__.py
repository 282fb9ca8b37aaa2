"""Extractor backends behind one interface (``spcl.extract.backends.base.Extractor``).

``make_extractor(backend, ...)`` builds one by name; heavy libraries (torch, transformers, vllm) are
imported only by the backend that needs them, so ``rules`` and ``openai`` run without them.
"""

from __future__ import annotations

from typing import Any

from spcl.extract.backends.base import BackendUnavailable, Extraction, ExtractionError, Extractor
from spcl.mask.variants import DEFAULT_TYPES

BACKENDS: tuple[str, ...] = ("rules", "openai", "transformers", "vllm")

__all__ = ["BACKENDS", "BackendUnavailable", "Extraction", "ExtractionError", "Extractor", "make_extractor"]


def make_extractor(
    backend: str,
    *,
    model: str | None = None,
    endpoint: str | None = None,
    types: tuple[str, ...] = DEFAULT_TYPES,
    options: dict[str, Any] | None = None,
) -> Extractor:
    """The extractor named ``backend`` (one of :data:`BACKENDS`); ``options`` go to its constructor.

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

        return OpenAIExtractor(endpoint, model, types=types, **opts)
    if backend == "transformers":
        from spcl.extract.backends.transformers_backend import TransformersExtractor

        return TransformersExtractor(model, types=types, **opts)
    from spcl.extract.backends.vllm_backend import VLLMExtractor

    return VLLMExtractor(model, types=types, **opts)
