"""The masker's span search: the indexed search finds exactly what the one-regex search finds, and a
document with many distinct values is searched in (near) linear time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.mask import variants
from spcl.mask.masker import mask_text
from spcl.mask.variants import (
    INDEXED_SCAN_FROM,
    ScanBudgetExceeded,
    _indexed_positions,
    _regex_positions,
    canonical_alternatives,
    match_positions,
)

# characters that make the patterns interesting: ASCII and full-width digits, numeric separators,
# name gaps (space, ideographic space, tab, newline), Hangul, kana, Latin, a superscript digit and
# an Arabic digit
ALPHABET = "0123０１２３ -./()\u2212\uff0d\t\n\u3000김가상鈴木ナabc²٣"
TYPES = ["PHONE", "PERSON", "EMAIL", "RRN", "ACCOUNT", "REL", "ADDRESS"]

values = st.text(alphabet=ALPHABET, min_size=1, max_size=9)
candidates = st.lists(st.tuples(st.sampled_from(TYPES), values), min_size=1, max_size=40)


def _text(draw: st.DrawFn, cands: list[tuple[str, str]]) -> str:
    """Noise with the candidates (and mangled copies of them) mixed in."""
    parts = []
    for _ in range(draw(st.integers(0, 30))):
        if cands and draw(st.booleans()):
            value = draw(st.sampled_from(cands))[1]
            if draw(st.booleans()):  # insert separators/gaps between characters
                gap = draw(st.sampled_from(["", " ", "-", "  ", "\u3000", "- ", "   ", "\t"]))
                value = gap.join(value)
            parts.append(value)
        else:
            parts.append(draw(st.text(alphabet=ALPHABET, max_size=6)))
    return "".join(parts)


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    cands = draw(candidates)
    return _text(draw, cands), cands


@settings(max_examples=600, deadline=None)
@given(cases())
def test_indexed_search_equals_the_regex_search(case: tuple[str, list[tuple[str, str]]]) -> None:
    text, cands = case
    alts = tuple(canonical_alternatives(cands))
    if not alts:  # only blank values: nothing to search
        return
    assert _indexed_positions(text, alts, None) == _regex_positions(text, alts)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_mask_text_spans_and_tokens_are_the_same_either_way(
    case: tuple[str, list[tuple[str, str]]],
) -> None:
    text, cands = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(variants, "INDEXED_SCAN_FROM", 10**9)
        old = mask_text(text, cands)
        mp.setattr(variants, "INDEXED_SCAN_FROM", 1)
        new = mask_text(text, cands)
    assert (new.masked_text, new.mapping, new.spans) == (old.masked_text, old.mapping, old.spans)


def _phones(n: int) -> tuple[str, list[str]]:
    nums = [f"010-{(i * 7919) % 10000:04d}-{(i * 104729) % 10000:04d}" for i in range(n)]
    return "".join(f"연락처 {i}: {num} 입니다. " for i, num in enumerate(nums)), nums


def test_many_distinct_values_are_all_masked_and_the_work_is_linear() -> None:
    """1,500 distinct numbers (the regex search took minutes): every one masked, and the search
    tries a bounded number of patterns per position (counted, not timed)."""
    text, nums = _phones(1500)
    result = mask_text(text, [("PHONE", v) for v in nums])
    assert len(result.spans) == 1500 and not any(v in result.masked_text for v in nums)
    alts = canonical_alternatives([("PHONE", v) for v in nums])
    assert len(alts) >= INDEXED_SCAN_FROM
    match_positions(text, alts, work_budget=4 * len(text))  # would raise past the budget
    with pytest.raises(ScanBudgetExceeded):
        match_positions(text, alts, work_budget=100)


def test_a_document_past_the_work_budget_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many values sharing a long prefix make every position try many patterns: past the budget the
    document fails with a reason and nothing is released."""
    from spcl.extract.backends import Extraction
    from spcl.mask import masker
    from spcl.mask_stage.document import mask_document

    mails = [f"someone.with.a.long.name{i}@example.org" for i in range(300)]
    text = " / ".join(mails)
    raw = "".join(f"EMAIL\t{v}\n" for v in mails)
    ok = mask_document(text, Extraction(raw=raw), [], ("EMAIL",), False)
    assert ok.released is not None and ok.reason is None
    monkeypatch.setattr(masker, "SPAN_BUDGET_MIN", 1000)
    monkeypatch.setattr(masker, "SPAN_BUDGET_PER_CHAR", 1)
    failed = mask_document(text, Extraction(raw=raw), [], ("EMAIL",), False)
    assert failed.released is None and failed.reason == "span_search_budget"
