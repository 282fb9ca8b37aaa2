"""Property tests of the masker over arbitrary Unicode text and candidates (hypothesis)."""

from __future__ import annotations

import random
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spcl.extract import parse_extraction
from spcl.mask import TOKEN_RE, mask_text, reassemble_text
from spcl.mask.variants import find_occurrences, required_occurrences

TYPES = ("PERSON", "PHONE", "ACCOUNT", "RRN", "ADDRESS", "EMAIL", "REL")
# A small alphabet makes overlaps, variants, digit boundaries and token-shaped strings likely;
# arbitrary characters (combining marks, full-width digits, emoji, …) keep it honest.
TRICKY = "김가상 \t\n\u3000-.()０１0123456789[]_PERSONPHE1ab\u0301\u1100\u1161"
chars = st.one_of(st.sampled_from(TRICKY), st.characters(exclude_categories=("Cs",)))
texts = st.one_of(
    st.text(chars, max_size=60),
    st.lists(
        st.sampled_from(
            [
                "김가상",
                "김 가 상",
                "[PERSON_1]",
                "[PHONE_2]",
                "010-0000-1234",
                "01000001234",
                " ",
                "a1",
                "９",
            ]
        ),
        max_size=10,
    ).map("".join),
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def text_and_candidates(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    text = draw(texts)
    n = draw(st.integers(0, 6))
    cands = []
    for _ in range(n):
        type_ = draw(st.sampled_from(TYPES))
        if text and draw(st.booleans()):
            i = draw(st.integers(0, len(text) - 1))
            j = draw(st.integers(i + 1, min(len(text), i + 15)))
            value = text[i:j]
        else:
            value = draw(st.text(chars, min_size=1, max_size=12))
        cands.append((type_, value))
    return text, cands


@SETTINGS
@given(text_and_candidates())
def test_round_trip(tc: tuple[str, list[tuple[str, str]]]) -> None:
    text, cands = tc
    r = mask_text(text, cands)
    nfc = unicodedata.normalize("NFC", text)
    assert reassemble_text(r.masked_text, r.mapping) == nfc
    # spans: sorted, disjoint, half-open, and each one's surface is its mapping entry
    prev_end = 0
    for span in r.spans:
        assert prev_end <= span.start < span.end <= len(nfc)
        assert r.mapping[span.token] == nfc[span.start : span.end]
        prev_end = span.end
    # tokens never collide with token-shaped strings of the source
    assert not set(r.mapping) & set(TOKEN_RE.findall(nfc))


@SETTINGS
@given(text_and_candidates(), st.randoms(use_true_random=False))
def test_deterministic_under_any_candidate_order(
    tc: tuple[str, list[tuple[str, str]]], rnd: random.Random
) -> None:
    text, cands = tc
    shuffled = list(cands)
    rnd.shuffle(shuffled)
    # duplicates change nothing either
    a, b = mask_text(text, cands), mask_text(text, shuffled + cands[:1])
    assert (a.masked_text, a.mapping, a.spans) == (b.masked_text, b.mapping, b.spans)


@SETTINGS
@given(text_and_candidates())
def test_no_gold_leak_when_every_gold_value_is_a_candidate(
    tc: tuple[str, list[tuple[str, str]]],
) -> None:
    text, gold = tc
    nfc = unicodedata.normalize("NFC", text)
    r = mask_text(text, gold)
    # names and kin words: where they stand as whole words (everywhere if nowhere)
    for type_, value in gold:
        for start, end in required_occurrences(type_, value, nfc):
            assert any(s.start <= start and end <= s.end for s in r.spans), (type_, start, end)


@SETTINGS
@given(text_and_candidates())
def test_parser_accepts_exactly_what_the_masker_can_find(
    tc: tuple[str, list[tuple[str, str]]],
) -> None:
    text, cands = tc
    rows = [(t, v) for t, v in cands if "\t" not in v and "\n" not in v and "\r" not in v]
    raw = "\n".join(f"{t}\t{v}" for t, v in rows)
    res = parse_extraction(raw, text)
    nfc = unicodedata.normalize("NFC", text)
    spans = mask_text(text, res.candidates).spans
    for type_, value in res.candidates:
        occ = required_occurrences(type_, value, nfc)
        assert occ and all(any(s.start <= a and b <= s.end for s in spans) for a, b in occ)
    for type_, value in res.hallucinated_rows:
        assert not find_occurrences(type_, value, nfc)
