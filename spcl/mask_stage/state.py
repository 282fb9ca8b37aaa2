"""What a rerun must do for each input file: the done-markers of an output folder.

``_done/<key>.json`` records the state of one input file's outputs: the SHA-256 of the input's bytes
when it was processed, the runs that wrote it, its counts, and how many of its failures are
transient. A rerun processes a file again from scratch when it has no marker or its content changed
(a re-filtered file with the same name), retries only its failed rows when some failures are
transient (or ``--retry-failed``), and skips it otherwise.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from spcl.executor.state import (
    DoneMarker,
    marker_file,
    marker_unreadable,
    read_json_marker,
    write_json_atomic,
)

__all__ = [
    "FileStats",
    "Marker",
    "checked_marker",
    "load_markers",
    "marker_path",
    "read_marker",
    "write_json_atomic",
]


@dataclass(slots=True)
class FileStats:
    """Counts and timings of one input file's current outputs; sums with ``merge``."""

    files: int = 0
    documents: int = 0
    masked: int = 0
    failed: int = 0
    failed_transient: int = 0
    fallback: int = 0
    failed_reasons: dict[str, int] = field(default_factory=dict)
    entities: dict[str, int] = field(default_factory=dict)  # masked spans per type
    found_by: dict[str, int] = field(default_factory=dict)  # masked spans per finding source
    outputs: int = 0  # documents the primary backend produced an output for
    parsed: int = 0  # ... whose output parsed (contract parse_success)
    checked_rows: int = 0
    hallucinated_rows: int = 0
    generated_tokens: int = 0
    prompt_tokens: int = 0
    token_documents: int = 0  # documents the primary backend reported token counts for
    extract_seconds: float = 0.0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)  # per document, primary backend
    tier_checked: int = 0  # screen-only documents the tier scored
    tier_errors: int = 0  # ... it could not score (they went on to the extractor)
    tier_seconds: float = 0.0
    # per language: cleared, left the LLM path
    tier_cleared: dict[str, int] = field(default_factory=dict)

    _SUMMED = (
        "files",
        "documents",
        "masked",
        "failed",
        "failed_transient",
        "fallback",
        "outputs",
        "parsed",
        "checked_rows",
        "hallucinated_rows",
        "generated_tokens",
        "prompt_tokens",
        "token_documents",
        "extract_seconds",
        "seconds",
        "tier_checked",
        "tier_errors",
        "tier_seconds",
    )

    def merge(self, other: FileStats) -> None:
        """Add ``other`` into this one."""
        for name in self._SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in (
            (self.failed_reasons, other.failed_reasons),
            (self.entities, other.entities),
            (self.found_by, other.found_by),
            (self.tier_cleared, other.tier_cleared),
        ):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        self.latencies.extend(other.latencies)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileStats:
        """A ``FileStats`` from a done-marker's ``stats``."""
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(slots=True)
class Marker:
    """The done-marker of one input file."""

    key: str
    input: str
    input_sha256: str
    last_run: str
    runs: list[str]
    backend: str
    model: str
    prompt_version: str
    config_hash: str
    stats: FileStats
    # MaskJobConfig.release_hash of the run ("" in markers written before it existed)
    release_hash: str = ""

    def to_dict(self) -> DoneMarker:
        """The marker as JSON-ready data."""
        return {
            "key": self.key,
            "input": self.input,
            "input_sha256": self.input_sha256,
            "last_run": self.last_run,
            "runs": list(self.runs),
            "backend": self.backend,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "config_hash": self.config_hash,
            "stats": asdict(self.stats),
            "release_hash": self.release_hash,
        }

    @classmethod
    def from_dict(cls, data: DoneMarker) -> Marker:
        """A marker read back."""
        stats = FileStats.from_dict(data.get("stats", {}))
        if "key" not in data or "input" not in data:
            raise TypeError("a done-marker names its key and input")
        return cls(
            key=data["key"],
            input=data["input"],
            input_sha256=data.get("input_sha256", ""),
            last_run=data.get("last_run", ""),
            runs=data.get("runs", []),
            backend=data.get("backend", ""),
            model=data.get("model", ""),
            prompt_version=data.get("prompt_version", ""),
            config_hash=data.get("config_hash", ""),
            stats=stats,
            release_hash=data.get("release_hash", ""),
        )


def marker_path(output: str | Path, key: str) -> Path:
    """Where the marker of input file ``key`` lives."""
    return marker_file(Path(output) / "_done", key)


def checked_marker(path: Path, data: DoneMarker) -> Marker:
    """``data`` as a :class:`Marker`; :class:`~spcl.executor.state.MarkerError` when a field has the
    wrong kind (a damaged or hand-edited marker is never taken as done)."""
    try:
        marker = Marker.from_dict(data)
        stats = data.get("stats", {})
        ok = (
            all(
                isinstance(getattr(marker, n), str)
                for n in (
                    "key",
                    "input",
                    "input_sha256",
                    "last_run",
                    "backend",
                    "model",
                    "prompt_version",
                    "config_hash",
                    "release_hash",
                )
            )
            and isinstance(marker.runs, list)
            and isinstance(stats, dict)
            and all(isinstance(getattr(marker.stats, n), int | float) for n in FileStats._SUMMED)
        )
    except (TypeError, ValueError, AttributeError):
        ok = False
    if not ok:
        raise marker_unreadable(path)
    return marker


def read_marker(output: str | Path, key: str) -> Marker | None:
    """The marker of ``key``, or ``None`` when the file was never committed; a damaged marker raises
    :class:`~spcl.executor.state.MarkerError` (one line naming the file)."""
    path = marker_path(output, key)
    data = read_json_marker(path)
    return None if data is None else checked_marker(path, data)


def load_markers(output: str | Path) -> dict[str, Marker]:
    """Every marker of an output folder: key → marker."""
    out: dict[str, Marker] = {}
    for path in sorted((Path(output) / "_done").glob("*.json")):
        data = read_json_marker(path)
        if data is not None:
            marker = checked_marker(path, data)
            out[marker.key] = marker
    return out
