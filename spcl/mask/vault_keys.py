"""Vault keys: where the 32-byte key comes from (the ``key`` argument, ``SPCL_VAULT_KEY``, or the
key file named by ``SPCL_VAULT_KEY_FILE``; never a command line), how it is written (base64 or hex
text), a new key file (mode 0600), and the vault errors every vault module raises.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

from spcl.errors import RunFailed

KEY_ENV = "SPCL_VAULT_KEY"
KEY_FILE_ENV = "SPCL_VAULT_KEY_FILE"
KEY_BYTES = 32


class VaultError(RunFailed):
    """A vault could not be opened, read or written; messages name files, ids and lines, never
    values."""


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
    path = (
        key
        if key is not None
        else (None if os.environ.get(KEY_ENV) else os.environ.get(KEY_FILE_ENV))
    )
    if path:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = 0
        # readable or writable by group/others: say so (the key itself is never logged)
        if mode & 0o077:
            import logging

            logging.getLogger(__name__).warning(
                "vault key file %s is accessible to group/others (mode %03o); run: chmod 600 %s",
                path,
                mode & 0o777,
                path,
            )
    if key is not None:
        return read_key_file(key)
    if os.environ.get(KEY_ENV):
        return decode_key(os.environ[KEY_ENV])
    if os.environ.get(KEY_FILE_ENV):
        return read_key_file(os.environ[KEY_FILE_ENV])
    raise VaultKeyError(
        f"no vault key: set {KEY_ENV} (base64/hex) or {KEY_FILE_ENV} (path to a key file)"
    )


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


def key_check(key: bytes) -> str:
    """The check value a vault header stores for ``key`` (an HMAC of a fixed label: reveals
    nothing)."""
    return hmac.new(key, b"spcl-vault-1 key check", hashlib.sha256).hexdigest()
