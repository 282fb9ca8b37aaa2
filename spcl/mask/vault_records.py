"""The vault's record format: a record line's fields and their parsing, the associated data of each
record version, the decrypted :class:`VaultRecord`, and the errors a single record raises.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from spcl.mask.vault_keys import VaultError, VaultKeyError

FORMAT = "spcl-vault-1"
NONCE_BYTES = 12


class RecordError(VaultError):
    """One record could not be used; ``reason`` is a short code (see the module docstring), never
    a value."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class RecordAuthError(RecordError, VaultKeyError):
    """A record failed authentication: a wrong key, or the record was altered or moved to another
    id."""


@dataclass(frozen=True, slots=True)
class VaultRecord:
    """One decrypted record: the mapping, and for version 2 the keyed hashes and the non-NFC
    original."""

    mapping: dict[str, str]
    source_mac: str | None = None
    masked_mac: str | None = None
    original: str | None = None
    bound: bool = False
    """Version 3: authenticated together with the name of the writer file (the run) it was
    written to."""
    source_id: str | None = None
    """The row's own id when the released row shows its :meth:`Vault.screened_id` instead."""

    @property
    def verifiable(self) -> bool:
        """True when the record holds the keyed hashes that prove a round trip and is bound to the
        file (run) it was written to (version 3): what a reader may call verified."""
        return self.bound and self.has_hashes

    @property
    def has_hashes(self) -> bool:
        """True when the record holds the round-trip hashes (version 2 or 3)."""
        return self.source_mac is not None and self.masked_mac is not None

    def __repr__(self) -> str:  # never print the mapping or the text
        return (
            f"VaultRecord(tokens={len(self.mapping)}, verifiable={self.verifiable},"
            f" bound={self.bound})"
        )


@dataclass(slots=True)
class RecordLine:
    """One record line of a writer file: its line number and fields (``None`` fields: the line is
    corrupt)."""

    lineno: int
    version: int
    nonce: bytes | None
    ciphertext: bytes | None


@dataclass(slots=True)
class WriterFile:
    """One writer's file, read tolerantly: record lines by id, and the numbers of corrupt lines."""

    by_id: dict[str, list[RecordLine]] = field(default_factory=dict)
    corrupt: list[int] = field(default_factory=list)


RECORD_VERSION = 3
"""The record version :meth:`Vault.put` writes."""
VERSIONS = (1, 2, 3)


def aad(doc_id: str, version: int = RECORD_VERSION, writer: str = "") -> bytes:
    """The associated data of a record: its version's label, (version 3) the writer file's name,
    and its id."""
    if version == 1:
        return FORMAT.encode() + b"\x00" + doc_id.encode("utf-8")
    if version == 2:
        return b"spcl-vault-record-2\x00" + doc_id.encode("utf-8")
    name = writer.encode("utf-8")
    return (
        b"spcl-vault-record-3\x00"
        + str(len(name)).encode("ascii")
        + b":"
        + name
        + doc_id.encode("utf-8")
    )


def b64_field(value: Any) -> bytes | None:
    """The bytes of a base64 field, or ``None`` when it is not a valid base64 string."""
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def parse_line(line: str) -> tuple[str | None, int, bytes | None, bytes | None]:
    """``(id, version, nonce, ciphertext)`` of one record line; ``id`` is ``None`` when not even it
    is readable, ``nonce``/``ciphertext`` are ``None`` when the rest of the line is corrupt."""
    try:
        rec: Any = json.loads(line)
    except ValueError:
        return None, 0, None, None
    if not isinstance(rec, dict) or not isinstance(rec.get("id"), str) or not rec["id"]:
        return None, 0, None, None
    version = rec.get("v", 1)
    nonce, ct = b64_field(rec.get("nonce")), b64_field(rec.get("ciphertext"))
    if version not in VERSIONS or nonce is None or len(nonce) != NONCE_BYTES or not ct:
        return rec["id"], 0, None, None
    return rec["id"], int(version), nonce, ct


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, lone surrogates kept (``surrogatepass``)."""
    return text.encode("utf-8", "surrogatepass")
