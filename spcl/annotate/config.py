"""The annotate job's settings and on-disk layout: the config, the job's error, the part and output
names, and the done-markers of the per-file parts (read by the job and by
``spcl.annotate.finalize``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from spcl.annotate.candidates import CANDIDATE_MODES
from spcl.annotate.prompt import PROMPT_VERSION
from spcl.annotate.teachers import TeacherSpec, name_teachers
from spcl.config import InputSettings
from spcl.config_models import JobConfig
from spcl.executor.errors import JobError
from spcl.executor.state import (
    DoneMarker,
    load_json_markers,
    read_json_marker,
    read_jsonl,
    write_json_atomic,
)
from spcl.executor.units import list_unit_files, record_file_key
from spcl.io.atomic import write_atomic
from spcl.io.jsonl import jsonl_text
from spcl.io.readers import is_supported

__all__ = [
    "METADATA_FILES",
    "OUTPUT_FILES",
    "PARTS",
    "WORK",
    "AnnotateConfig",
    "AnnotateError",
    "input_key",
    "jsonl_text",
    "list_input_files",
    "load_done",
    "merge_counts",
    "read_jsonl",
    "read_marker",
    "write_json_atomic",
    "write_private_atomic",
]

OUTPUT_FILES: tuple[str, ...] = (
    "labelled.jsonl",
    "rejected.jsonl",
    "dropped.jsonl",
    "pending.jsonl",
)
PARTS = ("labelled", "rejected", "dropped", "pending")
WORK = "_work"


class AnnotateError(JobError):
    """The job cannot run (bad input, settings that do not match the existing parts); names paths
    only."""


class AnnotateConfig(JobConfig):
    """Everything an annotate run needs; ``options`` go to every teacher client's constructor.

    ``output`` is the output folder (``out``, its former spelling, is still accepted with a
    deprecation warning, and ``cfg.out`` reads it)."""

    deprecated_keys: ClassVar[dict[str, str]] = {"out": "output"}

    input: str = Field(description="input: a file or a folder (recursive)")
    output: str = Field(description="output folder (former spelling: out)")
    teachers: list[TeacherSpec] = Field(description="two or more teacher models")
    verifier: TeacherSpec | None = Field(None, description="a model that checks disputed labels")
    min_confidence: float = Field(0.8, description="labels below this confidence are rejected")
    candidates: str = Field("person", description="which spans are offered to the teachers")
    positive_share: float | None = Field(
        None, description="balance: share of documents with a positive label"
    )
    seed: int = Field(0, description="seed of the hashed-id balance")
    batch_size: int = Field(32, description="documents per teacher call")
    max_chars: int = Field(
        6000, description="longer texts are not sent to the teachers (dropped as too_long)"
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="options of every teacher client"
    )
    run_id: str = Field(
        "", description="names the run in done-markers (not part of the parts hash)"
    )

    @property
    def out(self) -> str:
        """The output folder (the former name of :attr:`output`)."""
        return self.output

    @field_validator("teachers")
    @classmethod
    def _two_teachers(cls, value: list[TeacherSpec]) -> list[TeacherSpec]:
        if len(value) < 2:
            raise ValueError("annotate needs at least two --teacher")
        return value

    @field_validator("candidates")
    @classmethod
    def _known_candidates(cls, value: str) -> str:
        if value not in CANDIDATE_MODES:
            raise ValueError(f"--candidates must be one of {', '.join(CANDIDATE_MODES)}")
        return value

    @field_validator("min_confidence")
    @classmethod
    def _confidence(cls, value: float) -> float:
        if not 0.0 <= value <= 1.0:
            raise ValueError("--min-confidence must lie in [0, 1]")
        return value

    @field_validator("positive_share")
    @classmethod
    def _share(cls, value: float | None) -> float | None:
        if value is not None and not 0.0 < value <= 1.0:
            raise ValueError("--positive-share must lie in (0, 1]")
        return value

    @model_validator(mode="after")
    def _named_teachers(self) -> AnnotateConfig:
        named = name_teachers([*self.teachers, *([self.verifier] if self.verifier else [])])
        self.teachers = named[: len(self.teachers)]
        self.verifier = named[-1] if self.verifier else None
        return self

    def parts_hash(self) -> str:
        """Hash of what decides the parts (teachers, verifier, prompt, thresholds, candidates) —
        not balance."""
        what = {
            "prompt": PROMPT_VERSION,
            "teachers": [t.to_json() for t in self.teachers],
            "verifier": self.verifier.to_json() if self.verifier else None,
            "min_confidence": self.min_confidence,
            "candidates": self.candidates,
            "max_chars": self.max_chars,
        }
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


METADATA_FILES = frozenset(
    {
        "manifest.json",
        "stats.json",
        "metrics.json",
        "report.json",
        "plan.json",
        "agreement.json",
        "estimates.json",
    }
)
"""spcl's own metadata files: never read as input when a folder (e.g. a filter output) is given."""


def list_input_files(input_path: str | Path) -> list[Path]:
    """The JSONL / Parquet files under ``input_path`` (a file or a folder, recursive), sorted; names
    starting with ``.`` or ``_`` and spcl's metadata files (:data:`METADATA_FILES`) are skipped
    (``spcl.executor.units.list_unit_files``)."""
    settings = InputSettings()
    return list_unit_files(
        input_path,
        lambda p: is_supported(p.name, settings) and p.name not in METADATA_FILES,
        error=AnnotateError,
    )


def input_key(path: Path, root: str | Path) -> str:
    """A stable, filesystem-safe name for one input file: its stem and a hash of its path under
    ``root`` (``spcl.executor.units.record_file_key``)."""
    return record_file_key(path, root)


def write_private_atomic(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` (mode 0600) under a temporary name, then move it into place
    (``spcl.io.atomic.write_atomic``)."""
    write_atomic(path, data, private=True)


def merge_counts(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Add ``theirs`` into ``mine``: numbers sum, dicts merge recursively, anything else keeps
    ``mine``."""
    for k, v in theirs.items():
        if isinstance(v, dict):
            merge_counts(mine.setdefault(k, {}), v)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            mine[k] = mine.get(k, 0) + v
        else:
            mine.setdefault(k, v)
    return mine


def read_marker(path: Path) -> DoneMarker | None:
    """A done-marker, or ``None`` when the file was never committed."""
    return read_json_marker(path)


def load_done(out: str | Path) -> dict[str, DoneMarker]:
    """``{key: done-marker}`` of every committed input file of an output folder."""
    return load_json_markers(Path(out) / WORK / "done")
