"""Utility of a generalized output: a TPS-style score with a local language model.

For each replaced span the score weighs how much information the original carried by how much of it
the
replacement keeps::

    TPS = Σ_spans info(original) · sim(original, replacement) / Σ_spans info(original)

``info`` is the original's surprisal in bits under a local causal LM given the text before it
(``-log2 p(original | left context)``), so a rare name counts more than a common word; ``sim`` is
the cosine similarity of the LM's mean-pooled last hidden states of the two strings, clipped to
``[0, 1]``. A span kept as is scores 1, a placeholder label scores what the model thinks
``[PERSON_1]`` shares with the name. Any ``transformers`` causal LM the user points to works
(``--model``): a 1–8B model on a GPU gives meaningful numbers; on this CPU-only machine only tiny
models run, so the tests check the plumbing and the bounds, not the values. Reports hold numbers and
types only — never a value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from spcl.extract.backends.transformers_backend import load_model
from spcl.generalize.job import iter_generalized
from spcl.generalize.outcome import GenSpan, restore


class LMScorer:
    """Surprisal and embeddings from one local causal LM
    (``spcl.extract.backends.transformers_backend``)."""

    def __init__(
        self, model: str | Path, device: str = "cpu", max_context_tokens: int = 512
    ) -> None:
        self.net, self.tokenizer = load_model(model, device)
        self.net.eval()
        self.max_context_tokens = max_context_tokens

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def info_bits(self, prefix: str, span: str) -> float:
        """``-log2 p(span | prefix)``: the bits the span carries given the (truncated) text
        before it."""
        import torch

        context = self._ids(prefix)[-self.max_context_tokens :]
        # a span at the very start is scored after BOS (or EOS, or a newline)
        start = self.tokenizer.bos_token_id
        if start is None:
            start = self.tokenizer.eos_token_id
        context = ([start] if start is not None else self._ids("\n")[:1]) + context
        target = self._ids(span)
        if not target or not context:
            return 0.0
        ids = torch.tensor([context + target], device=self.net.device)
        with torch.no_grad():
            logits = self.net(ids).logits[0, len(context) - 1 : -1].float()
        logp = torch.log_softmax(logits, dim=-1).gather(
            1, torch.tensor(target, device=logits.device)[:, None]
        )
        return float(-logp.sum().item() / math.log(2))

    def embed(self, text: str) -> np.ndarray:
        """The mean of the last hidden states of ``text`` (a zero vector for an empty text)."""
        import torch

        ids = self._ids(text)
        if not ids:
            return np.zeros(1, np.float32)
        with torch.no_grad():
            out = self.net(torch.tensor([ids], device=self.net.device), output_hidden_states=True)
        return out.hidden_states[-1][0].float().mean(dim=0).cpu().numpy()


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity clipped to ``[0, 1]`` (0 when either vector is zero)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0 or a.shape != b.shape:
        return 0.0
    return float(min(1.0, max(0.0, float(a @ b) / (na * nb))))


class UtilityJson(TypedDict):
    """A :class:`UtilityReport` as JSON: documents, spans, kept share (``tps``) overall and per
    type, bits."""

    documents: int
    spans: int
    tps: float | None
    info_bits: float
    tps_by_type: dict[str, float | None]


@dataclass(slots=True)
class UtilityReport:
    """Totals over documents: information-weighted kept share overall and per type, in bits (no
    values)."""

    documents: int = 0
    spans: int = 0
    info_bits: float = 0.0
    kept_bits: float = 0.0
    by_type: dict[str, list[float]] = field(default_factory=dict)  # type -> [info, kept]

    def add(self, type_: str, info: float, sim: float) -> None:
        """Count one span."""
        self.spans += 1
        self.info_bits += info
        self.kept_bits += info * sim
        acc = self.by_type.setdefault(type_, [0.0, 0.0])
        acc[0] += info
        acc[1] += info * sim

    def as_dict(self) -> UtilityJson:
        """The report as JSON-ready numbers."""

        def tps(info: float, kept: float) -> float | None:
            return round(kept / info, 4) if info > 0 else None

        return {
            "documents": self.documents,
            "spans": self.spans,
            "tps": tps(self.info_bits, self.kept_bits),
            "info_bits": round(self.info_bits, 2),
            "tps_by_type": {t: tps(i, k) for t, (i, k) in sorted(self.by_type.items())},
        }


def score_document(
    source: str, spans: Iterable[GenSpan], scorer: LMScorer, report: UtilityReport
) -> None:
    """Add one document: each span's ``[start, end)`` original in ``source`` against its
    ``replacement``."""
    report.documents += 1
    for s in spans:
        original = source[s["start"] : s["end"]]
        info = scorer.info_bits(source[: s["start"]], original)
        report.add(
            str(s["type"]),
            info,
            similarity(scorer.embed(original), scorer.embed(str(s["replacement"]))),
        )


def score_output(
    generalized: str | Path, vault: Any, scorer: LMScorer, limit: int = 0
) -> UtilityReport:
    """The utility report of an ``spcl generalize`` output: each document's source restored from
    ``vault`` and its replaced spans scored (the first ``limit`` documents; all when ``limit`` is
    0)."""
    report = UtilityReport()
    for n, row in enumerate(iter_generalized(generalized)):
        if limit and n >= limit:
            break
        source = restore(
            row["generalized_text"],
            row["spans"],
            vault.get(row["row_key"], writer=row["vault_file"]),
        )
        score_document(source, row["spans"], scorer, report)
    return report
