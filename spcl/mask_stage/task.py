"""The mask job's work on one batch of an input file's rows, run by the job skeleton's per-unit
loop.

``MaskRunner.take`` asks the backend about a batch of the file's rows, masks what passes the release
check and routes every row to ``masked`` (its mapping to the vault) or ``failed``. The skeleton
(``spcl.executor.filejob``, ``spcl.executor.vaultjob``) reads the rows and commits: the vault file
first (a new, uniquely named file per run and attempt: nothing ever overwrites or deletes a
mapping), then ``failed/part-<key>.parquet``, then ``masked/part-<key>.parquet`` (each written under
a temporary name and moved into place), then the done-marker. A rerun of a file whose failures
include transient ones (or all failures, with ``retry_failed``) re-asks the backend for exactly
those rows (all rows sharing their row keys, and any row a killed run left in neither part) and
rewrites the two part files with the other earlier rows kept; a file whose content changed is
redone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spcl.executor.unitpass import DUPLICATE, SETTLED
from spcl.executor.vaultjob import VaultRun
from spcl.extract.backends import (
    FALLBACK_BACKENDS,
    BackendUnavailable,
    Extraction,
    Extractor,
    is_model_backend,
    make_extractor,
)
from spcl.mask import mask_text
from spcl.mask.ids import release_id
from spcl.mask.operators import operator_key
from spcl.mask.vault import open_vault, resolve_key
from spcl.mask_stage.candidates import RuleHit, rule_hits
from spcl.mask_stage.config import MaskJobConfig
from spcl.mask_stage.document import Outcome, mask_document
from spcl.mask_stage.inputs import InputRows, MaskJobError
from spcl.mask_stage.outputs import FailedRows, MaskedRows, RowIdentity
from spcl.mask_stage.release import Released, check_release
from spcl.mask_stage.state import FileStats
from spcl.text import normalize
from spcl.tier import load_tier

log = logging.getLogger("spcl.mask_stage")

TIER_CLEARED = "tier:below_threshold"
"""The reason (the ``prompt_version`` of its masked row, ``extracted_by`` = ``tier``) of a document
the tier cleared: it left the LLM path unchanged, as the screen's clean documents do."""


@dataclass(slots=True)
class _Doc:
    """One input row waiting for the backend."""

    index: int
    text: str
    hits: list[RuleHit]
    lang: str | None
    screen_only: bool = False  # flagged by the screen alone: no rule reason and no detector hit


@dataclass(frozen=True, slots=True)
class _TierSource:
    """What a masked row names as its producer when the tier cleared it (no extractor ran)."""

    name: str
    model: str
    prompt_version: str = TIER_CLEARED


def screen_only(reasons: list[str] | None, hits: list[RuleHit]) -> bool:
    """True when a flagged row's reasons are all the screen's (``screen:NAME``) and no detector hit
    it: the only documents the tier may clear. A row without reasons is never screen-only (fail
    closed)."""
    return (
        bool(reasons)
        and not hits
        and all(isinstance(r, str) and r.startswith("screen:") for r in reasons or ())
    )


@dataclass(slots=True, kw_only=True)
class MaskPass(VaultRun):
    """One pass over one input file (``spcl.executor.vaultjob.VaultRun``): its rows go to ``masked``
    and ``failed`` (the same buffers as ``rows["masked"]`` and ``rows["failed"]``, typed), written
    by ``who``; ``stats`` is the file's :class:`FileStats`."""

    who: RowIdentity
    masked: MaskedRows
    failed: FailedRows


class MaskRunner:
    """Runs the unit of work (one input file) with one extractor, built once per process."""

    def __init__(
        self,
        cfg: MaskJobConfig,
        extractor: Extractor | None = None,
        fallback: Extractor | None = None,
        vault_key: bytes | None = None,
    ):
        self.cfg = cfg
        self.run_id = cfg.run_id  # names this run's vault files (one per input file and attempt)
        self.key = vault_key if vault_key is not None else resolve_key()
        # creates the header, or checks the key against it
        self._ids = open_vault(cfg.vault, self.key)
        self._ids.close()  # kept for its keyed id hash only
        self.operator_key = operator_key(self.key)
        self.extractor = extractor or make_extractor(
            cfg.backend,
            model=cfg.model,
            endpoint=cfg.endpoint,
            types=cfg.types,
            options=cfg.options,
            chunk_chars=cfg.chunk_chars,
        )
        if fallback is None and cfg.fallback:
            if cfg.fallback not in FALLBACK_BACKENDS:
                raise MaskJobError(f"only --fallback {' or '.join(FALLBACK_BACKENDS)} is supported")
            fallback = make_extractor(cfg.fallback, types=cfg.types)
        self.fallback = fallback
        # the rules backend prints the name finders' rows itself
        self.names = cfg.names and is_model_backend(self.extractor.name)
        self.output = Path(cfg.output)
        for sub in ("masked", "failed", "_done", "_tmp"):
            (self.output / sub).mkdir(parents=True, exist_ok=True)
        self.check = getattr(self.extractor, "check", None)
        self.config_hash = cfg.config_hash()
        self.tier: Any = None
        if cfg.tier:
            self.tier = load_tier(
                cfg.tier, backend=cfg.tier_backend, encoder_dir=cfg.tier_encoder_dir
            )
        # a spcl.progress.Progress while the python engine runs (counts only)
        self.progress: Any = None

    advances_progress = True  # the job skeleton hands it the progress bar: it advances per batch

    def identity(self, source_file: str) -> RowIdentity:
        """Who writes the rows of ``source_file`` (the backend asked for, its model and prompt,
        the config)."""
        ex = self.extractor
        return RowIdentity(ex.name, ex.model, ex.prompt_version, source_file, self.config_hash)

    def _extract(self, extractor: Extractor, texts: list[str]) -> list[Extraction]:
        """The backend's results; an engine error for the whole batch fails its documents
        transiently."""
        try:
            results = extractor.run(texts)
        except BackendUnavailable:
            raise
        # the engine broke on this batch: transient, a rerun retries these rows
        except Exception as err:
            log.warning(
                "%s backend failed a batch of %d documents (%s)",
                extractor.name,
                len(texts),
                type(err).__name__,
            )
            return [Extraction(error=f"engine_error:{type(err).__name__}") for _ in texts]
        if len(results) != len(texts):
            return [Extraction(error="engine_error:result_count") for _ in texts]
        return results

    def _tier_clear(self, docs: list[_Doc], stats: FileStats) -> dict[int, tuple[Outcome, Any]]:
        """The screen-only documents the tier clears (released unchanged, through the release
        check); any error of the tier sends every document on to the extractor."""
        asked = [d for d in docs if d.screen_only]
        if self.tier is None or not asked:
            return {}
        t0 = time.perf_counter()
        try:
            passes = self.tier.passes([d.text for d in asked], [d.lang or "other" for d in asked])
        except Exception as err:  # fail closed: the documents go on to the LLM
            log.warning(
                "tier failed a batch of %d documents (%s); they go on",
                len(asked),
                type(err).__name__,
            )
            stats.tier_errors += len(asked)
            return {}
        finally:
            stats.tier_seconds += time.perf_counter() - t0
        stats.tier_checked += len(asked)
        src = _TierSource("tier", self.tier.version)
        cleared: dict[int, tuple[Outcome, Any]] = {}
        for doc, goes_on in zip(asked, passes, strict=True):
            if goes_on:
                continue
            checked = check_release(
                doc.text, mask_text(doc.text, ()), [h for h in doc.hits if h.flagging]
            )
            if isinstance(checked, Released):
                cleared[doc.index] = (Outcome(released=checked), src)
        return cleared

    def _outcomes(self, docs: list[_Doc], stats: FileStats) -> dict[int, tuple[Outcome, Any]]:
        """Ask the tier (when set) and the backend (and the fallback for what failed) about
        ``docs``; outcome by row index."""
        ex, cfg = self.extractor, self.cfg
        outcomes: dict[int, tuple[Outcome, Any]] = self._tier_clear(docs, stats)
        docs = [d for d in docs if d.index not in outcomes]
        t0 = time.perf_counter()
        results = self._extract(ex, [d.text for d in docs]) if docs else []
        stats.extract_seconds += time.perf_counter() - t0
        for doc, res in zip(docs, results, strict=True):
            stats.latencies.append(round(res.seconds, 6))
            stats.generated_tokens += res.generated_tokens or 0
            stats.prompt_tokens += res.prompt_tokens or 0
            stats.token_documents += (
                res.generated_tokens is not None or res.prompt_tokens is not None
            )
            stats.outputs += res.ok
            outcome = mask_document(
                doc.text,
                res,
                doc.hits,
                cfg.types,
                self.names,
                doc.lang,
                is_model_backend(ex.name),
                operators=cfg.operators,
                operator_key=self.operator_key,
                allow_names=cfg.allow_names,
                deny_names=cfg.deny_names,
            )
            if outcome.parsed is not None:
                stats.parsed += outcome.parsed.parse_success
                stats.checked_rows += outcome.parsed.checked_rows
                stats.hallucinated_rows += len(outcome.parsed.hallucinated_rows)
            outcomes[doc.index] = (outcome, ex)
        retry = [d for d in docs if outcomes[d.index][0].released is None]
        if self.fallback is not None and retry:
            for doc, res in zip(
                retry, self._extract(self.fallback, [d.text for d in retry]), strict=True
            ):
                outcome = mask_document(
                    doc.text,
                    res,
                    doc.hits,
                    cfg.types,
                    self.names,
                    doc.lang,
                    is_model_backend(self.fallback.name),
                    operators=cfg.operators,
                    operator_key=self.operator_key,
                    allow_names=cfg.allow_names,
                    deny_names=cfg.deny_names,
                )
                if outcome.released is not None:
                    outcomes[doc.index] = (outcome, self.fallback)
        return outcomes

    def take(self, fp: MaskPass, keys: Sequence[str], rows: InputRows, picked: list[str]) -> None:
        """Process one batch of input rows (``picked``: ``UnitRun.pick`` of their ``keys``, the
        rows' row keys) into the pass's ``masked`` / ``failed`` rows (and its vault)."""
        failed, who = fp.failed, fp.who
        docs: list[_Doc] = []
        early: dict[int, str] = {}
        for i, verdict in enumerate(picked):
            if verdict == SETTLED:
                continue
            if verdict == DUPLICATE:
                early[i] = "duplicate_row_key"
                continue
            text = rows.texts[i]
            if rows.errors is not None and rows.errors[i]:
                early[i] = f"input:{rows.errors[i]}"
            elif rows.ids[i] is None:
                early[i] = "no_id"
            elif not isinstance(text, str) or not text.strip():
                early[i] = "no_text"
            else:
                nfc = normalize(text)
                try:
                    hits = rule_hits(nfc, rows.hits[i], rows.reasons[i])
                except Exception as err:  # a detector bug fails this document, closed
                    early[i] = f"detect_error:{type(err).__name__}"
                    continue
                docs.append(_Doc(i, nfc, hits, rows.langs[i], screen_only(rows.reasons[i], hits)))
        outcomes = self._outcomes(docs, fp.stats)
        nfc_texts = {d.index: d.text for d in docs}
        if self.progress is not None:
            self.progress.advance(len(docs) + len(early))
        for i, row_key in enumerate(rows.row_keys):
            if i not in early and i not in outcomes:
                continue  # not asked for in this (retry) pass
            # an id that holds a value: released as its keyed hash
            shown = release_id(rows.ids[i], self._ids)
            if i in early:
                failed.add(shown, row_key, early[i], who)
                continue
            outcome, by = outcomes[i]
            if outcome.released is None:
                failed.add(shown, row_key, outcome.reason or "unknown", who)
                continue
            released = outcome.released
            # keyed hashes of the NFC source and the masked text (and the source as given, when it
            # was not NFC; the id, when the row shows its keyed hash): what lets `spcl unmask` prove
            # the round trip and give back the exact original
            fp.vault.put(
                row_key,
                released.mapping,
                source=nfc_texts[i],
                masked=released.masked_text,
                original=rows.texts[i],
                row_id=str(shown),
                source_id=rows.ids[i],
            )
            fp.masked.add(
                str(shown),
                row_key,
                rows.langs[i],
                released,
                who,
                extracted_by=by.name,
                model=by.model,
                prompt_version=by.prompt_version,
                vault_file=fp.writer,
            )

    def close(self) -> None:
        """Release the extractors."""
        self.extractor.close()
        if self.fallback is not None:
            self.fallback.close()
