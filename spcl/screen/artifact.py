"""The screen artifact (kind ``lgbm_svc``): its files, the digest that names it and the checks a
loader makes.

An artifact is a folder of plain files, none of which executes code when loaded:

- ``model_card.json``: format version, settings, thresholds, data hashes, CV metrics, SHA-256 of
  every file
- ``lgbm.txt``: LightGBM's own text model over the selected columns
- ``screen.npz``: IDF, SVC weights, selected columns, category weights (``allow_pickle=False``)
- ``spm.model``: the SentencePiece model (Korean / English / other)
- ``lexicon.json``: the category lexicon the model was trained with

``model_sha256`` in the card (and so the version string ``NAME@SHA12``) covers every model file
**and** the card's fields that change decisions (:data:`DECISION_FIELDS`: thresholds, per-language
thresholds, feature settings, kind, format version, categories). A loader recomputes it and refuses
an artifact whose card was edited without re-hashing, so raising a threshold can never silently
weaken the screen under the old version.

Every file except the card is written byte-for-byte deterministically (no timestamps; the ``.npz``
zip entries carry a fixed date), so the same data and seed give identical files. The card holds the
only volatile fields: ``created`` and ``training_seconds``.

Plain Python: a driver checks an artifact here (:func:`read_artifact`) without importing the model
stack.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spcl import __version__
from spcl.artifacts import check_format, read_checked_files
from spcl.screen.kinds import CARD, DEFAULT_KIND, ScreenModelError, kind_loader, read_card

FORMAT_VERSION = 2
"""Artifact format written when the card holds per-language thresholds (``lang_thresholds``); a spcl
that reads only version 1 refuses it instead of silently using the global thresholds for every
language."""
READABLE_FORMATS = (1, 2)
"""Formats this loader reads; a loader refuses any other value."""
MODEL_FILES: tuple[str, ...] = ("lexicon.json", "lgbm.txt", "screen.npz", "spm.model")
DECISION_FIELDS: tuple[str, ...] = (
    "categories",
    "features",
    "format_version",
    "kind",
    "lang_thresholds",
    "thresholds",
)
"""Card fields that change what the screen flags; :func:`model_digest` covers them beside the
files."""
DECISION_ENTRY = "model_card.json#decisions"
"""The name under which the card's decision fields enter :func:`model_digest`."""


def decision_bytes(card: Mapping[str, Any]) -> bytes:
    """Canonical JSON of the card's :data:`DECISION_FIELDS` (a missing field is ``null``)."""
    fields = {k: card.get(k) for k in DECISION_FIELDS}
    return json.dumps(fields, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode(
        "utf-8"
    )


def model_digest(files: Mapping[str, bytes], card: Mapping[str, Any]) -> str:
    """SHA-256 over the sorted (name, SHA-256) pairs of the model files and of the card's decision
    fields (:func:`decision_bytes`, under the name :data:`DECISION_ENTRY`)."""
    entries = dict(files)
    entries[DECISION_ENTRY] = decision_bytes(card)
    h = hashlib.sha256()
    for name in sorted(entries):
        h.update(name.encode() + b"\0" + hashlib.sha256(entries[name]).hexdigest().encode() + b"\n")
    return h.hexdigest()


def read_artifact(path: str | Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The card and the files of a screen artifact folder, after checking the card, its kind, the
    format version and every file's SHA-256 (what ``spcl.screen.load_screen`` checks, without
    building the model: a driver's validation). A kind other than ``lgbm_svc`` is checked by its
    loader when it loads; its files come back empty here.

    Raises :class:`ScreenModelError` with a message naming the file when something is missing,
    corrupt (hash mismatch, unreadable) or written by an incompatible format version.
    """
    root = Path(path)
    card = read_card(root)
    kind = card.get("kind", DEFAULT_KIND)
    if not isinstance(kind, str):
        raise ScreenModelError(f"{root / CARD}: 'kind' is not a string")
    kind_loader(kind)  # an unknown kind is refused here, before any Spark work
    if kind != DEFAULT_KIND:
        return card, {}
    return card, checked_files(root, card)


def checked_files(root: Path, card: dict[str, Any]) -> dict[str, bytes]:
    """The LightGBM ∪ LinearSVC artifact's files, after checking the card's format version and
    their SHA-256."""
    card_path = root / CARD
    check_format(
        card,
        card_path,
        READABLE_FORMATS,
        ScreenModelError,
        reader=f"spcl {__version__}",
        retrain="spcl train",
    )
    files = read_checked_files(root, card, MODEL_FILES, ScreenModelError)
    if card.get("model_sha256") != model_digest(files, card):
        raise ScreenModelError(
            f"{card_path}: model_sha256 does not cover the card's thresholds and settings as they"
            " are (edited without re-hashing, or written by an older spcl); retrain with `spcl"
            " train`"
        )
    return files
