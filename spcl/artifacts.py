"""One loader for spcl's model artifacts: a folder of plain files beside a ``model_card.json`` that
names its kind and format version and holds the SHA-256 of every file (``"files": {name: hex}``).

The screen (:mod:`spcl.screen.model`, :mod:`spcl.screen.kinds`) and the tier
(:mod:`spcl.tier.model`) read their artifacts through these checks and fail closed: a missing
folder, card or file, an unreadable card, a card of another kind, a format version this spcl does
not read, or a file whose SHA-256 differs from the card raises the caller's own error class
(``error``) with a message naming the file and the cause, never a file's content. Only the standard
library is imported here, so every layer may use it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

CARD = "model_card.json"
"""The card's file name inside an artifact folder."""

ErrorClass = Callable[[str], Exception]
"""The error family a loader raises (``ScreenModelError``, ``TierModelError``): called with the
message."""


def read_card(root: Path, error: ErrorClass, *, what: str = "model") -> dict[str, Any]:
    """The ``model_card.json`` of artifact folder ``root`` as a JSON object.

    Raises ``error`` naming the folder or card when the folder is missing (``"{what} folder not
    found"``), the card is missing, unreadable (not UTF-8 or not JSON) or not a JSON object.
    """
    card_path = root / CARD
    if not root.is_dir():
        raise error(f"{what} folder not found: {root}")
    if not card_path.is_file():
        raise error(f"{card_path}: model card missing")
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, json.JSONDecodeError) as err:
        raise error(f"{card_path}: unreadable model card ({type(err).__name__})") from None
    if not isinstance(card, dict):
        raise error(f"{card_path}: model card is not a JSON object")
    return card


def check_format(
    card: Mapping[str, Any],
    card_path: Path,
    readable: Iterable[int],
    error: ErrorClass,
    *,
    reader: str,
    retrain: str,
) -> None:
    """Raise ``error`` unless the card's ``format_version`` is one of ``readable``; the message
    names the card, the reader (e.g. ``spcl 0.9``), the readable versions and the command that
    writes a current artifact."""
    versions = tuple(readable)
    fmt = card.get("format_version")
    if fmt not in versions:
        raise error(
            f"{card_path}: format_version {fmt!r} is not supported by {reader} "
            f"(reads {', '.join(map(str, versions))}); retrain with `{retrain}`"
        )


def read_checked_files(
    root: Path, card: Mapping[str, Any], names: Iterable[str], error: ErrorClass
) -> dict[str, bytes]:
    """The bytes of each file ``names`` of ``root``, after checking it against the card's ``files``
    SHA-256.

    Raises ``error`` naming the file when one is missing or its SHA-256 is not the card's (a card
    without ``files``, or without the file's entry, matches nothing: fail closed).
    """
    expected = card.get("files") or {}
    if not isinstance(expected, Mapping):
        expected = {}
    files: dict[str, bytes] = {}
    for name in names:
        fpath = root / name
        if not fpath.is_file():
            raise error(f"{fpath}: model file missing")
        data = fpath.read_bytes()
        if hashlib.sha256(data).hexdigest() != expected.get(name):
            raise error(f"{fpath}: SHA-256 does not match the model card (corrupt or altered)")
        files[name] = data
    return files
