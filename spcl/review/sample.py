"""Stratified, hashed-id sampling of a filter output for manual review.

A document's stratum is ``decision × lang × top category × score bucket`` (any subset of those
dimensions). Each stratum gets a size from ``allocate`` (a share of ``clean`` always included), and
the sample of a stratum is its ``k`` documents with the smallest ``sha256(f"{seed}:{id}")``
(bottom-k). Bottom-k depends only on the ids and the seed, never on partitioning or worker order, so
the plain Python path (``sample_dataset``) and the Spark path (``sample_spark``) return the same
documents.

The "id" a sample is drawn by is the output's ``row_key`` (unique per input record, see
``spcl.io.schema.row_key``) when the output has that column, else ``id``: repeated document ids can
neither pull extra rows into a sample nor make two records one.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from spcl.io.outputs import output_dataset
from spcl.screen.heads import PRIMARY_HEAD, flagging_heads, heads_in

DIMENSIONS: tuple[str, ...] = ("decision", "lang", "category", "bucket")
"""Stratum dimensions: ``category`` is ``top_category``; ``bucket`` is the screen-score bucket."""

BUCKET_SCHEMES: tuple[str, ...] = ("union", PRIMARY_HEAD)
"""``union`` (default): which screen heads flagged (``none``, ``lgbm``, ``svc``, ``lgbm+svc`` for
the shipped screen: the union's decision and every head's score against its threshold) and the first
head's band, e.g. ``svc:<0.5``; the first head's name (``lgbm``): its band alone (plans written
before the union buckets)."""

DEFAULT_DIMENSIONS: tuple[str, ...] = DIMENSIONS
DEFAULT_BUCKET_EDGES: tuple[float, ...] = (0.5, 0.8, 0.95)
DEFAULT_DECISIONS: tuple[str, ...] = ("clean", "flagged")
"""Quarantined records have no text to read, so they are not sampled unless asked for."""

NULL = "-"
"""How a missing lang / category / score shows in a stratum name."""

_STRATUM_COLUMNS = ["decision", "lang", "top_category", "scores"]


def sample_key_column(names: Sequence[str]) -> str:
    """The column a sample is drawn and matched by: ``row_key`` when present, else ``id``."""
    return "row_key" if "row_key" in names else "id"


@dataclass(frozen=True)
class SampleSpec:
    """What to draw: total ``n`` (or a fixed ``per_stratum`` size), the seed and the strata."""

    n: int = 500
    seed: int = 0
    dimensions: tuple[str, ...] = DEFAULT_DIMENSIONS
    decisions: tuple[str, ...] = DEFAULT_DECISIONS
    clean_share: float = 0.25
    min_per_stratum: int = 5
    per_stratum: int | None = None
    bucket_edges: tuple[float, ...] = DEFAULT_BUCKET_EDGES
    bucket_by: str = "union"

    def __post_init__(self) -> None:
        unknown = [d for d in self.dimensions if d not in DIMENSIONS]
        if unknown or "decision" not in self.dimensions:
            raise ValueError(f"strata must include 'decision' and use only {', '.join(DIMENSIONS)}")
        if not 0.0 <= self.clean_share <= 1.0:
            raise ValueError("clean_share must lie in [0, 1]")
        if self.n < 0 or (self.per_stratum is not None and self.per_stratum < 0):
            raise ValueError("sample sizes must be non-negative")
        if list(self.bucket_edges) != sorted(self.bucket_edges):
            raise ValueError("bucket edges must be increasing")
        if self.bucket_by not in BUCKET_SCHEMES:
            raise ValueError(f"bucket_by must be one of {', '.join(BUCKET_SCHEMES)}")


class SpecJson(TypedDict):
    """A :class:`SampleSpec` in ``plan.json``, in field order."""

    n: int
    seed: int
    dimensions: tuple[str, ...]
    decisions: tuple[str, ...]
    clean_share: float
    min_per_stratum: int
    per_stratum: int | None
    bucket_edges: tuple[float, ...]
    bucket_by: str


class PlanJson(TypedDict):
    """``plan.json``: the spec and every stratum's ``population`` and ``sample`` size, sorted by
    name."""

    spec: SpecJson
    strata: dict[str, dict[str, int]]


@dataclass
class SamplePlan:
    """The spec, every stratum's population and its sample size (JSON-serialisable, no text)."""

    spec: SampleSpec
    populations: dict[str, int]
    sizes: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> PlanJson:
        """A plain dict for ``plan.json``."""
        sp = self.spec
        return {
            "spec": {
                "n": sp.n,
                "seed": sp.seed,
                "dimensions": sp.dimensions,
                "decisions": sp.decisions,
                "clean_share": sp.clean_share,
                "min_per_stratum": sp.min_per_stratum,
                "per_stratum": sp.per_stratum,
                "bucket_edges": sp.bucket_edges,
                "bucket_by": sp.bucket_by,
            },
            "strata": {
                s: {"population": self.populations[s], "sample": self.sizes.get(s, 0)}
                for s in sorted(self.populations)
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SamplePlan:
        """Inverse of ``to_json``."""
        spec_d = dict(data["spec"])
        for key in ("dimensions", "decisions", "bucket_edges"):
            spec_d[key] = tuple(spec_d[key])
        spec_d.setdefault("bucket_by", PRIMARY_HEAD)  # plans written before the union buckets
        strata = data["strata"]
        return cls(
            spec=SampleSpec(**spec_d),
            populations={s: int(v["population"]) for s, v in strata.items()},
            sizes={s: int(v["sample"]) for s, v in strata.items()},
        )


def hash_key(seed: int, doc_id: str) -> str:
    """The sampling key of a document: hex ``sha256(f"{seed}:{id}")`` (equal to Spark's ``sha2``).

    >>> hash_key(7, "doc-1")[:12]
    'b7b86aae0c7a'
    """
    return hashlib.sha256(f"{seed}:{doc_id}".encode()).hexdigest()


def score_bucket(score: float | None, edges: Sequence[float] = DEFAULT_BUCKET_EDGES) -> str:
    """Name of the score bucket ``score`` falls in (``lgbm`` score; ``"-"`` without a screen).

    >>> score_bucket(0.9), score_bucket(0.1), score_bucket(None)
    ('0.8-0.95', '<0.5', '-')
    """
    if score is None or (isinstance(score, float) and math.isnan(score)):
        return NULL
    if score < edges[0]:
        return f"<{edges[0]:g}"
    for lo, hi in itertools.pairwise(edges):
        if score < hi:
            return f"{lo:g}-{hi:g}"
    return f">={edges[-1]:g}"


def union_bucket(
    scores: Mapping[str, Any] | None, edges: Sequence[float] = DEFAULT_BUCKET_EDGES
) -> str:
    """The ``union`` bucket of a row's ``scores``: which models passed their threshold, then the
    LightGBM band.

    >>> scores = {"lgbm": 0.3, "svc": 0.4, "lgbm_flag": False, "svc_flag": True}
    >>> union_bucket(scores), union_bucket(None)
    ('svc:<0.5', '-')
    """
    heads = heads_in(scores or ())
    if not scores or not heads or scores.get(heads[0]) is None:
        return NULL
    flags = flagging_heads(scores)
    return f"{'+'.join(flags) or 'none'}:{score_bucket(scores[heads[0]], edges)}"


def stratum_name(
    dimensions: Sequence[str],
    decision: str,
    lang: str | None,
    category: str | None,
    score: float | None,
    edges: Sequence[float] = DEFAULT_BUCKET_EDGES,
    *,
    bucket: str | None = None,
) -> str:
    """``"decision=flagged|lang=ja|category=MEDICAL|bucket=>=0.95"`` for the chosen dimensions.

    ``bucket`` (e.g. from ``union_bucket``) is used as is; without it the bucket is ``score``'s
    band.
    """
    values = {
        "decision": decision,
        "lang": lang or NULL,
        "category": category or NULL,
        "bucket": (bucket or score_bucket(score, edges)) if "bucket" in dimensions else NULL,
    }
    return "|".join(f"{d}={values[d]}" for d in dimensions)


def parse_stratum(name: str) -> dict[str, str]:
    """Inverse of ``stratum_name``: ``{"decision": "flagged", "lang": "ja", ...}``."""
    return dict(part.split("=", 1) for part in name.split("|"))


def _split(populations: Mapping[str, int], budget: int, floor: int) -> dict[str, int]:
    """Split ``budget`` over strata: ``floor`` each first, the rest proportional to population."""
    keys = sorted(populations)
    sizes = dict.fromkeys(keys, 0)
    budget = min(budget, sum(populations.values()))
    base = {k: min(floor, populations[k]) for k in keys}
    if sum(base.values()) >= budget:
        while budget > 0:  # round-robin in name order: deterministic and as even as possible
            for k in keys:
                if budget > 0 and sizes[k] < base[k]:
                    sizes[k] += 1
                    budget -= 1
        return sizes
    sizes = base
    budget -= sum(base.values())
    while budget > 0:
        room = [k for k in keys if populations[k] > sizes[k]]
        total = sum(populations[k] for k in room)
        quotas = {k: budget * populations[k] / total for k in room}
        add = {k: min(populations[k] - sizes[k], int(quotas[k])) for k in room}
        if sum(add.values()) == 0:  # all quotas < 1: largest remainder, one each
            order = sorted(room, key=lambda k: (-quotas[k], k))
            add = {k: 1 for k in order[:budget]}
        for k, v in add.items():
            sizes[k] += v
        budget -= sum(add.values())
    return sizes


def allocate(populations: Mapping[str, int], spec: SampleSpec) -> dict[str, int]:
    """Sample size of every stratum.

    With ``spec.per_stratum`` every stratum gets ``min(per_stratum, population)``. Otherwise
    ``spec.n`` is split between ``clean`` (``clean_share`` of it, at least one document when any
    clean exists) and the other decisions (by population); inside a decision each stratum first gets
    ``min_per_stratum`` and the rest is proportional to population (largest remainder).
    """
    if spec.per_stratum is not None:
        return {s: min(spec.per_stratum, p) for s, p in populations.items()}
    by_decision: dict[str, dict[str, int]] = {}
    for s, p in populations.items():
        by_decision.setdefault(parse_stratum(s)["decision"], {})[s] = p
    clean = by_decision.pop("clean", {})
    others_total = sum(sum(g.values()) for g in by_decision.values())
    clean_total = sum(clean.values())
    n_clean = 0
    if clean and spec.n > 0:
        n_clean = spec.n if not others_total else max(1, round(spec.n * spec.clean_share))
        n_clean = min(n_clean, spec.n, clean_total)
    rest = min(spec.n - n_clean, others_total)
    # what the other decisions cannot absorb goes to clean
    n_clean = min(clean_total, spec.n - rest)
    sizes = _split(clean, n_clean, spec.min_per_stratum) if clean else {}
    if others_total:
        totals = {d: sum(g.values()) for d, g in by_decision.items()}
        budgets = _split(totals, rest, 0)
        for d, group in by_decision.items():
            sizes.update(_split(group, budgets[d], spec.min_per_stratum))
    return sizes


def batch_strata(batch: pa.RecordBatch, spec: SampleSpec) -> list[str]:
    """The stratum name of every row of ``batch`` (needs id, decision, lang, top_category,
    scores)."""
    decisions = batch.column("decision").to_pylist()
    langs = batch.column("lang").to_pylist()
    cats = batch.column("top_category").to_pylist()
    if "bucket" not in spec.dimensions:
        buckets = [NULL] * len(decisions)
    elif spec.bucket_by == "union":
        buckets = [union_bucket(s, spec.bucket_edges) for s in batch.column("scores").to_pylist()]
    else:
        primary = pc.struct_field(batch.column("scores"), spec.bucket_by).to_pylist()
        buckets = [score_bucket(s, spec.bucket_edges) for s in primary]
    return [
        stratum_name(spec.dimensions, d, lang, c, None, spec.bucket_edges, bucket=b)
        for d, lang, c, b in zip(decisions, langs, cats, buckets, strict=True)
    ]


def decision_filter(spec: SampleSpec) -> pc.Expression:
    """Dataset filter keeping the decisions ``spec`` samples."""
    return pc.field("decision").isin(list(spec.decisions))


def iter_strata(dataset: ds.Dataset, spec: SampleSpec) -> Iterator[tuple[list[str], list[str]]]:
    """``(keys, strata)`` per batch of the sampled decisions, reading only the stratum columns; keys
    are the ``sample_key_column`` values."""
    key = sample_key_column(dataset.schema.names)
    for batch in dataset.to_batches(columns=[key, *_STRATUM_COLUMNS], filter=decision_filter(spec)):
        if batch.num_rows:
            yield batch.column(key).to_pylist(), batch_strata(batch, spec)


def bottom_k(
    rows: Iterable[tuple[str, str]], sizes: Mapping[str, int], seed: int
) -> dict[str, list[tuple[str, str]]]:
    """Per stratum, the ``sizes[stratum]`` pairs ``(key, id)`` with the smallest keys, sorted.

    ``rows`` yields ``(stratum, id)``; the result is independent of their order.
    """
    heaps: dict[str, list[_Neg]] = {s: [] for s in sizes}
    for stratum, doc_id in rows:
        k = sizes.get(stratum, 0)
        if k <= 0:
            continue
        item = (hash_key(seed, doc_id), doc_id)
        heap = heaps[stratum]  # a max-heap of the k smallest, via negated order
        neg = _Neg(item)
        if len(heap) < k:
            heapq.heappush(heap, neg)
        elif item < heap[0].item:
            heapq.heapreplace(heap, neg)
    return {s: sorted(n.item for n in h) for s, h in heaps.items()}


class _Neg:
    """Reverses the order of a ``(key, id)`` pair so ``heapq`` keeps the largest on top."""

    __slots__ = ("item",)

    def __init__(self, item: tuple[str, str]) -> None:
        self.item = item

    def __lt__(self, other: _Neg) -> bool:
        return self.item > other.item


def draw(
    ids: Sequence[str], strata: Sequence[str], spec: SampleSpec
) -> tuple[SamplePlan, dict[str, list[str]]]:
    """The plan and the sampled ids per stratum for in-memory ``ids`` and their ``strata``."""
    populations: dict[str, int] = {}
    for s in strata:
        populations[s] = populations.get(s, 0) + 1
    plan = SamplePlan(spec, populations, allocate(populations, spec))
    chosen = bottom_k(zip(strata, ids, strict=True), plan.sizes, spec.seed)
    return plan, {s: [i for _k, i in pairs] for s, pairs in chosen.items()}


def plan_dataset(dataset: ds.Dataset, spec: SampleSpec) -> SamplePlan:
    """Count every stratum's population (one pass over small columns) and allocate sizes."""
    populations: dict[str, int] = {}
    for _ids, strata in iter_strata(dataset, spec):
        for s in strata:
            populations[s] = populations.get(s, 0) + 1
    return SamplePlan(spec, populations, allocate(populations, spec))


SAMPLE_COLUMNS: tuple[str, ...] = (
    "id",
    "decision",
    "lang",
    "top_category",
    "text",
    "hits",
    "reasons",
    "scores",
    "config_hash",
    "model_version",
)


def finish_sample(
    table: pa.Table, plan: SamplePlan, chosen: Mapping[str, Sequence[str]]
) -> pa.Table:
    """Add ``stratum``, ``sample_key`` and ``weight`` columns; order rows by sample key."""
    stratum_of = {i: s for s, ids in chosen.items() for i in ids}
    key = sample_key_column(table.column_names)
    ids = table.column(key).to_pylist()
    strata = [stratum_of[i] for i in ids]
    weights = [plan.populations[s] / max(plan.sizes[s], 1) for s in strata]
    keys = [hash_key(plan.spec.seed, i) for i in ids]
    table = table.append_column("stratum", pa.array(strata, pa.string()))
    table = table.append_column("sample_key", pa.array(keys, pa.string()))
    table = table.append_column("weight", pa.array(weights, pa.float64()))
    return table.sort_by([("sample_key", "ascending"), (key, "ascending")])


def sample_columns(names: Sequence[str]) -> list[str]:
    """The output columns a sample keeps (with ``row_key`` when the output has one)."""
    return [*SAMPLE_COLUMNS, "row_key"] if "row_key" in names else list(SAMPLE_COLUMNS)


def sample_dataset(
    path: str | Path, spec: SampleSpec, *, allow_incomplete: bool = False
) -> tuple[SamplePlan, pa.Table]:
    """Plan and draw the sample from a filter output folder in plain Python (three column passes).

    Returns the plan and the sampled rows (``SAMPLE_COLUMNS`` plus ``row_key`` when the output has
    it, ``stratum``, ``sample_key``, ``weight``), ordered by sample key so reviewers do not read one
    stratum in a block. An incomplete output (``spcl.io.outputs.check_complete``) is refused unless
    ``allow_incomplete``.
    """
    dataset = output_dataset(path, allow_incomplete=allow_incomplete)
    key = sample_key_column(dataset.schema.names)
    plan = plan_dataset(dataset, spec)
    pairs = (p for ids, strata in iter_strata(dataset, spec) for p in zip(strata, ids, strict=True))
    chosen = {s: [i for _k, i in v] for s, v in bottom_k(pairs, plan.sizes, spec.seed).items()}
    wanted = sorted(i for ids in chosen.values() for i in ids)
    table = dataset.to_table(
        columns=sample_columns(dataset.schema.names),
        filter=decision_filter(spec) & pc.field(key).isin(pa.array(wanted, pa.string())),
    )
    return plan, finish_sample(table, plan, chosen)
