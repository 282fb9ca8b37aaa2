"""spcl as datatrove pipeline steps (extra ``datatrove``): a filter and an annotator over the
filter's batch function.

- :class:`SpclFilter` (a datatrove ``BaseFilter``) forwards ``clean`` documents unchanged and drops
  ``flagged`` and ``quarantine`` ones — to the ``exclusion_writer`` when one is given, with the
  verdict in ``doc.metadata`` (``spcl_decision``, ``spcl_reasons``, ``spcl_hits``, ...; datatrove
  adds ``filter_reason``).
- :class:`SpclMask` masks: ``clean`` documents go on unchanged, ``flagged`` ones go on with their
  text masked (rules backend by default; mappings in the encrypted vault first), and documents that
  could not be masked (``failed``) or screened (``quarantine``) are dropped to the
  ``exclusion_writer`` with the reason in ``doc.metadata`` (``spcl_mask_status``,
  ``spcl_mask_reason``) — never forwarded unmasked.
- :class:`SpclAnnotator` drops nothing: it writes the same verdict into every document's metadata,
  so a later step (or the ``spcl mask`` stage) can act on it.

Both count documents by decision (``spcl_clean``, ``spcl_flagged``, ``spcl_quarantine``) and by
reason (``flagged_rule:EMAIL``, ``flagged_screen:lgbm``, ``quarantine_text_contains_nul``) in
datatrove's stats; the filter's ``dropped_flagged`` / ``dropped_quarantine`` come from
``BaseFilter``. Counters hold names, never text. A document whose text is not a string, empty, too
long or holds NUL is ``quarantine`` (dropped to the exclusion writer by the filter, annotated by the
annotator), never an exception; before such a document is written to the exclusion writer its text
is made writable (a non-string becomes ``""`` with its type name in ``spcl_text_type``; lone
surrogates are written as ``\\udXXX`` escapes, ``spcl_text_escaped``). Settings travel to
datatrove's workers as JSON; each worker process loads detectors and the screen model once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypedDict

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.filters.base_filter import BaseFilter
from datatrove.pipeline.writers.disk_base import DiskWriter
from datatrove.utils.batching import batched

from spcl.config import Settings
from spcl.extract.backends.registry import DEFAULT_BACKEND
from spcl.integrations.masking import MASK_COLUMNS, MaskOptions, mask_options, masker_for
from spcl.integrations.rows import context, screen_batch, settings_json

METADATA_PREFIX = "spcl_"
_KEPT = (
    "decision",
    "reasons",
    "hits",
    "scores",
    "lang",
    "top_category",
    "quarantine_reason",
    "row_key",
    "config_hash",
    "model_version",
)


class Verdict(TypedDict):
    """The verdict of one document: the ``_KEPT`` columns of its ``OUTPUT_SCHEMA`` row
    (``spcl.io.schema``), in that order; ``hits`` are the rule hits (type, start, end, validated,
    detector) and ``scores`` the screen's (named by its kind), both ``None`` where nothing ran."""

    decision: str
    reasons: list[str] | None
    hits: list[dict[str, str | int | bool | None]] | None
    scores: dict[str, float | bool | None] | None
    lang: str | None
    top_category: str | None
    quarantine_reason: str | None
    row_key: str
    config_hash: str
    model_version: str | None


class _Screening:
    """What both steps share: settings JSON, a per-rank position counter, the verdict of a batch
    of documents."""

    settings_js: str
    _source: str
    _position: int

    def _start(self, rank: int) -> None:
        self._source = f"datatrove/rank-{rank:05d}"
        self._position = 0

    def verdicts(self, docs: list[Document]) -> list[Verdict]:
        """One ``OUTPUT_SCHEMA`` row (as a dict, without the text) per document, in order."""
        if not hasattr(self, "_source"):
            self._start(0)
        out = screen_batch(
            [d.text for d in docs],
            [d.id for d in docs],
            context(self.settings_js),
            self._source,
            self._position,
        )
        self._position += len(docs)
        rows: list[Verdict] = out.select(list(_KEPT)).to_pylist()
        return rows

    def count(self, step: PipelineStep, row: Verdict) -> None:
        """Stats by decision and by reason (names only)."""
        decision = row["decision"]
        step.stat_update(f"spcl_{decision}")
        if decision == "flagged":
            step.stat_update(*(f"flagged_{r}" for r in row["reasons"] or ()))
        elif decision == "quarantine":
            step.stat_update(f"quarantine_{row['quarantine_reason']}")


def annotate(doc: Document, row: Verdict) -> None:
    """Write a verdict into ``doc.metadata`` under ``spcl_*`` keys, in ``_KEPT`` order (the text
    is not touched)."""
    for key, value in row.items():
        doc.metadata[METADATA_PREFIX + key] = value


def writable(doc: Document) -> Document:
    """``doc`` made safe for a datatrove writer (in place): a text that is not a string becomes
    ``""`` (its type name in ``spcl_text_type``), lone surrogates become ``\\udXXX`` escapes
    (``spcl_text_escaped``)."""
    text = doc.text
    if not isinstance(text, str):
        doc.metadata[METADATA_PREFIX + "text_type"] = type(text).__name__
        doc.text = ""
    else:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            doc.text = text.encode("utf-8", "backslashreplace").decode("utf-8")
            doc.metadata[METADATA_PREFIX + "text_escaped"] = True
    return doc


def _run_filter(step: BaseFilter, data: DocumentsPipeline, rank: int) -> DocumentsPipeline:
    """``BaseFilter.run``, with every dropped document made writable before the exclusion writer
    sees it."""
    import contextlib

    from datatrove.utils.typeshelper import StatHints

    with step.exclusion_writer if step.exclusion_writer else contextlib.nullcontext() as writer:
        for batch in batched(data if data is not None else (), step.batch_size):
            step.stat_update("batches")
            with step.track_time("batch"):
                results = step.filter_batch(list(batch))
            for doc, result in zip(batch, results, strict=True):
                step.stat_update(StatHints.total)
                keep, reason = (result, None) if isinstance(result, bool) else result
                if keep:
                    step.stat_update(StatHints.forwarded)
                    step.update_doc_stats(doc)
                    yield doc
                    continue
                step.stat_update(StatHints.dropped)
                if reason:
                    step.stat_update(f"dropped_{reason}")
                if writer is not None:
                    if reason:
                        doc.metadata["filter_reason"] = reason
                    writer.write(writable(doc), rank)


class SpclFilter(_Screening, BaseFilter):
    """Keep ``clean`` documents; drop ``flagged`` and ``quarantine`` ones (to ``exclusion_writer``,
    annotated).

    ``settings`` default to the shipped config; ``batch_size`` documents are screened per call of
    the batch function (datatrove's ``filter_batch``).
    """

    name = "🔏 spcl PII screen"

    def __init__(
        self,
        exclusion_writer: DiskWriter | None = None,
        batch_size: int = 1000,
        settings: Settings | None = None,
    ) -> None:
        super().__init__(exclusion_writer, batch_size)
        self.settings_js = settings_json(settings)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        """BaseFilter's run (dropped documents made writable for the exclusion writer), row keys
        per rank."""
        self._start(rank)
        return _run_filter(self, data, rank)

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        """The verdict of one document (``True`` to keep it)."""
        return self.filter_batch([doc])[0]

    def filter_batch(self, batch: list[Document]) -> list[bool | tuple[bool, str]]:
        """``True`` for each clean document; ``(False, "flagged" | "quarantine")`` otherwise,
        annotated."""
        results: list[bool | tuple[bool, str]] = []
        for doc, row in zip(batch, self.verdicts(batch), strict=True):
            self.count(self, row)
            if row["decision"] == "clean":
                results.append(True)
            else:
                annotate(doc, row)
                results.append((False, row["decision"]))
        return results


class SpclAnnotator(_Screening, PipelineStep):
    """Write the verdict (decision, reasons, hits, scores, lang, row key) into every document's
    metadata."""

    name = "🔏 spcl PII annotate"
    type = "🏷 - ANNOTATOR"

    def __init__(self, batch_size: int = 1000, settings: Settings | None = None) -> None:
        super().__init__()
        self.batch_size = batch_size
        self.settings_js = settings_json(settings)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        """Every document forwarded, in order, with ``spcl_*`` metadata."""
        self._start(rank)
        docs: Iterable[Document] = data if data is not None else ()
        for batch in batched(docs, self.batch_size):
            with self.track_time("batch"):
                rows = self.verdicts(list(batch))
            for doc, row in zip(batch, rows, strict=True):
                self.count(self, row)
                annotate(doc, row)
                self.stat_update("forwarded")
                if isinstance(doc.text, str):
                    self.update_doc_stats(doc)
                yield doc


class SpclMask(BaseFilter):
    """Mask flagged documents in the pipeline, as ``spcl mask`` does (see the module docstring).

    ``vault``: the vault folder (key from ``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``); ``backend``
    (``rules`` by default, or any ``spcl mask`` backend with its
    ``model``/``endpoint``/``options``); ``operators`` per type (``{"PERSON": "surrogate"}`` or
    ``["PERSON=surrogate"]``; default: the settings' ``mask.operators``). Stats: ``spcl_clean``,
    ``spcl_masked``, ``spcl_failed``, ``spcl_quarantine`` and one ``failed_<reason>`` /
    ``quarantine_<reason>`` per document that did not go on.
    """

    name = "🔏 spcl PII mask"

    def __init__(
        self,
        vault: str,
        exclusion_writer: DiskWriter | None = None,
        batch_size: int = 256,
        *,
        settings: Settings | None = None,
        backend: str = DEFAULT_BACKEND,
        model: str | None = None,
        endpoint: str | None = None,
        options: dict[str, Any] | None = None,
        operators: dict[str, str] | list[str] | None = None,
        types: list[str] | None = None,
        names: bool = True,
    ) -> None:
        super().__init__(exclusion_writer, batch_size)
        self.opts: MaskOptions = mask_options(
            vault,
            settings,
            backend=backend,
            model=model,
            endpoint=endpoint,
            options=options,
            types=types,
            operators=operators,
            names=names,
        )
        self.opts_js = self.opts.to_json()
        self._source = "datatrove/rank-00000"
        self._position = 0

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        """Masked and clean documents forwarded in order; failed and quarantined ones to the
        exclusion writer."""
        self._source = f"datatrove/rank-{rank:05d}"
        self._position = 0
        return _run_filter(self, data, rank)

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        """The result of one document (``True`` to forward it; its text masked when it was
        flagged)."""
        return self.filter_batch([doc])[0]

    def filter_batch(self, batch: list[Document]) -> list[bool | tuple[bool, str]]:
        """Mask a batch: ``True`` for clean and masked documents, ``(False, "failed" |
        "quarantine")`` else."""
        masker = masker_for(self.opts_js)
        rows = masker.mask(
            [d.text for d in batch], [d.id for d in batch], self._source, self._position
        )
        self._position += len(batch)
        results: list[bool | tuple[bool, str]] = []
        for doc, row in zip(batch, rows, strict=True):
            self.stat_update(f"spcl_{row.status}")
            for key in _KEPT:
                doc.metadata[METADATA_PREFIX + key] = row.screen.get(key)
            doc.metadata[METADATA_PREFIX + "mask_status"] = row.status
            if row.status in ("clean", "masked"):
                if row.status == "masked":
                    doc.text = row.text
                    doc.metadata[METADATA_PREFIX + "mask_spans"] = row.spans
                    doc.metadata[METADATA_PREFIX + "vault_file"] = row.vault_file
                results.append(True)
            else:
                self.stat_update(f"{row.status}_{row.reason}")
                doc.metadata[METADATA_PREFIX + "mask_reason"] = row.reason
                results.append((False, row.status))
        return results


__all__ = ["MASK_COLUMNS", "SpclAnnotator", "SpclFilter", "SpclMask", "writable"]
