"""Arrow schemas of the records that flow through the filter job.

``RECORD_SCHEMA`` is what readers produce (one row per input record, readable or not);
``OUTPUT_SCHEMA`` is what the screen writes, partitioned by ``decision``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pyarrow as pa

from spcl.labels import CATEGORIES

DECISIONS: tuple[str, ...] = ("clean", "flagged", "quarantine")

RECORD_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),  # null when the record has no usable id (derived later)
        pa.field("text", pa.string()),  # null when the record could not be read
        pa.field("source", pa.string(), nullable=False),  # file path / URL the record came from
        # byte offset (JSONL) or row index (Parquet)
        pa.field("position", pa.int64(), nullable=False),
        pa.field("meta", pa.string()),  # JSON of the record's other fields
        pa.field("error", pa.string()),  # quarantine reason found while reading, else null
        pa.field("raw", pa.binary()),  # raw record bytes, kept only for quarantined records
        # null: the record's own string id; "non_string" | "derived"
        pa.field("id_note", pa.string()),
    ]
)

HIT_TYPE = pa.struct(
    [
        pa.field("type", pa.string(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),
        pa.field("end", pa.int32(), nullable=False),
        pa.field("validated", pa.bool_()),
        pa.field("detector", pa.string(), nullable=False),
    ]
)


def scores_type(
    score_names: Sequence[str] = ("lgbm", "svc"), flag_names: Sequence[str] = ("lgbm", "svc")
) -> pa.StructType:
    """The ``scores`` struct of a screen kind: one float32 per score, one ``NAME_flag`` boolean per
    flag, then the category scores (``spcl.screen.kinds.ScreenOutputs`` names them, read from the
    model card).

    >>> [f.name for f in scores_type(("kw",), ("kw",))]
    ['kw', 'kw_flag', 'medical', 'crime', 'disability', 'other']
    """
    return pa.struct(
        [
            *(pa.field(s, pa.float32()) for s in score_names),
            *(pa.field(f"{f}_flag", pa.bool_()) for f in flag_names),
            *(pa.field(c.lower(), pa.float32()) for c in CATEGORIES),  # category scores
        ]
    )


SCORES_TYPE = scores_type()
"""The shipped kind's (``lgbm_svc``) ``scores``: lgbm, svc, lgbm_flag, svc_flag, then the
categories."""

OUTPUT_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("row_key", pa.string(), nullable=False),  # unique per input record: see row_key()
        pa.field("decision", pa.string(), nullable=False),  # clean | flagged | quarantine
        pa.field("text", pa.string()),  # NFC text (null for quarantine)
        pa.field("lang", pa.string()),  # ja | ko | en | other (null for quarantine)
        pa.field("source", pa.string(), nullable=False),
        pa.field("position", pa.int64(), nullable=False),
        pa.field("meta", pa.string()),
        pa.field("hits", pa.list_(HIT_TYPE)),  # rule hits (all reported hits, any action)
        pa.field("reasons", pa.list_(pa.string())),  # why flagged: "rule:PHONE", "screen:lgbm", ...
        pa.field("scores", SCORES_TYPE),  # screen scores (null when no screen model ran)
        pa.field("top_category", pa.string()),  # highest screen category (null without screen)
        pa.field("quarantine_reason", pa.string()),
        pa.field("raw", pa.binary()),  # raw bytes of a quarantined record
        pa.field("config_hash", pa.string(), nullable=False),
        pa.field("model_version", pa.string()),
    ]
)


def output_schema(scores: pa.StructType = SCORES_TYPE) -> pa.Schema:
    """``OUTPUT_SCHEMA`` with the ``scores`` struct of a screen kind (``OUTPUT_SCHEMA`` itself
    for the shipped one)."""
    if scores == SCORES_TYPE:
        return OUTPUT_SCHEMA
    return OUTPUT_SCHEMA.set(OUTPUT_SCHEMA.get_field_index("scores"), pa.field("scores", scores))


def row_key(doc_id: str, source: str, position: int) -> str:
    """The unique, engine-independent key of one input record: ``r`` + 32 hex digits of SHA-256.

    ``source`` must be the canonical source (``spcl.io.inputs.canonical_source``: the resolved
    absolute path of a local file, the URL as given otherwise), so both engines give the same key.
    Two records with the same id (repeated ids, ``7`` and ``"7"``) still get different keys; every
    stage that must tell records apart (review sampling, the mask stage's vault) keys by it.

    >>> row_key("7", "/crawl/a.jsonl", 0) != row_key("7", "/crawl/a.jsonl", 12)
    True
    """
    material = "\x1f".join((doc_id, source, str(position)))
    return "r" + hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32]
