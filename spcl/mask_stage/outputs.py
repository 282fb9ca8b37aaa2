"""The mask job's output rows: ``masked/`` accepts only released documents; ``failed/`` takes the
rest.

Both are column buffers for one input file, written as one Parquet file each when the file is
committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from spcl.mask_stage.failures import is_transient
from spcl.mask_stage.release import Released
from spcl.mask_stage.schema import FAILED_SCHEMA, MASKED_SCHEMA


@dataclass(frozen=True, slots=True)
class RowIdentity:
    """Who wrote a row: the backend asked for, the model, prompt, input file, config hash."""

    backend: str
    model: str
    prompt_version: str
    source_file: str
    config_hash: str


class MaskedRows:
    """Rows for ``masked/``: only :class:`~spcl.mask_stage.release.Released` documents get in."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in MASKED_SCHEMA.names}

    def add(
        self,
        doc_id: str,
        row_key: str,
        lang: str | None,
        released: Released,
        who: RowIdentity,
        *,
        extracted_by: str,
        model: str,
        prompt_version: str,
        vault_file: str,
    ) -> None:
        """Append one released document, found by the extractor named ``extracted_by`` (the backend
        asked for, or the fallback), its mapping in ``vault_file``; ``TypeError`` for anything that
        did not pass the release check."""
        if not isinstance(released, Released) or not released.is_sealed():
            raise TypeError(
                "masked/ takes only documents that passed spcl.mask_stage.release.check_release"
            )
        row = (
            doc_id,
            row_key,
            lang,
            released.masked_text,
            released.spans,
            released.types,
            len(released.spans),
            who.backend,
            extracted_by,
            model,
            prompt_version,
            extracted_by not in (who.backend, "tier"),
            who.source_file,
            vault_file,
            who.config_hash,
        )
        for name, value in zip(MASKED_SCHEMA.names, row, strict=True):
            self.columns[name].append(value)

    def __len__(self) -> int:
        return len(self.columns["id"])

    def table(self) -> pa.Table:
        """The rows as a table of :data:`MASKED_SCHEMA`."""
        return pa.table(self.columns, schema=MASKED_SCHEMA)


class FailedRows:
    """Rows for ``failed/``: id (may be null), row key, reason, whether it is transient, and who
    failed it."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in FAILED_SCHEMA.names}

    def add(self, doc_id: str | None, row_key: str, reason: str, who: RowIdentity) -> None:
        """Append one failed document (no text, no values: the reason names a type at most)."""
        row = (
            doc_id,
            row_key,
            reason,
            is_transient(reason),
            who.backend,
            who.model,
            who.prompt_version,
            who.source_file,
            who.config_hash,
        )
        for name, value in zip(FAILED_SCHEMA.names, row, strict=True):
            self.columns[name].append(value)

    def __len__(self) -> int:
        return len(self.columns["row_key"])

    def table(self) -> pa.Table:
        """The rows as a table of :data:`FAILED_SCHEMA`."""
        return pa.table(self.columns, schema=FAILED_SCHEMA)
