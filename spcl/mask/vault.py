"""The encrypted mapping vault: token mappings at rest under AES-256-GCM, keyed by document id.

Layout of a vault folder::

    vault.json              {"format": "spcl-vault-1", "cipher": "AES-256-GCM",
                             "key_check": "<hex>"}
    <writer>.jsonl          one line per record: {"id", "v", "nonce", "ciphertext"} (base64)

A version-3 record (``"v": 3``, what every writer writes now) encrypts ``{"mapping"[, "source",
"masked"[, "original"]][, "id"]}``: the mapping and, for a round-trip record (what the mask job
writes), keyed hashes (HMAC-SHA-256-128 under a key derived from the vault key, never a plain hash,
which would let anyone holding the file test guesses of low-entropy values) of the NFC source text
and of the masked text (bound to the row's id), and the source exactly as given when it was not NFC;
``"id"`` is the row's own id when the released row shows another one (an id that holds a value is
released as :meth:`Vault.screened_id`). They let a reader prove a whole round trip
(:meth:`Vault.record`, :meth:`Vault.mac_matches`). Its associated data names the writer file it was
written to as well as its id, and a writer name is new per run and attempt (it carries the run id):
a record copied from an earlier run's file into a later run's file under the same row key fails
authentication (``auth_failed``) instead of restoring the earlier text.

Records of the earlier formats are still read, never as verified: version 2 (``"v": 2``; the same
body, bound to the id only) and version 1 (no ``"v"``; the mapping only). Each version has its own
associated data, so a record cannot be passed off as another version (:attr:`VaultRecord.bound` is
true for version 3 only).

Each writer (a Spark task, a worker process) appends to its own ``<writer>.jsonl`` so parallel
writers never share a file. Ids are not secret; the mapping is: it is serialized as JSON and
encrypted with a fresh 96-bit nonce, with the document id as associated data, so a record moved to
another id fails to decrypt. ``key_check`` is an HMAC of a fixed label under the key: a wrong key
fails at open time, before any record is read, and reveals nothing about the key.

Reading one writer's file (``get``/``record`` with ``writer``) is tolerant: a corrupt line
(truncated, not JSON, bad base64) is skipped and remembered by its line number
(:meth:`Vault.corrupt_lines`), so it blocks only the record it held; a lookup says why it failed
with a :class:`RecordError` whose ``reason`` is one of ``missing_vault_file``, ``bad_vault_file``,
``missing_mapping``, ``corrupt_record``, ``ambiguous_mapping``, ``auth_failed``. Reading the whole
vault (``get`` without ``writer``, iteration) stays strict.

The key (32 bytes, base64 or hex text) comes from, in order: the ``key`` argument (bytes, or a key
file path), the environment variable ``SPCL_VAULT_KEY``, or the key file named by
``SPCL_VAULT_KEY_FILE``. It is never taken from a command line. ``write_key_file`` creates a new key
file with mode 0600.
"""

from __future__ import annotations

import base64
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

from spcl.mask.vault_keys import (
    KEY_BYTES as KEY_BYTES,
)
from spcl.mask.vault_keys import (
    KEY_ENV as KEY_ENV,
)
from spcl.mask.vault_keys import (
    KEY_FILE_ENV as KEY_FILE_ENV,
)
from spcl.mask.vault_keys import (
    VaultError as VaultError,
)
from spcl.mask.vault_keys import (
    VaultKeyError as VaultKeyError,
)
from spcl.mask.vault_keys import (
    decode_key as decode_key,
)
from spcl.mask.vault_keys import (
    key_check,
)
from spcl.mask.vault_keys import (
    read_key_file as read_key_file,
)
from spcl.mask.vault_keys import (
    resolve_key as resolve_key,
)
from spcl.mask.vault_keys import (
    write_key_file as write_key_file,
)
from spcl.mask.vault_records import (
    FORMAT as FORMAT,
)
from spcl.mask.vault_records import (
    NONCE_BYTES,
    RecordLine,
    WriterFile,
    aad,
    parse_line,
    utf8,
)
from spcl.mask.vault_records import (
    RECORD_VERSION as RECORD_VERSION,
)
from spcl.mask.vault_records import (
    RecordAuthError as RecordAuthError,
)
from spcl.mask.vault_records import (
    RecordError as RecordError,
)
from spcl.mask.vault_records import (
    VaultRecord as VaultRecord,
)

HEADER_NAME = "vault.json"
# HMAC-SHA-256 truncated to 128 bits (as HMAC-SHA-256-128 in RFC 4868), base64 in the record
_MAC_BYTES = 16
_WRITER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class Vault:
    """An open vault folder: ``put`` appends to this writer's file; ``get`` and iteration read
    all files."""

    def __init__(
        self, root: str | Path, key: bytes | str | Path | None = None, *, writer: str = "part-0"
    ) -> None:
        if not _WRITER_RE.fullmatch(writer):
            raise VaultError("writer name must match [A-Za-z0-9][A-Za-z0-9._-]*")
        self.root = Path(root)
        self.writer = writer
        key_bytes = resolve_key(key)
        self._aead = AESGCM(key_bytes)
        self._check = key_check(key_bytes)
        self._mac_key = hmac.new(key_bytes, b"spcl-vault-2 text mac", hashlib.sha256).digest()
        self._id_key = hmac.new(key_bytes, b"spcl-vault-3 screened id", hashlib.sha256).digest()
        self._files: dict[str, WriterFile] = {}
        self._fh: IO[str] | None = None
        self._index: dict[str, tuple[int, bytes, bytes, str]] | None = None
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
            raise VaultKeyError(
                f"wrong vault key for {self.root} (the key does not match vault.json)"
            )

    @property
    def path(self) -> Path:
        """This writer's record file."""
        return self.root / f"{self.writer}.jsonl"

    def text_mac(self, role: str, text: str, context: str = "") -> str:
        """Keyed hash (HMAC-SHA-256 under a key derived from the vault key) of ``text`` in ``role``
        (``source`` or ``masked``) and ``context`` (e.g. the row's id): proves equality without
        revealing the text or letting anyone without the key test guesses of it."""
        ctx = utf8(context)
        msg = (
            role.encode("ascii") + b"\x00" + str(len(ctx)).encode("ascii") + b":" + ctx + utf8(text)
        )
        tag = hmac.new(self._mac_key, msg, hashlib.sha256).digest()[:_MAC_BYTES]
        return base64.b64encode(tag).decode("ascii").rstrip("=")

    def screened_id(self, doc_id: str) -> str:
        """The id a released row shows instead of ``doc_id`` when the id holds a value: ``id-`` and
        24 hex digits of a keyed hash (HMAC-SHA-256 under a key derived from the vault key).
        Deterministic per key, so rows that share an id still share it, and whoever holds the key
        can find a known id's rows.

        >>> v = Vault.__new__(Vault); v._id_key = bytes(32)
        >>> v.screened_id("https://example.com/u?mail=kim@mailbox.com")[:3], len(v.screened_id("x"))
        ('id-', 27)
        """
        tag = hmac.new(self._id_key, utf8(doc_id), hashlib.sha256).hexdigest()[:24]
        return f"id-{tag}"

    def mac_matches(self, mac: str, role: str, text: str, context: str = "") -> bool:
        """True when ``mac`` is :meth:`text_mac` of ``(role, text, context)`` (constant-time
        comparison)."""
        return hmac.compare_digest(mac, self.text_mac(role, text, context))

    def put(
        self,
        doc_id: str,
        mapping: dict[str, str],
        *,
        source: str | None = None,
        masked: str | None = None,
        original: str | None = None,
        row_id: str = "",
        source_id: str | None = None,
    ) -> None:
        """Encrypt ``mapping`` under ``doc_id`` and append it to this writer's file.

        With ``source`` (the NFC text the mapping restores) and ``masked`` (the masked text), the
        record is version 2: it also holds their keyed hashes (the masked text's bound to
        ``row_id``, the row's own id, so a masked row relabelled with another id does not verify),
        and ``original`` (the text as given) when it is not ``source`` — what a reader needs to
        prove the round trip and give back the exact original. ``source_id``: the row's own id,
        stored (encrypted) when the released row shows another (``row_id``).
        """
        if not isinstance(doc_id, str) or not doc_id:
            raise VaultError("document id must be a non-empty string")
        if (source is None) != (masked is None) or (original is not None and source is None):
            raise VaultError("a round-trip record needs both the source and the masked text")
        version = RECORD_VERSION
        body: dict[str, str | dict[str, str]] = {"mapping": mapping}
        if source is not None and masked is not None:
            body |= {
                "source": self.text_mac("source", source),
                "masked": self.text_mac("masked", masked, row_id),
            }
            if original is not None and original != source:
                body["original"] = original
        if source_id is not None and source_id != row_id:
            body["id"] = source_id
        nonce = secrets.token_bytes(NONCE_BYTES)
        plain = utf8(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
        ct = self._aead.encrypt(nonce, plain, aad(doc_id, version, self.writer))
        rec: dict[str, str | int] = {"id": doc_id, "v": version}
        rec["nonce"] = base64.b64encode(nonce).decode("ascii")
        rec["ciphertext"] = base64.b64encode(ct).decode("ascii")
        if self._fh is None:
            # kept open across puts
            self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self._fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        self._files.pop(self.writer, None)  # re-read on the next lookup
        if self._index is not None:
            self._index[doc_id] = (version, nonce, ct, self.writer)

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

    def _records(self) -> Iterator[tuple[str, int, bytes, bytes, str]]:
        """``(id, version, nonce, ciphertext, writer)`` of every record line, file by file in name
        order (strict: the first corrupt line raises :class:`VaultError` naming its file and
        line)."""
        self.flush()
        for path in sorted(self.root.glob("*.jsonl")):
            with open(path, encoding="utf-8", errors="replace") as fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    doc_id, version, nonce, ct = parse_line(line)
                    if doc_id is None or nonce is None or ct is None:
                        raise VaultError(f"{path.name}:{lineno}: malformed vault record")
                    yield doc_id, version, nonce, ct, path.stem

    def _load_index(self) -> dict[str, tuple[int, bytes, bytes, str]]:
        if self._index is None:
            index: dict[str, tuple[int, bytes, bytes, str]] = {}
            for doc_id, version, nonce, ct, writer in self._records():
                index[doc_id] = (version, nonce, ct, writer)  # a retried writer's later record wins
            self._index = index
        return self._index

    def _writer_file(self, writer: str) -> WriterFile:
        """``writer``'s file read tolerantly (cached); :class:`RecordError` for a bad or missing
        file name."""
        if not isinstance(writer, str) or not _WRITER_RE.fullmatch(writer):
            raise RecordError("bad_vault_file", "the vault file name is not a writer name")
        cached = self._files.get(writer)
        if cached is not None:
            return cached
        if writer == self.writer:
            self.flush()
        path = self.root / f"{writer}.jsonl"
        wf = WriterFile()
        try:
            fh = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            raise RecordError(
                "missing_vault_file", f"vault file {writer}.jsonl does not exist"
            ) from None
        except OSError as err:
            raise VaultError(f"cannot read vault file {writer}.jsonl: {err.strerror}") from None
        with fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                doc_id, version, nonce, ct = parse_line(line)
                if doc_id is None or nonce is None:
                    wf.corrupt.append(lineno)
                if doc_id is not None:
                    wf.by_id.setdefault(doc_id, []).append(RecordLine(lineno, version, nonce, ct))
        self._files[writer] = wf
        return wf

    def corrupt_lines(self, writer: str) -> list[int]:
        """Line numbers of ``writer``'s file that hold no readable record (skipped by lookups)."""
        return list(self._writer_file(writer).corrupt)

    def _decrypt(
        self, doc_id: str, version: int, nonce: bytes, ct: bytes, writer: str
    ) -> VaultRecord:
        try:
            plain = self._aead.decrypt(nonce, ct, aad(doc_id, version, writer))
        except (InvalidTag, ValueError):
            raise RecordAuthError(
                "auth_failed",
                f"cannot decrypt the record of id {doc_id!r} in {writer}.jsonl: wrong key, or the"
                " record was altered, or moved from another id or another run's file",
            ) from None
        try:
            body: Any = json.loads(plain.decode("utf-8", "surrogatepass"))
            source_id = None
            if version == 1:
                mapping, source, masked, original = body, None, None, None
            elif version == 2:
                mapping, source, masked = body["mapping"], body["source"], body["masked"]
                original = body.get("original")
            else:
                mapping, source, masked = body["mapping"], body.get("source"), body.get("masked")
                original, source_id = body.get("original"), body.get("id")
                if (source is None) != (masked is None) or not (
                    source_id is None or isinstance(source_id, str)
                ):
                    raise KeyError("masked")
            if not (
                isinstance(mapping, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items())
                and all(x is None or isinstance(x, str) for x in (source, masked, original))
            ):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise RecordError(
                "corrupt_record", f"the record of id {doc_id!r} has an unknown layout"
            ) from None
        return VaultRecord(
            mapping, source, masked, original, bound=version >= 3, source_id=source_id
        )

    def record(self, doc_id: str, writer: str) -> VaultRecord:
        """The record stored for ``doc_id`` in ``writer``'s file, decrypted and authenticated.

        Raises :class:`RecordError` with ``reason``: ``bad_vault_file``/``missing_vault_file`` (the
        file), ``ambiguous_mapping`` (the id is on more than one line of the file: the mask job
        writes each row key once per file), ``corrupt_record`` (its line is corrupt, or the file has
        corrupt lines and the id is on none of the intact ones), ``missing_mapping``,
        ``auth_failed`` (:class:`RecordAuthError`).
        """
        wf = self._writer_file(writer)
        lines = wf.by_id.get(doc_id, [])
        if len(lines) > 1:
            raise RecordError(
                "ambiguous_mapping",
                f"id {doc_id!r} is stored {len(lines)} times in {writer}.jsonl (ambiguous)",
            )
        if not lines:
            if wf.corrupt:
                raise RecordError(
                    "corrupt_record",
                    f"id {doc_id!r} is on no intact line of {writer}.jsonl "
                    f"({len(wf.corrupt)} corrupt lines)",
                )
            raise RecordError("missing_mapping", f"id {doc_id!r} is not in {writer}.jsonl")
        line = lines[0]
        if line.nonce is None or line.ciphertext is None:
            raise RecordError(
                "corrupt_record", f"{writer}.jsonl:{line.lineno}: malformed vault record"
            )
        return self._decrypt(doc_id, line.version, line.nonce, line.ciphertext, writer)

    def get(self, doc_id: str, writer: str | None = None) -> dict[str, str]:
        """The mapping stored for ``doc_id`` (in ``writer``'s file when given); ``KeyError`` when
        there is none.

        With ``writer``, only that file is read (a corrupt line elsewhere blocks nothing) and a
        failed lookup raises :class:`RecordError` (see :meth:`record`); without, the whole vault is
        read, strictly.
        """
        if writer is not None:
            try:
                return self.record(doc_id, writer).mapping
            except RecordError as err:
                if err.reason == "missing_mapping":
                    raise KeyError(doc_id) from None
                raise
        entry = self._load_index().get(doc_id)
        if entry is None:
            raise KeyError(doc_id)
        return self._decrypt(doc_id, *entry).mapping

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
            yield doc_id, self._decrypt(doc_id, *index[doc_id]).mapping

    def __len__(self) -> int:
        return len(self._load_index())


def open_vault(
    root: str | Path, key: bytes | str | Path | None = None, *, writer: str = "part-0"
) -> Vault:
    """Open (or create) the vault folder ``root``; ``key`` as in ``resolve_key``; one ``writer``
    per process."""
    return Vault(root, key, writer=writer)
