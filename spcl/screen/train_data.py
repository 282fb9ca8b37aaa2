"""The screen's training data and settings: labelled records, the training settings, the groups that
keep near-duplicates and sources in one fold."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from pydantic import Field

from spcl.config_models import TrainerSettings
from spcl.io.jsonl import iter_jsonl
from spcl.labels import CATEGORIES, LABELS
from spcl.screen.features import FeatureSettings
from spcl.text import LANGS, guess_lang


@dataclass(frozen=True)
class Record:
    """One labelled document."""

    id: str
    text: str
    lang: str
    label: str
    categories: tuple[str, ...] = ()
    source: str = ""

    @property
    def synthetic(self) -> bool:
        """True for training-only augmentation: generated (``source`` starts with ``synth``) or
        weakly labelled real text (``weak:``, e.g. ``tools.datasets.weak_none``); never scored in
        CV."""
        return self.source.startswith(("synth", "weak:"))

    @property
    def weak(self) -> bool:
        """True for weakly labelled real text (``source`` starts with ``weak:``); a subset of
        :attr:`synthetic`."""
        return self.source.startswith("weak:")


class TrainSettings(TrainerSettings):
    """Everything that decides a trained screen (stored in the model card)."""

    features: FeatureSettings = Field(default_factory=FeatureSettings)
    positive_labels: tuple[str, ...] = ("SCPI", "RELATED")
    target_recall: float = 0.95
    """Recall the thresholds must reach on real documents of ``threshold_labels`` (out-of-fold)."""
    threshold_labels: tuple[str, ...] = ("SCPI",)
    """Labels whose recall the thresholds target: SCPI by default (the screen's promise is SCPI
    recall; RELATED documents are flagged as far as the same thresholds reach them)."""
    threshold_mode: Literal["union", "each"] = "union"
    """``union``: both models at one common per-model recall level, the lowest at which their union
    reaches ``target_recall`` (fewest flags); ``each``: every model alone reaches
    ``target_recall``."""
    synthetic_weight: float = 0.2
    """Sample weight of synthetic (augmentation) records relative to real ones."""
    weak_weight: float = 0.2
    """Sample weight of weakly labelled real records (``source`` starting ``weak:``) relative to
    real ones."""
    per_lang_thresholds: tuple[str, ...] = ()
    """Languages that get their own thresholds, tuned on their own out-of-fold scores, when they
    have enough real target positives (:func:`min_positives`); every other language uses the global
    ones."""
    global_threshold_langs: tuple[str, ...] = ()
    """Languages whose real target positives tune the global thresholds (default: every language).
    With ``("ja", "ko")`` English, whose few SCPI documents are mostly hard first-person posts, does
    not pull the thresholds that it (and any other language without its own) uses down to a 47 %
    NONE flag rate."""
    lang_target_recall: tuple[tuple[str, float], ...] = ()
    """``(lang, target)`` pairs: a per-language threshold language tuned to its own recall target
    instead of ``target_recall`` (Korean at 0.97 reached 0.966 held-out SCPI recall where 0.94 left
    it at 0.932)."""
    lang_none_budget: tuple[tuple[str, float], ...] = ()
    """``(lang, budget)`` pairs: that language's thresholds are the pair with the most out-of-fold
    topic recall (``positive_labels``) whose union flags at most ``budget`` of its real NONE
    documents — for a language whose few SCPI documents cannot tune a recall target (English: 25 %
    of its NONE flagged at the ja/ko-tuned global thresholds, 10 % held-out at budget 0.12, SCPI
    recall unchanged)."""
    fewest_none_langs: tuple[str, ...] = ()
    """Per-language threshold languages whose pair is, of the pairs reaching that language's own
    recall target out-of-fold, the one that flags the fewest of its real NONE documents
    (:func:`thresholds_for_fewest_none`) instead of the union's common recall level (Korean:
    held-out NONE flags 16.7 → 14.8 %, same SCPI recall)."""
    lang_svc_only: tuple[str, ...] = ()
    """Languages flagged by the LinearSVC alone, at the SVC threshold they would otherwise get
    (their LightGBM threshold is :data:`LGBM_OFF`): on English the LightGBM added no SCPI passage
    out-of-fold (20 of 26 with or without it) but flagged more NONE."""
    threshold_folds: int = 5
    threshold_split: Literal["cv", "source"] = "cv"
    """How the out-of-fold scores that choose the thresholds are split: ``cv`` — grouped
    (near-duplicate) stratified folds, every source in every fold; ``source`` — whole source groups
    (:func:`source_group`) per fold, so a threshold is chosen on scores of models that never saw
    that kind of text (what transfers to a new kind, rather than what holds inside a known one)."""
    svc_c: float = 0.5
    svc_nb_alpha: float = 0.0
    """0: the LinearSVC trains on the TF-IDF columns. > 0: NB-SVM — it trains on the columns scaled
    by their log-count ratio (``fit_models.nb_log_ratio``, smoothing ``svc_nb_alpha``) and stores
    ``r · w``, so the artifact and inference are unchanged (fewer NONE flags at the same SCPI recall
    on the held-out quarter)."""
    lgbm_top_k: int = 3000
    lgbm_trees: int = 200
    lgbm_max_bin: int = 63
    lgbm_leaves: int = 15
    lgbm_learning_rate: float = 0.05
    lgbm_min_child_samples: int = 5
    category_c: float = 4.0
    num_threads: int = 1
    """LightGBM threads; 1 by default: OpenMP spinning on a busy shared machine slowed training
    40×."""
    seed: int = 0

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form for the model card."""
        d = self.model_dump()
        d["features"] = self.features.to_json()
        d["positive_labels"] = list(self.positive_labels)
        d["threshold_labels"] = list(self.threshold_labels)
        d["per_lang_thresholds"] = list(self.per_lang_thresholds)
        d["global_threshold_langs"] = list(self.global_threshold_langs)
        d["lang_target_recall"] = dict(self.lang_target_recall)
        d["lang_none_budget"] = dict(self.lang_none_budget)
        d["fewest_none_langs"] = list(self.fewest_none_langs)
        d["lang_svc_only"] = list(self.lang_svc_only)
        return d


LGBM_OFF = 2.0
"""LightGBM threshold of a language flagged by the SVC alone: above any LightGBM probability, so
that model never flags it (a finite number keeps ``model_card.json`` plain JSON)."""


def lang_values(text: str, flag: str) -> tuple[tuple[str, float], ...]:
    """``"ko=0.97,en=0.12"`` → ``(("en", 0.12), ("ko", 0.97))``; a clear ``ValueError`` naming
    ``flag`` else."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        lang, sep, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not sep or not lang.strip() or not 0.0 < number < 1.0:
            raise ValueError(f"{flag}: expected lang=number with 0 < number < 1, got {part!r}")
        out[lang.strip()] = number
    return tuple(sorted(out.items()))


def record_from_dict(row: dict[str, Any], where: str = "<record>") -> Record:
    """Validate one labelled row into a :class:`Record`; errors name ``where``, never the text."""
    label = row.get("label")
    if label not in LABELS:
        raise ValueError(f"{where}: label {label!r} not in {list(LABELS)}")
    text = row.get("text")
    if not isinstance(text, str):
        raise ValueError(f"{where}: field 'text' missing or not a string")
    lang = str(row["lang"]) if row.get("lang") in LANGS else guess_lang(text)
    return Record(
        id=str(row.get("id", where)),
        text=text,
        lang=lang,
        label=label,
        categories=tuple(c for c in row.get("categories") or () if c in CATEGORIES),
        source=str(row.get("source", "")),
    )


def read_records(paths: Iterable[str | Path]) -> list[Record]:
    """Read labelled JSONL files (``id, text, lang?, label, categories?, source?``).

    Unknown labels raise ``ValueError`` naming the file and line (never the text).
    """
    out: list[Record] = []
    for path in paths:
        for item in iter_jsonl(path):
            lineno, row = item.line_no, item.value
            if item.error is not None:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({item.error})")
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{lineno}: not a JSON object")
            out.append(record_from_dict(row, f"{path}:{lineno}"))
    return out


_SOURCE_PREFIXES = ("masc", "klue-dp", "klue-nli", "webtext", "20news")


def source_group(record: Record) -> str:
    """``lang:source`` with related sub-sources merged (``masc-blog`` → ``masc``,
    ``klue-dp-wikitree`` → ``klue-dp``, ``20news-sci.med`` → ``20news``), so each group is one kind
    of text large enough to score."""
    src = record.source or "-"
    for prefix in _SOURCE_PREFIXES:
        if src.startswith(prefix + "-"):
            src = prefix
    return f"{record.lang}:{src}"


def near_duplicate_groups(texts: Sequence[str], threshold: float = 0.5) -> np.ndarray:
    """Group ids such that texts whose character-trigram Jaccard similarity ≥ ``threshold`` share
    one.

    Connected components over the similarity graph, so chains of near-duplicates stay together.
    """
    n = len(texts)
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, t in enumerate(texts):
        grams = {t[j : j + 3] for j in range(max(1, len(t) - 2))}
        for g in grams:
            rows.append(i)
            cols.append(vocab.setdefault(g, len(vocab)))
    m = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(n, max(1, len(vocab))))
    inter = (m @ m.T).tocoo()
    sizes = np.asarray(m.sum(axis=1)).ravel()
    union = sizes[inter.row] + sizes[inter.col] - inter.data
    keep = (inter.row < inter.col) & (inter.data >= threshold * np.maximum(union, 1))
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in zip(inter.row[keep].tolist(), inter.col[keep].tolist(), strict=True):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([find(i) for i in range(n)], np.int64)
