"""Arrow schemas of the mask job's outputs (no clear values anywhere: mappings go to the vault
only)."""

from __future__ import annotations

import pyarrow as pa

SPAN_TYPE = pa.struct(
    [
        pa.field("type", pa.string(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),
        pa.field("end", pa.int32(), nullable=False),
        pa.field("token", pa.string(), nullable=False),
        pa.field("found_by", pa.list_(pa.string())),  # extractor | rules | names (sorted)
    ]
)
MASKED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        # unique per input row; the vault's record id
        pa.field("row_key", pa.string(), nullable=False),
        pa.field("lang", pa.string()),
        pa.field("masked_text", pa.string(), nullable=False),
        pa.field("spans", pa.list_(SPAN_TYPE)),  # half-open offsets into the NFC source
        pa.field("entity_types", pa.list_(pa.string())),  # sorted, distinct
        pa.field("n_entities", pa.int32(), nullable=False),  # masked spans
        pa.field("backend", pa.string(), nullable=False),  # the backend asked for
        pa.field("extracted_by", pa.string(), nullable=False),  # the backend that produced this row
        pa.field("model", pa.string(), nullable=False),
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("fallback", pa.bool_(), nullable=False),
        pa.field("source_file", pa.string(), nullable=False),
        # the vault writer holding this row's mapping
        pa.field("vault_file", pa.string(), nullable=False),
        pa.field("config_hash", pa.string(), nullable=False),
    ]
)
FAILED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),  # null when the input row had no id
        pa.field("row_key", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        # retried by a rerun with the same --output
        pa.field("transient", pa.bool_(), nullable=False),
        pa.field("backend", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("source_file", pa.string(), nullable=False),
        pa.field("config_hash", pa.string(), nullable=False),
    ]
)
