"""Evaluate extraction + masking against gold: ``spcl eval masking --gold GOLD.jsonl --pred
PRED.jsonl``.

GOLD.jsonl — one record per document (the ``spcl synth pii`` format)::

    {"id": "...", "source_text": "...", "entities": [{"type": "PERSON", "original": "..."}, ...]}

PRED.jsonl — one record per document, in either form (``id`` must be a gold id, at most once):

1. raw extractor output, parsed here with ``spcl.extract.parse_extraction``::

       {"id": "...", "raw": "PERSON\\t김가상\\nPHONE\\t010-0000-1234"}

2. candidates already parsed::

       {"id": "...", "candidates": [["PERSON", "김가상"], ["PHONE", "010-0000-1234"]],
        "parse_success": true}

   The candidates go through the same row rules as raw output (allowed type, non-empty,
   de-duplicated, present in the source); rows not in the source count as hallucinated.
   ``parse_success`` is optional (default: the parser's rule — no rows, or at least one accepted);
   when given it is taken as is.

A gold document with no prediction counts as a failed parse with no candidates (fail closed).
Candidates of documents whose ``parse_success`` is False are excluded from the entity predictions
and mask nothing.

Metrics (a zero denominator gives 0; F1 of empty sets is 0):

- ``entity`` / ``per_type``: precision, recall, F1 over per-document sets of normalized ``(TYPE,
  ORIGINAL)`` (type trimmed and upper-cased, value trimmed and NFC; duplicates within a document
  count once).
- ``documents.leak_rate``: documents in which some gold occurrence (every occurrence of every gold
  value and its allowed variants, ``spcl.mask.variants``) is not fully covered by the union of
  masked spans, over **all** documents (the seed-000 definition); ``documents.leak_rate_with_gold``
  divides the same count by the documents that have gold entities. Coverage is measured on spans, so
  token names in the masked text (new or already in the source) never count as covered or leaked
  text.
- ``entities.leak_rate``: gold pairs with any uncovered occurrence / gold pairs.
- ``entities.over_redaction_rate``: false-positive pairs / predicted pairs.
- ``entities.hallucination_rate``: allowed-type, non-empty, de-duplicated rows not found in the
  source / such rows.
- ``parse.success_rate``: documents whose parse succeeded / documents.
- ``tokenization.deterministic_rate``: documents whose masked text, mapping and spans are identical
  with the candidate order reversed; ``tokenization.round_trip_rate``: documents where
  ``reassemble_text(masked, mapping) == NFC(source)``.

Malformed input is rejected with ``EvalError``: duplicate gold or prediction ids, prediction ids not
in gold, gold values that do not occur in their source. Messages name files, lines, ids and types,
never values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from spcl.errors import UsageError
from spcl.extract.contract import ParseResult, check_candidates, parse_extraction
from spcl.io.jsonl import iter_jsonl
from spcl.mask import mask_text, reassemble_text
from spcl.mask.variants import DEFAULT_TYPES, normalize_type, normalize_value, occurrences_by_pair
from spcl.text import normalize

Pair = tuple[str, str]


class PRF(TypedDict):
    """True and false positives, false negatives, precision, recall and F1 of ``(TYPE, VALUE)``
    pairs."""

    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float


class DocumentLeaks(TypedDict):
    """Documents, those with gold pairs, those with a gold value left unmasked, and their rates."""

    total: int
    with_gold: int
    leaked: int
    leak_rate: float
    leak_rate_with_gold: float
    missing_predictions: int


class EntityLeaks(TypedDict):
    """Gold pairs left unmasked, predicted pairs not in gold (over-redaction) and hallucinated
    rows."""

    gold: int
    leaked: int
    leak_rate: float
    predicted: int
    false_positives: int
    over_redaction_rate: float
    rows_checked: int
    hallucinated: int
    hallucination_rate: float


class ParseRate(TypedDict):
    """Predictions that parsed, of all documents."""

    documents: int
    success: int
    success_rate: float


class TokenizationRate(TypedDict):
    """Masks that do not depend on candidate order, and masked texts that reassemble to the
    source."""

    deterministic: int
    deterministic_rate: float
    round_trip: int
    round_trip_rate: float


class MaskingReport(TypedDict):
    """Every masking metric (:func:`evaluate_documents`); ``spcl.finetune.metrics.masking_metrics``
    adds the backend failures and the documents it evaluated."""

    allowed_types: list[str]
    entity: PRF
    per_type: dict[str, PRF]
    documents: DocumentLeaks
    entities: EntityLeaks
    parse: ParseRate
    tokenization: TokenizationRate
    backend_failures: NotRequired[dict[str, int]]
    documents_evaluated: NotRequired[int]


class EvalError(UsageError, ValueError):
    """Input the evaluator refuses; the message names files, lines, ids and types, never values."""


@dataclass(slots=True)
class GoldDoc:
    """One gold document: NFC source and its normalized, de-duplicated ``(TYPE, VALUE)`` pairs."""

    id: str
    source: str
    pairs: list[Pair]


def _read_jsonl(path: str | Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for item in iter_jsonl(path):
        lineno, rec = item.line_no, item.value
        if item.error is not None:
            raise EvalError(f"{what} {Path(path).name}:{lineno}: not valid JSON ({item.error})")
        if not isinstance(rec, dict) or not isinstance(rec.get("id"), str):
            raise EvalError(f"{what} {Path(path).name}:{lineno}: record without a string id")
        yield lineno, rec


def gold_doc(rec: dict[str, Any]) -> GoldDoc:
    """Validate and normalize one gold record; ``EvalError`` for a gold value not in its source."""
    doc_id = rec["id"]
    source = rec.get("source_text")
    if not isinstance(source, str):
        raise EvalError(f"gold id {doc_id!r}: source_text missing or not a string")
    text = normalize(source)
    pairs: list[Pair] = []
    seen: set[Pair] = set()
    for i, ent in enumerate(rec.get("entities") or []):
        try:
            pair = (normalize_type(ent["type"]), normalize_value(ent["original"]))
        except (KeyError, TypeError, AttributeError):
            raise EvalError(
                f"gold id {doc_id!r} entity {i}: needs string 'type' and 'original'"
            ) from None
        if not pair[1]:
            raise EvalError(f"gold id {doc_id!r} entity {i} ({pair[0]}): empty value")
        if pair in seen:
            continue
        seen.add(pair)
        pairs.append(pair)
    found = occurrences_by_pair(pairs, text)
    for i, pair in enumerate(pairs):
        if not found[pair]:
            raise EvalError(
                f"gold id {doc_id!r} entity {i} ({pair[0]}): value does not occur in source_text"
            )
    return GoldDoc(doc_id, text, pairs)


def load_gold(path: str | Path) -> dict[str, GoldDoc]:
    """Gold documents by id; ``EvalError`` on duplicate ids or gold values not in their source."""
    docs: dict[str, GoldDoc] = {}
    for lineno, rec in _read_jsonl(path, "gold"):
        if rec["id"] in docs:
            raise EvalError(f"gold {Path(path).name}:{lineno}: duplicate id {rec['id']!r}")
        docs[rec["id"]] = gold_doc(rec)
    return docs


def load_predictions(path: str | Path, gold: dict[str, GoldDoc]) -> dict[str, dict[str, Any]]:
    """Prediction records by id; ``EvalError`` on duplicate ids or ids not in gold."""
    preds: dict[str, dict[str, Any]] = {}
    for lineno, rec in _read_jsonl(path, "pred"):
        doc_id = rec["id"]
        if doc_id in preds:
            raise EvalError(f"pred {Path(path).name}:{lineno}: duplicate id {doc_id!r}")
        if doc_id not in gold:
            raise EvalError(f"pred {Path(path).name}:{lineno}: id {doc_id!r} is not in gold")
        if "raw" not in rec and "candidates" not in rec:
            raise EvalError(
                f"pred {Path(path).name}:{lineno}: id {doc_id!r} has neither 'raw' nor 'candidates'"
            )
        preds[doc_id] = rec
    return preds


def parse_prediction(
    rec: dict[str, Any] | None, source: str, allowed_types: Iterable[str]
) -> ParseResult:
    """A prediction record (either form) as a ``ParseResult``; ``None`` (missing) is a failed
    parse."""
    if rec is None:
        return ParseResult(parse_success=False)
    if "raw" in rec:
        raw = rec["raw"]
        if not isinstance(raw, str):
            raise EvalError(f"pred id {rec['id']!r}: 'raw' must be a string")
        return parse_extraction(raw, source, allowed_types)
    rows = rec["candidates"]
    if not isinstance(rows, list) or not all(
        isinstance(r, list | tuple) and len(r) == 2 and all(isinstance(x, str) for x in r)
        for r in rows
    ):
        raise EvalError(
            f"pred id {rec['id']!r}: 'candidates' must be a list of [TYPE, VALUE] strings"
        )
    res = check_candidates([(t, v) for t, v in rows], source, allowed_types)
    res.rows_read = len(rows)
    if "parse_success" in rec:
        if not isinstance(rec["parse_success"], bool):
            raise EvalError(f"pred id {rec['id']!r}: 'parse_success' must be true or false")
        res.parse_success = rec["parse_success"]
    return res


def _prf(tp: int, fp: int, fn: int) -> PRF:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


def _covered(intervals: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether ``[start, end)`` lies inside one of the merged, sorted, disjoint ``intervals``."""
    return any(s <= start and end <= e for s, e in intervals)


def evaluate_documents(
    gold: dict[str, GoldDoc],
    preds: dict[str, dict[str, Any]],
    allowed_types: Iterable[str] = DEFAULT_TYPES,
) -> MaskingReport:
    """All masking metrics over ``gold`` with ``preds`` (see the module docstring)."""
    allowed = tuple(allowed_types)
    counts: Counter[str] = Counter()
    per_type: dict[str, Counter[str]] = {}
    for doc_id in sorted(gold):
        doc = gold[doc_id]
        res = parse_prediction(preds.get(doc_id), doc.source, allowed)
        counts["documents"] += 1
        counts["missing_predictions"] += doc_id not in preds
        counts["parse_success"] += res.parse_success
        counts["rows_checked"] += res.checked_rows
        counts["rows_hallucinated"] += len(res.hallucinated_rows)
        candidates = list(res.candidates) if res.parse_success else []
        counts["predicted"] += len(set(candidates))
        _count_entities(per_type, set(doc.pairs), set(candidates))
        _count_masking(counts, doc, candidates)
    return _summary(allowed, counts, per_type)


def _count_entities(
    per_type: dict[str, Counter[str]], gold: set[Pair], predicted: set[Pair]
) -> None:
    """Add one document's true positives, false positives and false negatives per entity type."""
    for type_ in {t for t, _ in predicted | gold}:
        c = per_type.setdefault(type_, Counter())
        g = {p for p in gold if p[0] == type_}
        q = {p for p in predicted if p[0] == type_}
        c["tp"] += len(g & q)
        c["fp"] += len(q - g)
        c["fn"] += len(g - q)


def _count_masking(counts: Counter[str], doc: GoldDoc, candidates: list[Pair]) -> None:
    """Mask one document with ``candidates``: count determinism (candidate order does not matter),
    the round trip, and the gold pairs left with an occurrence outside every masked span (leaks)."""
    masked = mask_text(doc.source, candidates)
    again = mask_text(doc.source, list(reversed(candidates)))
    counts["deterministic"] += (masked.masked_text, masked.mapping, masked.spans) == (
        again.masked_text,
        again.mapping,
        again.spans,
    )
    counts["round_trip"] += reassemble_text(masked.masked_text, masked.mapping) == doc.source
    intervals = [(s.start, s.end) for s in masked.spans]  # disjoint and sorted by construction
    leaked_pairs = 0
    for occurrences in occurrences_by_pair(doc.pairs, doc.source).values():
        leaked_pairs += any(not _covered(intervals, s, e) for s, e in occurrences)
    counts["gold_pairs"] += len(doc.pairs)
    counts["leaked_pairs"] += leaked_pairs
    counts["documents_with_gold"] += bool(doc.pairs)
    counts["documents_leaked"] += leaked_pairs > 0


def _summary(
    allowed: tuple[str, ...], counts: Counter[str], per_type: dict[str, Counter[str]]
) -> MaskingReport:
    """The metrics from the summed counts: entity P/R/F1 (overall and per type), leak,
    over-redaction, hallucination, parse and tokenization rates."""
    tp = sum(c["tp"] for c in per_type.values())
    fp = sum(c["fp"] for c in per_type.values())
    fn = sum(c["fn"] for c in per_type.values())
    n_docs = counts["documents"]
    return {
        "allowed_types": list(allowed),
        "entity": _prf(tp, fp, fn),
        "per_type": {t: _prf(c["tp"], c["fp"], c["fn"]) for t, c in sorted(per_type.items())},
        "documents": {
            "total": n_docs,
            "with_gold": counts["documents_with_gold"],
            "leaked": counts["documents_leaked"],
            "leak_rate": _rate(counts["documents_leaked"], n_docs),
            "leak_rate_with_gold": _rate(counts["documents_leaked"], counts["documents_with_gold"]),
            "missing_predictions": counts["missing_predictions"],
        },
        "entities": {
            "gold": counts["gold_pairs"],
            "leaked": counts["leaked_pairs"],
            "leak_rate": _rate(counts["leaked_pairs"], counts["gold_pairs"]),
            "predicted": counts["predicted"],
            "false_positives": fp,
            "over_redaction_rate": _rate(fp, counts["predicted"]),
            "rows_checked": counts["rows_checked"],
            "hallucinated": counts["rows_hallucinated"],
            "hallucination_rate": _rate(counts["rows_hallucinated"], counts["rows_checked"]),
        },
        "parse": {
            "documents": n_docs,
            "success": counts["parse_success"],
            "success_rate": _rate(counts["parse_success"], n_docs),
        },
        "tokenization": {
            "deterministic": counts["deterministic"],
            "deterministic_rate": _rate(counts["deterministic"], n_docs),
            "round_trip": counts["round_trip"],
            "round_trip_rate": _rate(counts["round_trip"], n_docs),
        },
    }


def evaluate_masking(
    gold_path: str | Path, pred_path: str | Path, allowed_types: Iterable[str] = DEFAULT_TYPES
) -> MaskingReport:
    """Load GOLD.jsonl and PRED.jsonl, validate them, and compute every masking metric."""
    gold = load_gold(gold_path)
    preds = load_predictions(pred_path, gold)
    return evaluate_documents(gold, preds, allowed_types)
