"""The generalize job's configuration (a :class:`spcl.config.JobConfig`); the method's parameters are the
``generalize:`` section of the YAML config (:class:`spcl.config.GeneralizeSettings`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from pydantic import Field, ValidationError, field_validator

from spcl.config import GeneralizeSettings, JobConfig
from spcl.entity_types import DEFAULT_TYPES

__all__ = ["GeneralizeJobConfig"]


class GeneralizeJobConfig(JobConfig):
    """Everything a generalize run needs; ``options`` go to the chat client and the extractor.

    ``settings``: keys of :class:`spcl.config.GeneralizeSettings` (the ``generalize:`` section); a key not given
    takes its default."""

    positional: ClassVar[tuple[str, ...]] = ("input", "output", "vault")

    input: str
    output: str
    vault: str
    backend: str = "rules"
    model: str | None = None
    endpoint: str | None = None
    batch_size: int = 32
    types: tuple[str, ...] = DEFAULT_TYPES
    options: dict[str, Any] = Field(default_factory=dict)
    extract_options: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)  # GeneralizeSettings fields
    extract_backend: str | None = None  # None: the same backend finds the spans; "rules": the rules extractor
    names: bool = True  # add the CPU person-name finders' rows to the candidates (as spcl mask does)
    run_id: str = ""  # names the run in done-markers (set by run_generalize_job*)

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
