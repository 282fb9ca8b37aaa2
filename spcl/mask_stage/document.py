"""One document through the LLM stage: the extractor's answer → candidates → masker → release
check."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from spcl.extract.backends import Extraction
from spcl.extract.contract import ParseResult, parse_extraction
from spcl.mask import mask_text
from spcl.mask.operators import apply_operators
from spcl.mask.variants import ScanBudgetExceeded
from spcl.mask_stage.candidates import RuleHit, collect_candidates
from spcl.mask_stage.failures import is_transient
from spcl.mask_stage.release import Released, check_release


@dataclass(slots=True)
class Outcome:
    """A released document, or why not (``reason``; ``transient`` when a rerun should retry it)."""

    released: Released | None = None
    reason: str | None = None
    parsed: ParseResult | None = None

    @property
    def transient(self) -> bool:
        """True when the failure was the serving side's, not the document's."""
        return self.released is None and self.reason is not None and is_transient(self.reason)


def _parse_failure(res: ParseResult) -> str:
    if res.unknown_type_rows:
        return "unknown_type_in_source"
    if res.near_source_rows:
        return "hallucinated_near_source"
    if res.hallucinated_rows and not res.candidates:
        return "hallucinated_only"
    if res.rows_read == 0:
        return "unparseable_output"
    return "no_valid_rows"


def mask_document(
    text: str,
    extraction: Extraction,
    hits: Sequence[RuleHit],
    types: Sequence[str],
    names: bool,
    lang: str | None = None,
    model: bool = False,
    *,
    operators: Mapping[str, str] | None = None,
    operator_key: bytes = b"",
    allow_names: Sequence[str] = (),
    deny_names: Sequence[str] = (),
) -> Outcome:
    """Mask NFC ``text`` from the backend's ``extraction`` plus the rule hits and name finders, fail
    closed.

    The backend's failure (its reason) and an answer that breaks the contract
    (``unparseable_output``, ``hallucinated_only``, ``no_valid_rows``, ``hallucinated_near_source``:
    a row not in the source that shares a name-like word with it, e.g. a name copied with a changed
    word) fail the document even when the rules found something: a model that cannot answer may have
    missed what only it would find. Otherwise the union of candidates is masked and the result must
    pass :func:`spcl.mask_stage.release.check_release`. ``model``: the answer is a model's (not the
    rules backend's), so its names are also masked glued to a following Korean word (``mask_text``).
    ``operators`` (``spcl.mask.operators``, keyed by ``operator_key``) turn the masker's spans into
    their replacements before the release check; rule hits of a ``keep`` type are not required to be
    masked (the user asked to keep them). ``allow_names`` / ``deny_names``: the run's name lists
    (``collect_candidates``).
    """
    if not extraction.ok:
        return Outcome(reason=extraction.error or "no_output")
    try:
        parsed = parse_extraction(extraction.raw or "", text, types)
    except Exception as err:
        return Outcome(reason=f"parse_error:{type(err).__name__}")
    if not parsed.parse_success:
        return Outcome(reason=_parse_failure(parsed), parsed=parsed)
    try:
        cands = collect_candidates(
            text,
            parsed.candidates,
            hits,
            types,
            names,
            lang,
            allow_names=allow_names,
            deny_names=deny_names,
        )
        result = mask_text(text, cands.union(), cands.by_source["extractor"] if model else ())
        if operators:
            result = apply_operators(text, result, operators, operator_key)
        found_by = cands.found_by(text, [(s.start, s.end) for s in result.spans])
    except ScanBudgetExceeded:
        return Outcome(reason="span_search_budget", parsed=parsed)
    except Exception as err:
        return Outcome(reason=f"mask_error:{type(err).__name__}", parsed=parsed)
    ops = operators or {}
    required = [h for h in hits if h.flagging and ops.get(h.type) != "keep"]
    reversible = all(ops.get(s.type) != "redact" for s in result.spans)
    checked = check_release(text, result, required, found_by, reversible=reversible)
    if isinstance(checked, str):
        return Outcome(reason=checked, parsed=parsed)
    return Outcome(released=checked, parsed=parsed)
