"""The generalize job's configuration (a :class:`spcl.mask_stage.config.ExtractionJobConfig`); the
method's parameters are the ``generalize:`` section of the YAML config
(:class:`spcl.config.GeneralizeSettings`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import Field, ValidationError, field_validator

from spcl.config import GeneralizeSettings
from spcl.entity_types import DEFAULT_TYPES
from spcl.mask_stage.config import BackendOptions, EntityTypes, ExtractionJobConfig, RunId

__all__ = ["GeneralizeJobConfig"]


class GeneralizeJobConfig(ExtractionJobConfig):
    """Everything a generalize run needs; ``options`` go to the chat client and the extractor.

    ``settings``: keys of the ``generalize:`` section (``spcl.config.GeneralizeSettings``); a key
    not given takes its default."""

    input: str = Field(description="flagged Parquet: a file or a folder (recursive)")
    batch_size: int = Field(32, description="documents per batch")
    types: EntityTypes = DEFAULT_TYPES
    options: BackendOptions
    extract_options: dict[str, Any] = Field(
        default_factory=dict, description="options of the span extractor's backend"
    )
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "the method's parameters: keys of the generalize: section (missing keys take its"
            " defaults)"
        ),
    )
    extract_backend: str | None = Field(
        None, description="null: the same backend finds the spans; rules: the rules extractor"
    )
    names: bool = Field(
        True, description="add the CPU person-name finders' candidates (as spcl mask does)"
    )
    run_id: RunId = ""

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
        """SHA-256 (first 16 hex digits) of the settings that decide what a generalized document
        holds: backend, model, types, method settings, span extractor, name finders, adapters (not
        timeouts or batch sizes)."""
        # defaults filled in: {} and the conf agree
        settings = GeneralizeSettings(**self.settings).model_dump()
        body = {
            "backend": self.backend,
            "model": self.model,
            "types": list(self.types),
            "settings": settings,
            "extract_backend": self.extract_backend,
            "names": self.names,
            "adapters": [
                (self.options or {}).get("adapter"),
                (self.extract_options or {}).get("adapter"),
            ],
        }
        return hashlib.sha256(
            json.dumps(body, sort_keys=True, default=str).encode("utf-8")
        ).hexdigest()[:16]
