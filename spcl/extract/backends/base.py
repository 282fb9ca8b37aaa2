"""The one small interface every extractor backend shares.

An extractor turns a batch of documents into the raw text the model printed for each (the
``TYPE<TAB>ORIGINAL`` contract, parsed later by ``spcl.extract.contract``). Failures are per
document: ``run(texts)`` returns one :class:`Extraction` per text, with ``raw`` set or ``error``
naming a reason (``timeout``, ``http_503``, ``output_truncated`` …) that never contains document
text. ``extract(texts)`` is the plain form that returns the raw strings and raises
:class:`ExtractionError` if any document failed.

Errors that make the whole backend useless (an unreachable endpoint, a model that cannot be loaded)
raise :class:`BackendUnavailable` instead: the job stops and a rerun resumes, rather than failing
every document.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from spcl.entity_types import DEFAULT_TYPES
from spcl.errors import RunFailed
from spcl.extract.backends.errors import BackendUnavailable
from spcl.extract.prompt import PROMPT_VERSION

__all__ = [
    "BackendUnavailable",
    "BatchedExtractor",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "timed_batch",
]


class ExtractionError(RunFailed, RuntimeError):
    """At least one document of a batch failed; ``failures`` maps batch index → reason."""

    def __init__(self, failures: dict[int, str]):
        self.failures = dict(failures)
        reasons = sorted(set(failures.values()))
        super().__init__(f"{len(failures)} document(s) failed extraction: {', '.join(reasons)}")


@dataclass(slots=True)
class Extraction:
    """One document's extraction: ``raw`` model output, or ``error`` (a reason code, never document
    text).

    ``generated_tokens`` is what the backend generated and ``prompt_tokens`` what it read (the
    engine's own counts, or the server's ``usage``; ``None`` when unknown); ``seconds`` is the
    latency this document saw (the request for per-request backends, the batch for batched ones).
    """

    raw: str | None = None
    error: str | None = None
    generated_tokens: int | None = None
    seconds: float = 0.0
    prompt_tokens: int | None = None

    @property
    def ok(self) -> bool:
        """True when the backend produced an output."""
        return self.error is None and self.raw is not None

    def __repr__(self) -> str:  # never print model output: it quotes the document
        return (
            f"Extraction(ok={self.ok}, error={self.error!r},"
            f" generated_tokens={self.generated_tokens}, prompt_tokens={self.prompt_tokens},"
            f" seconds={self.seconds:.3f})"
        )


class Extractor(ABC):
    """Base class of the backends: ``run`` (per-document results) and ``extract`` (raw strings or
    raise).

    ``name`` is the backend (``rules``, ``openai``, ``transformers``, ``vllm``), ``model`` what it
    runs (a model path or served name; the rules backend's detector version), ``prompt_version`` the
    prompt it sends (``"none"`` for backends that send no prompt).
    """

    name: str = "base"
    model: str = ""
    prompt_version: str = PROMPT_VERSION

    def __init__(self, types: tuple[str, ...] = DEFAULT_TYPES):
        self.types = tuple(types)

    @abstractmethod
    def run(self, texts: list[str]) -> list[Extraction]:
        """One :class:`Extraction` per text, in order; never raises for a single document's
        failure."""

    def extract(self, texts: list[str]) -> list[str]:
        """Raw outputs for ``texts``; raises :class:`ExtractionError` naming the failed indices
        and reasons."""
        results = self.run(texts)
        failures = {i: r.error or "no_output" for i, r in enumerate(results) if not r.ok}
        if failures:
            raise ExtractionError(failures)
        return [r.raw or "" for r in results]

    def close(self) -> None:
        """Release what the backend holds (threads, models); the default holds nothing."""
        return None

    def __enter__(self) -> Extractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BatchedExtractor(Extractor):
    """An in-process model backend: ``run`` feeds ``_run_batch`` chunks of ``batch_size`` texts."""

    batch_size: int = 16

    @abstractmethod
    def _run_batch(self, texts: list[str]) -> list[Extraction]:
        """One :class:`Extraction` per text of one chunk."""

    def run(self, texts: list[str]) -> list[Extraction]:
        """Generate for ``texts`` in chunks of ``batch_size``; one :class:`Extraction` per text."""
        out: list[Extraction] = []
        for k in range(0, len(texts), self.batch_size):
            out += self._run_batch(texts[k : k + self.batch_size])
        return out


def timed_batch(results: list[Extraction], started: float) -> list[Extraction]:
    """Stamp every result of a batch with the batch's wall time (what each document waited)."""
    elapsed = time.perf_counter() - started
    for r in results:
        r.seconds = elapsed
    return results
