"""Arrow schemas of the records that flow through the filter job.

``RECORD_SCHEMA`` is what readers produce (one row per input record, readable or not);
``OUTPUT_SCHEMA`` is what the screen writes, partitioned by ``decision``.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa

from spcl.labels import CATEGORIES

DECISIONS: tuple[str, ...] = ("clean", "flagged", "quarantine")

RECORD_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),  # null when the record has no usable id (derived later)
        pa.field("text", pa.string()),  # null when the record could not be read
        pa.field("source", pa.string(), nullable=False),  # file path / URL the record came from
        pa.field("position", pa.int64(), nullable=False),  # byte offset (JSONL) or row index (Parquet)
        pa.field("meta", pa.string()),  # JSON of the record's other fields
        pa.field("error", pa.string()),  # quarantine reason found while reading, else null
        pa.field("raw", pa.binary()),  # raw record bytes, kept only for quarantined records
        pa.field("id_note", pa.string()),  # null: the record's own string id; "non_string" | "derived"
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

SCORES_TYPE = pa.struct(
    [
        pa.field("lgbm", pa.float32()),
        pa.field("svc", pa.float32()),
        pa.field("lgbm_flag", pa.bool_()),
        pa.field("svc_flag", pa.bool_()),
        *(pa.field(c.lower(), pa.float32()) for c in CATEGORIES),  # category scores
    ]
)

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


def row_key(doc_id: str, source: str, position: int) -> str:
    """The unique, engine-independent key of one input record: ``r`` + 32 hex digits of SHA-256.

    ``source`` must be the canonical source (``spcl.io.inputs.canonical_source``: the resolved absolute
    path of a local file, the URL as given otherwise), so both engines give the same key. Two records
    with the same id (repeated ids, ``7`` and ``"7"``) still get different keys; every stage that must
    tell records apart (review sampling, the mask stage's vault) keys by it.

    >>> row_key("7", "/crawl/a.jsonl", 0) != row_key("7", "/crawl/a.jsonl", 12)
    True
    """
    material = "\x1f".join((doc_id, source, str(position)))
    return "r" + hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32]
