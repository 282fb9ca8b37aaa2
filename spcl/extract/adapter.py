"""The fine-tuned extractor's artifact: a folder with safetensors weights and ``model_card.json``.

A LoRA run writes ``adapter_config.json`` + ``adapter_model.safetensors`` (PEFT's format); a full
fine-tuning run writes a whole model folder (``config.json``, ``model.safetensors``, the tokenizer)
that ``spcl mask --model`` loads directly. ``model_card.json`` records the base model and its
fingerprint, the prompt version, the training data's SHA-256 (and its dataset manifest,
``spcl.manifest``), the hyper-parameters, the loss-mask counts, the records left out (ids and
reasons) and the eval metrics, plus the SHA-256 of every weight file. No pickle: a folder holding a
pickle-capable file (``.bin``, ``.pt``, ``.pth``, ``.pkl``, ``.pickle``, ``.ckpt``) is refused on
write and on load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from spcl.errors import RunFailed
from spcl.extract.prompt import PROMPT_VERSION
from spcl.manifest import sha256_file

CARD_NAME = "model_card.json"
CARD_KIND = "spcl-extractor-finetune"
CARD_FORMAT = 1
PICKLE_SUFFIXES = frozenset({".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt"})
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


class AdapterError(RunFailed, ValueError):
    """An artifact that must not be loaded; the message names files and fields, never data."""


class BaseFingerprint(TypedDict):
    """What identifies a base model (the card's ``base.fingerprint``): a file's SHA-256 (``kind``
    ``gguf`` or ``file``), or a folder's ``config.json`` SHA-256 (``None`` without one)."""

    name: str
    kind: Literal["gguf", "file", "folder"]
    sha256: NotRequired[str]
    config_sha256: NotRequired[str | None]


def base_fingerprint(base: str | Path) -> BaseFingerprint:
    """What identifies a base model: a GGUF file's SHA-256, or a folder's ``config.json``
    SHA-256."""
    path = Path(base)
    if path.is_file():
        return {
            "name": path.name,
            "kind": "gguf" if path.suffix == ".gguf" else "file",
            "sha256": sha256_file(path),
        }
    config = path / "config.json"
    return {
        "name": path.name,
        "kind": "folder",
        "config_sha256": sha256_file(config) if config.is_file() else None,
    }


def pickle_files(folder: str | Path) -> list[str]:
    """Relative paths of pickle-capable files under ``folder`` (checkpoints included)."""
    root = Path(folder)
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.suffix.lower() in PICKLE_SUFFIXES
    )


def weight_files(folder: str | Path) -> dict[str, str]:
    """``{name: sha256}`` of the top-level ``.safetensors`` files of ``folder``."""
    return {p.name: sha256_file(p) for p in sorted(Path(folder).glob("*.safetensors"))}


def write_model_card(folder: str | Path, card: dict[str, Any]) -> dict[str, Any]:
    """Write ``folder/model_card.json`` (adds kind, format, prompt version, weight hashes); returns
    it.

    Raises :class:`AdapterError` if the folder holds a pickle-capable file.
    """
    bad = pickle_files(folder)
    if bad:
        raise AdapterError(f"pickle-capable files in the artifact: {', '.join(bad)}")
    full = {
        "kind": CARD_KIND,
        "format": CARD_FORMAT,
        "prompt_version": PROMPT_VERSION,
        **card,
        "weights": weight_files(folder),
    }
    (Path(folder) / CARD_NAME).write_text(
        json.dumps(full, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return full


def read_model_card(folder: str | Path) -> dict[str, Any]:
    """The parsed ``model_card.json`` of ``folder`` (raises :class:`AdapterError` if missing or
    not JSON)."""
    path = Path(folder) / CARD_NAME
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AdapterError(f"no {CARD_NAME} (not written by spcl train-extractor)") from None
    except ValueError:
        raise AdapterError(f"{CARD_NAME} is not JSON") from None
    if not isinstance(card, dict) or card.get("kind") != CARD_KIND:
        raise AdapterError(f"{CARD_NAME} is not a {CARD_KIND} card")
    return card


def check_adapter(folder: str | Path, base: str | Path | None = None) -> dict[str, Any]:
    """Check a LoRA adapter folder before loading it; returns its card.

    Promises: the folder has PEFT's safetensors adapter files and no pickle-capable file; the card's
    prompt version is the current ``PROMPT_VERSION``; each weight file's SHA-256 matches the card;
    and, when ``base`` is given, its fingerprint matches the base the adapter was trained on.
    """
    root = Path(folder)
    if not root.is_dir():
        raise AdapterError("not a folder")
    missing = [name for name in ADAPTER_FILES if not (root / name).is_file()]
    if missing:
        raise AdapterError(f"missing {', '.join(missing)}")
    bad = pickle_files(root)
    if bad:
        raise AdapterError(f"refusing pickle-capable files: {', '.join(bad)}")
    card = read_model_card(root)
    if card.get("prompt_version") != PROMPT_VERSION:
        raise AdapterError(
            f"trained for prompt {card.get('prompt_version')!s}, this spcl serves {PROMPT_VERSION}"
        )
    for name, digest in (card.get("weights") or {}).items():
        if not (root / name).is_file() or sha256_file(root / name) != digest:
            raise AdapterError(f"weight file {name} differs from the model card")
    if base is not None:
        want = (card.get("base") or {}).get("fingerprint")
        have = base_fingerprint(base)
        if want is not None and {k: v for k, v in want.items() if k != "name"} != {
            k: v for k, v in have.items() if k != "name"
        }:
            raise AdapterError("trained on a different base model (fingerprint differs)")
    return card
