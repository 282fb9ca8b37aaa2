"""The generalize job's configuration (a :class:`spcl.config_models.JobConfig`); the method's parameters are the
``generalize:`` section of the YAML config (:class:`spcl.config.GeneralizeSettings`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from pydantic import Field, ValidationError, field_validator

from spcl.config import GeneralizeSettings
from spcl.config_models import JobConfig
from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends.registry import DEFAULT_BACKEND

__all__ = ["GeneralizeJobConfig"]


class GeneralizeJobConfig(JobConfig):
    """Everything a generalize run needs; ``options`` go to the chat client and the extractor.

    ``settings``: keys of the ``generalize:`` section (``spcl.config.GeneralizeSettings``); a key not given
    takes its default."""

    positional: ClassVar[tuple[str, ...]] = ("input", "output", "vault")

    input: str = Field(description='flagged Parquet: a file or a folder (recursive)')
    output: str = Field(description='output folder')
    vault: str = Field(description='vault folder for the encrypted originals')
    backend: str = Field(
        DEFAULT_BACKEND, description='extractor backend (registry name: rules, openai, transformers, …)')
    model: str | None = Field(None, description='served model name, or a model folder / file')
    endpoint: str | None = Field(None, description='OpenAI-compatible base URL')
    batch_size: int = Field(32, description='documents per batch')
    types: tuple[str, ...] = Field(DEFAULT_TYPES, description='entity types to find (default: all)')
    options: dict[str, Any] = Field(default_factory=dict,
        description='backend options (timeouts, concurrency, device, …)')
    extract_options: dict[str, Any] = Field(default_factory=dict,
        description="options of the span extractor's backend")
    settings: dict[str, Any] = Field(default_factory=dict,
        description="the method's parameters: keys of the generalize: section (missing keys take its defaults)")
    extract_backend: str | None = Field(
        None, description='null: the same backend finds the spans; rules: the rules extractor')
    names: bool = Field(
        True, description="add the CPU person-name finders' candidates (as spcl mask does)")
    run_id: str = Field("", description="names this run's files; a fresh one is made when empty")

    @field_validator("settings")
    @classmethod
    def _method_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            GeneralizeSettings.model_validate(value)
        except ValidationError as err:
            keys = sorted({".".join(str(p) for p in e["loc"]) for e in err.errors()})
            raise ValueError(f"bad or unknown generalize setting(s) {keys}") from None
        return value

    def release_hash(self) -> str:
        """SHA-256 (first 16 hex digits) of the settings that decide what a generalized document holds: backend,
        model, types, method settings, span extractor, name finders, adapters (not timeouts or batch sizes)."""
        settings = GeneralizeSettings(**self.settings).model_dump()  # defaults filled in: {} and the conf agree
        body = {"backend": self.backend, "model": self.model, "types": list(self.types), "settings": settings,
                "extract_backend": self.extract_backend, "names": self.names,
                "adapters": [(self.options or {}).get("adapter"), (self.extract_options or {}).get("adapter")]}
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]
