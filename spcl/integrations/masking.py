"""Mask rows that live in someone else's engine (a datatrove pipeline, a ``datasets`` map, a list of
texts).

:class:`InMemoryMasker` runs what ``spcl mask`` runs on each document, in the same order: the
filter's batch function screens the texts (:func:`spcl.integrations.rows.screen_batch`); each
``flagged`` text goes through the configured backend (``rules`` by default), the candidates, the
masking operators and the release check (:func:`spcl.mask_stage.document.mask_document`); its
mapping is written to the encrypted vault **before** the masked text is handed back. Every row gets
exactly one status:

- ``clean``: the screen found nothing; the text is returned unchanged;
- ``masked``: the masked text (it passed the release check), its spans, its vault file;
- ``failed``: the backend, the parser, the masker or the release check failed; **no text** is
  returned (``mask_reason`` says why, as in ``spcl mask``'s ``failed/``);
- ``quarantine``: the text cannot be screened (missing, not a string, NUL, too long…); no text is
  returned.

Reasons, types and counts only: never a value, in a reason, a counter or a log line.
"""

from __future__ import annotations

import json
import os
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from spcl.config import Settings, load_settings
from spcl.entity_types import DEFAULT_TYPES, check_known_types
from spcl.executor.runs import new_run_id
from spcl.extract.backends import Extraction, make_extractor
from spcl.extract.backends.registry import DEFAULT_BACKEND, is_model_backend
from spcl.integrations.rows import context, screen_batch, settings_json
from spcl.mask.operators import operator_key
from spcl.mask.vault import open_vault, resolve_key
from spcl.mask_stage.candidates import rule_hits
from spcl.mask_stage.document import mask_document
from spcl.mask_stage.release import MaskedSpan
from spcl.operator_types import check_operators
from spcl.text import normalize

MASK_COLUMNS: tuple[str, ...] = ("mask_status", "mask_reason", "mask_spans", "vault_file")
"""The columns the masking integrations add beside the screen's
(``spcl.integrations.rows.SCREEN_COLUMNS``)."""


@dataclass(frozen=True, slots=True)
class MaskOptions:
    """What an in-memory mask run needs (JSON-serializable, so it travels to worker processes).

    ``vault``: the vault folder (the key comes from ``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE`` as
    for ``spcl mask``); ``backend``/``model``/``endpoint``/``options``: the extractor (``rules`` by
    default); ``operators``: per type (``spcl.mask.operators``); ``run_id`` names the vault files
    this run writes.
    """

    vault: str
    settings_js: str
    backend: str = DEFAULT_BACKEND
    model: str | None = None
    endpoint: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    types: tuple[str, ...] = DEFAULT_TYPES
    operators: dict[str, str] = field(default_factory=dict)
    names: bool = True
    run_id: str = ""

    def to_json(self) -> str:
        """The options as JSON (sorted keys: the same options give the same text)."""
        return json.dumps(
            {k: getattr(self, k) for k in self.__dataclass_fields__}, sort_keys=True, default=list
        )


def mask_options(
    vault: str,
    settings: Settings | None = None,
    *,
    backend: str = DEFAULT_BACKEND,
    model: str | None = None,
    endpoint: str | None = None,
    options: dict[str, Any] | None = None,
    types: Sequence[str] | None = None,
    operators: dict[str, str] | Sequence[str] | None = None,
    names: bool = True,
    run_id: str = "",
) -> MaskOptions:
    """Validated :class:`MaskOptions` (unknown types or operators raise ``ValueError``); the
    operators default to the settings' ``mask.operators``."""
    st = settings if settings is not None else load_settings(None)
    ops = check_operators(operators if operators is not None else st.mask.operators, DEFAULT_TYPES)
    return MaskOptions(
        vault=str(vault),
        settings_js=settings_json(st),
        backend=backend,
        model=model,
        endpoint=endpoint,
        options=dict(options or {}),
        types=check_known_types(types if types is not None else DEFAULT_TYPES),
        operators=ops,
        names=names,
        run_id=run_id or new_run_id(),
    )


@dataclass(slots=True)
class MaskedRow:
    """One row's result: its screen verdict (``screen``: the filter's columns) and its mask
    status."""

    status: str  # clean | masked | failed | quarantine
    text: str | None
    reason: str | None
    spans: list[MaskedSpan] | None
    vault_file: str | None
    screen: dict[str, Any]


class InMemoryMasker:
    """The mask stage over in-memory texts: one extractor and one vault writer per process (see
    the module)."""

    def __init__(self, opts: MaskOptions, vault_key: bytes | None = None) -> None:
        self.opts = opts
        key = vault_key if vault_key is not None else resolve_key()
        self.operator_key = operator_key(key)
        self.writer = f"mask-mem-{opts.run_id}-{os.getpid()}-{secrets.token_hex(2)}"
        self.vault = open_vault(opts.vault, key, writer=self.writer)
        self.extractor = make_extractor(
            opts.backend,
            model=opts.model,
            endpoint=opts.endpoint,
            types=opts.types,
            options=opts.options,
        )
        self.names = opts.names and is_model_backend(self.extractor.name)
        self.counts: Counter[str] = Counter()

    def mask(
        self, texts: Sequence[Any], ids: Sequence[Any] | None, source: str, first_position: int = 0
    ) -> list[MaskedRow]:
        """One :class:`MaskedRow` per text, in order; mappings are in the vault (flushed) before
        this returns."""
        rows = screen_batch(
            texts, ids, context(self.opts.settings_js), source, first_position
        ).to_pylist()
        out: list[MaskedRow | None] = [None] * len(rows)
        todo: list[tuple[int, str, list[Any]]] = []
        for i, row in enumerate(rows):
            screen = {k: v for k, v in row.items() if k != "text"}
            if row["decision"] == "clean":
                out[i] = MaskedRow("clean", texts[i], None, None, None, screen)
            elif row["decision"] == "quarantine":
                out[i] = MaskedRow("quarantine", None, row["quarantine_reason"], None, None, screen)
            else:
                nfc = normalize(texts[i])
                try:
                    hits = rule_hits(nfc, row["hits"], row["reasons"])
                except Exception as err:  # a detector bug fails this document, closed
                    out[i] = MaskedRow(
                        "failed", None, f"detect_error:{type(err).__name__}", None, None, screen
                    )
                    continue
                todo.append((i, nfc, hits))
        try:
            results = self.extractor.run([t for _, t, _ in todo]) if todo else []
            if len(results) != len(todo):
                results = [Extraction(error="engine_error:result_count") for _ in todo]
        except Exception as err:  # the engine broke on this batch: its documents fail (transient)
            results = [Extraction(error=f"engine_error:{type(err).__name__}") for _ in todo]
        model = is_model_backend(self.extractor.name)
        for (i, nfc, hits), res in zip(todo, results, strict=True):
            screen = {k: v for k, v in rows[i].items() if k != "text"}
            outcome = mask_document(
                nfc,
                res,
                hits,
                self.opts.types,
                self.names,
                rows[i]["lang"],
                model,
                operators=self.opts.operators,
                operator_key=self.operator_key,
            )
            rel = outcome.released
            if rel is None:
                out[i] = MaskedRow("failed", None, outcome.reason or "unknown", None, None, screen)
                continue
            original = texts[i]
            self.vault.put(
                rows[i]["row_key"],
                rel.mapping,
                source=nfc,
                masked=rel.masked_text,
                original=original,
                row_id=str(rows[i]["id"]),
            )
            out[i] = MaskedRow("masked", rel.masked_text, None, rel.spans, self.writer, screen)
        self.vault.flush()  # the mappings are on disk before any masked text leaves
        done = [r for r in out if r is not None]
        assert len(done) == len(rows)
        self.counts.update(r.status for r in done)
        return done

    def close(self) -> None:
        """Close the vault writer and the extractor."""
        self.vault.close()
        self.extractor.close()


@lru_cache(maxsize=4)
def masker_for(opts_json: str) -> InMemoryMasker:
    """The process-wide masker for these options (built on first use: extractor and vault writer
    once)."""
    data = json.loads(opts_json)
    data["types"] = tuple(data["types"])
    return InMemoryMasker(MaskOptions(**data))
