"""The encrypted mapping vault: token mappings at rest under AES-256-GCM, keyed by document id.

Layout of a vault folder::

    vault.json              {"format": "spcl-vault-1", "cipher": "AES-256-GCM", "key_check": "<hex>"}
    <writer>.jsonl          one line per record: {"id", "nonce", "ciphertext"} (base64)

Each writer (a Spark task, a worker process) appends to its own ``<writer>.jsonl`` so parallel writers
never share a file. Ids are not secret; the mapping is: it is serialized as JSON and encrypted with a fresh
96-bit nonce, with the document id as associated data, so a record moved to another id fails to decrypt.
``key_check`` is an HMAC of a fixed label under the key: a wrong key fails at open time, before any record
is read, and reveals nothing about the key.

The key (32 bytes, base64 or hex text) comes from, in order: the ``key`` argument (bytes, or a key file
path), the environment variable ``SPCL_VAULT_KEY``, or the key file named by ``SPCL_VAULT_KEY_FILE``. It is
never taken from a command line. ``write_key_file`` creates a new key file with mode 0600.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_ENV = "SPCL_VAULT_KEY"
KEY_FILE_ENV = "SPCL_VAULT_KEY_FILE"
FORMAT = "spcl-vault-1"
HEADER_NAME = "vault.json"
KEY_BYTES = 32
_NONCE_BYTES = 12
_WRITER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class VaultError(Exception):
    """A vault could not be opened, read or written; messages name files, ids and lines, never values."""


class VaultKeyError(VaultError):
    """The vault key is missing, malformed, or not the key this vault was written with."""


def decode_key(text: str | bytes) -> bytes:
    """A 32-byte key from its base64 or hex text (surrounding whitespace ignored)."""
    raw = text.decode("ascii", "replace") if isinstance(text, bytes) else text
    raw = raw.strip()
    key: bytes | None = None
    if re.fullmatch(r"[0-9a-fA-F]{64}", raw):
        key = bytes.fromhex(raw)
    else:
        try:
            key = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            key = None
    if key is None or len(key) != KEY_BYTES:
        raise VaultKeyError(f"vault key must be {KEY_BYTES} bytes written as base64 or hex")
    return key


def read_key_file(path: str | Path) -> bytes:
    """The key stored in a key file (base64 or hex text)."""
    try:
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except OSError as err:
        raise VaultKeyError(f"cannot read vault key file {path}: {err.strerror}") from None
    return decode_key(text)


def resolve_key(key: bytes | str | Path | None = None) -> bytes:
    """The vault key from ``key`` (raw 32 bytes or a key file path), else the environment."""
    if isinstance(key, bytes):
        if len(key) != KEY_BYTES:
            raise VaultKeyError(f"vault key must be {KEY_BYTES} bytes")
        return key
    path = key if key is not None else (None if os.environ.get(KEY_ENV) else os.environ.get(KEY_FILE_ENV))
    if path:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = 0
        if mode & 0o077:  # readable or writable by group/others: say so (the key itself is never logged)
            import logging

            logging.getLogger(__name__).warning(
                "vault key file %s is accessible to group/others (mode %03o); run: chmod 600 %s",
                path, mode & 0o777, path)
    if key is not None:
        return read_key_file(key)
    if os.environ.get(KEY_ENV):
        return decode_key(os.environ[KEY_ENV])
    if os.environ.get(KEY_FILE_ENV):
        return read_key_file(os.environ[KEY_FILE_ENV])
    raise VaultKeyError(f"no vault key: set {KEY_ENV} (base64/hex) or {KEY_FILE_ENV} (path to a key file)")


def write_key_file(path: str | Path) -> Path:
    """Create a new key file (base64 of 32 random bytes) with mode 0600; refuses to overwrite."""
    target = Path(path)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise VaultKeyError(f"key file {target} already exists; not overwriting it") from None
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode("ascii") + "\n")
    os.chmod(target, 0o600)
    return target


def _key_check(key: bytes) -> str:
    return hmac.new(key, b"spcl-vault-1 key check", hashlib.sha256).hexdigest()


def _aad(doc_id: str) -> bytes:
    return FORMAT.encode() + b"\x00" + doc_id.encode("utf-8")


class Vault:
    """An open vault folder: ``put`` appends to this writer's file; ``get`` and iteration read all files."""

    def __init__(self, root: str | Path, key: bytes | str | Path | None = None, *, writer: str = "part-0") -> None:
        if not _WRITER_RE.fullmatch(writer):
            raise VaultError("writer name must match [A-Za-z0-9][A-Za-z0-9._-]*")
        self.root = Path(root)
        self.writer = writer
        key_bytes = resolve_key(key)
        self._aead = AESGCM(key_bytes)
        self._check = _key_check(key_bytes)
        self._fh: IO[str] | None = None
        self._index: dict[str, tuple[str, str]] | None = None
        self._by_writer: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._open_header()

    def _open_header(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        header = self.root / HEADER_NAME
        if not header.exists():
            tmp = self.root / f".{HEADER_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
            body = {"format": FORMAT, "cipher": "AES-256-GCM", "key_check": self._check}
            tmp.write_text(json.dumps(body) + "\n")
            try:
                os.link(tmp, header)  # atomic: exactly one writer creates the header
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        try:
            meta = json.loads(header.read_text())
        except (OSError, ValueError) as err:
            raise VaultError(f"cannot read vault header {header}: {type(err).__name__}") from None
        if meta.get("format") != FORMAT:
            raise VaultError(f"{header}: unknown vault format")
        if not hmac.compare_digest(str(meta.get("key_check", "")), self._check):
            raise VaultKeyError(f"wrong vault key for {self.root} (the key does not match vault.json)")

    @property
    def path(self) -> Path:
        """This writer's record file."""
        return self.root / f"{self.writer}.jsonl"

    def put(self, doc_id: str, mapping: dict[str, str]) -> None:
        """Encrypt ``mapping`` under ``doc_id`` and append it to this writer's file."""
        if not isinstance(doc_id, str) or not doc_id:
            raise VaultError("document id must be a non-empty string")
        nonce = secrets.token_bytes(_NONCE_BYTES)
        plain = json.dumps(mapping, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        ct = self._aead.encrypt(nonce, plain, _aad(doc_id))
        rec = {
            "id": doc_id,
            "nonce": base64.b64encode(nonce).decode("ascii"),
            "ciphertext": base64.b64encode(ct).decode("ascii"),
        }
        if self._fh is None:
            self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open across puts
        self._fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        if self._index is not None:
            self._index[doc_id] = (rec["nonce"], rec["ciphertext"])
            self._by_writer.setdefault((self.writer, doc_id), []).append((rec["nonce"], rec["ciphertext"]))

    def flush(self) -> None:
        """Flush this writer's file to the operating system."""
        if self._fh is not None:
            self._fh.flush()

    def close(self) -> None:
        """Flush and close this writer's file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _records(self) -> Iterator[tuple[str, str, str, str]]:
        """``(writer, id, nonce, ciphertext)`` of every record line, file by file in name order."""
        self.flush()
        for path in sorted(self.root.glob("*.jsonl")):
            with open(path, encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        rec: Any = json.loads(line)
                        yield path.stem, rec["id"], rec["nonce"], rec["ciphertext"]
                    except (ValueError, KeyError, TypeError):
                        raise VaultError(f"{path.name}:{lineno}: malformed vault record") from None

    def _load_index(self) -> dict[str, tuple[str, str]]:
        if self._index is None:
            index: dict[str, tuple[str, str]] = {}
            by_writer: dict[tuple[str, str], list[tuple[str, str]]] = {}
            for writer, doc_id, nonce, ct in self._records():
                index[doc_id] = (nonce, ct)  # a retried writer's later record wins
                by_writer.setdefault((writer, doc_id), []).append((nonce, ct))
            self._index = index
            self._by_writer = by_writer
        return self._index

    def _decrypt(self, doc_id: str, nonce: str, ct: str) -> dict[str, str]:
        try:
            plain = self._aead.decrypt(base64.b64decode(nonce), base64.b64decode(ct), _aad(doc_id))
        except (InvalidTag, binascii.Error, ValueError):
            raise VaultKeyError(
                f"cannot decrypt the record of id {doc_id!r}: wrong key, or the record was altered or moved"
            ) from None
        mapping: dict[str, str] = json.loads(plain.decode("utf-8"))
        return mapping

    def get(self, doc_id: str, writer: str | None = None) -> dict[str, str]:
        """The mapping stored for ``doc_id`` (in ``writer``'s file when given); ``KeyError`` when there is none.

        With ``writer``, an id stored twice in that one file raises :class:`VaultError` (ambiguous): the
        mask job writes each row key once per writer file, so two records mean the vault was tampered with.
        """
        index = self._load_index()
        if writer is None:
            entry = index.get(doc_id)
            if entry is None:
                raise KeyError(doc_id)
            return self._decrypt(doc_id, *entry)
        entries = self._by_writer.get((writer, doc_id))
        if not entries:
            raise KeyError(doc_id)
        if len(entries) > 1:
            raise VaultError(f"id {doc_id!r} is stored {len(entries)} times in {writer}.jsonl (ambiguous)")
        return self._decrypt(doc_id, *entries[0])

    def writers(self) -> list[str]:
        """The writer files of this vault (their names without ``.jsonl``), sorted."""
        return sorted(p.stem for p in self.root.glob("*.jsonl"))

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and doc_id in self._load_index()

    def ids(self) -> list[str]:
        """Every stored document id, sorted."""
        return sorted(self._load_index())

    def __iter__(self) -> Iterator[tuple[str, dict[str, str]]]:
        """``(doc_id, mapping)`` for every stored id, in id order."""
        index = self._load_index()
        for doc_id in sorted(index):
            yield doc_id, self._decrypt(doc_id, *index[doc_id])

    def __len__(self) -> int:
        return len(self._load_index())


def open_vault(root: str | Path, key: bytes | str | Path | None = None, *, writer: str = "part-0") -> Vault:
    """Open (or create) the vault folder ``root``; ``key`` as in ``resolve_key``; one ``writer`` per process."""
    return Vault(root, key, writer=writer)
