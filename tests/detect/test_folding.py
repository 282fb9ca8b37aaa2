"""Invisible and look-alike characters (issue 12): the folded view, covering hits, masking and
redaction."""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import asdict
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.config import DetectSettings
from spcl.detect import build_detectors, find_pii
from spcl.detect.folding import fold, needs_fold
from spcl.extract.backends.rules_backend import rules_rows
from spcl.mask import mask_text
from spcl.review.redact import redact
from tools.datasets.detect_set import card, group_card, mynumber, rrn

FAST = settings(max_examples=150, deadline=None)

CF = sorted(chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")
MARKS = ["\ufe0f", "\ufe0e", "\u20e3", "\u0301", "\u0332", "\u034f", "\U000e0100"]
DIGIT_SETS = {  # look-alike digit blocks: each maps 0-9 one for one
    "fullwidth": 0xFF10,
    "math-bold": 0x1D7CE,
    "math-double": 0x1D7D8,
    "math-sans": 0x1D7E2,
    "math-mono": 0x1D7F6,
    "arabic-indic": 0x0660,
    "devanagari": 0x0966,
}


def _values() -> st.SearchStrategy[tuple[str, str, str]]:
    """(type, written value, sentence with {v}) of valid identifiers in several written forms."""
    seeds = st.integers(0, 10**6)

    def build(seed: int, kind: int) -> tuple[str, str, str]:
        import random

        rng = random.Random(seed)
        if kind == 0:
            return (
                "PHONE",
                f"010-{rng.randint(2000, 9999)}-{rng.randint(0, 9999):04d}",
                "연락처 {v} 입니다",
            )
        if kind == 1:
            area, exchange, line = (
                rng.randint(201, 789),
                rng.randint(200, 999),
                rng.randint(0, 9999),
            )
            # area below toll-free 8XX
            return "PHONE", f"({area}) {exchange}-{line:04d}", "Call {v} now"
        if kind == 2:
            n = rrn(rng)
            return "RRN", f"{n[:6]}-{n[6:]}", "주민등록번호 {v} 확인"
        if kind == 3:
            return "CARD", group_card(card(rng), " "), "card {v} please"
        if kind == 4:
            n = mynumber(rng)
            return "MYNUMBER", f"{n[:4]} {n[4:8]} {n[8:]}", "マイナンバー：{v} です"
        return "EMAIL", f"user{rng.randint(1, 999)}.name@mailbox.co.kr", "mail {v} today"

    return st.builds(build, seeds, st.integers(0, 5))


def _covering(text: str, type_: str, start: int, end: int) -> bool:
    return any(h.type == type_ and h.start <= start and end <= h.end for h in find_pii(text))


@FAST
@given(
    _values(), st.lists(st.tuples(st.integers(1, 40), st.sampled_from(CF)), min_size=1, max_size=4)
)
def test_format_characters_inside_a_value_still_give_a_covering_hit(item, inserts) -> None:
    type_, value, sentence = item
    # the plain value is found
    assert _covering(sentence.format(v=value), type_, *_span(sentence, value))
    chars = list(value)
    for pos, ch in inserts:
        chars.insert(1 + pos % (len(chars) - 1), ch)  # strictly inside the value
    hidden = "".join(chars)
    text = sentence.format(v=hidden)
    assert _covering(text, type_, *_span(sentence, hidden)), (
        type_,
        [hex(ord(c)) for _, c in inserts],
    )


@FAST
@given(_values(), st.sampled_from(MARKS), st.randoms(use_true_random=False))
def test_marks_after_digits_still_give_a_covering_hit(item, mark, rnd) -> None:
    type_, value, sentence = item
    hidden = "".join(c + (mark if c.isdigit() and rnd.random() < 0.5 else "") for c in value)
    text = sentence.format(v=hidden)
    assert unicodedata.is_normalized("NFC", text)
    assert _covering(text, type_, *_span(sentence, hidden))


@FAST
@given(_values(), st.sampled_from(sorted(DIGIT_SETS)))
def test_look_alike_digits_still_give_a_covering_hit(item, block) -> None:
    type_, value, sentence = item
    hidden = "".join(chr(DIGIT_SETS[block] + int(c)) if c.isdigit() else c for c in value)
    text = sentence.format(v=hidden)
    assert _covering(text, type_, *_span(sentence, hidden))


def _span(sentence: str, value: str) -> tuple[int, int]:
    start = sentence.index("{v}")
    return start, start + len(value)


@pytest.mark.parametrize(
    ("text", "type_", "value"),
    [
        ("tel 010\u200b1234\u200b5678 ok", "PHONE", "010\u200b1234\u200b5678"),
        ("주민번호 900101\u2060-1234568", "RRN", "900101\u2060-1234568"),
        ("mail kim\u00ad.min\u00ad@mailbox.com", "EMAIL", "kim\u00ad.min\u00ad@mailbox.com"),
        ("番号 𝟎𝟗𝟎-𝟏𝟐𝟑𝟒-𝟓𝟔𝟕𝟖 まで", "PHONE", "𝟎𝟗𝟎-𝟏𝟐𝟑𝟒-𝟓𝟔𝟕𝟖"),
        (
            "call 0\ufe0f\u20e310-1234-5678\ufe0f\u20e3 now",
            "PHONE",
            "0\ufe0f\u20e310-1234-5678\ufe0f\u20e3",
        ),
        ("card 4111\u00a01111\u00a01111\u00a01111", "CARD", "4111\u00a01111\u00a01111\u00a01111"),
        ("電話 ０９０－１２３４－５６７８", "PHONE", "０９０－１２３４－５６７８"),
    ],
)
def test_each_family_is_hit_over_the_whole_written_value(text: str, type_: str, value: str) -> None:
    start = text.index(value)
    hits = find_pii(text)
    assert [(h.type, h.start, h.end) for h in hits] == [(type_, start, start + len(value))]


def test_fold_maps_spans_back_over_dropped_characters() -> None:
    f = fold("a\u200b\u200bb1\u0301c")
    assert f is not None and f.text == "ab1c"
    assert [f.offset(i) for i in range(5)] == [0, 3, 4, 6, 7]
    assert f.span(1, 3) == (3, 6)  # "b1" plus the combining mark after the digit


CLEAN = [
    "plain ascii 010-1234-5678",
    "한국어 문장 010-1234-5678",
    "日本語の文。",
    "emoji 😀👍🏽",
    "é à ü",
]


@pytest.mark.parametrize("text", CLEAN)
def test_text_with_nothing_to_fold_takes_the_fast_path(text: str) -> None:
    assert fold(text) is None
    assert build_detectors().find(text) == build_detectors().find_folded(text)


def test_marks_not_after_a_digit_are_kept() -> None:
    # NFD-style mark after a letter, VS after an emoji
    assert fold("Vie\u0323t Nam 😀\ufe0f") is None
    assert needs_fold("Vie\u0323t")  # the scan flags it; folding then changes nothing


FOLDY = [*"01-a가 @.", "\u200b", "\u00ad", "\u0301", "\ufe0f", "１", "𝟏", "\xa0"]


@FAST
@given(st.text(alphabet=st.sampled_from(FOLDY), max_size=60))
def test_every_folded_character_comes_from_the_character_it_maps_to(text: str) -> None:
    f = fold(text)
    if f is None:
        return
    assert f.offset(len(f.text)) == len(text)
    prev = -1
    for i, ch in enumerate(f.text):
        o = f.offset(i)
        assert o > prev
        # only dropped ones between
        assert all(unicodedata.category(c)[0] in "CM" for c in text[prev + 1 : o])
        assert unicodedata.normalize("NFKC", text[o]) == ch or text[o] == ch
        prev = o


def _fold_one_by_one(text: str) -> tuple[str, list[int]]:
    """The folding rules applied one character at a time: the folded text and each kept
    character's index."""
    from spcl.detect.folding import _DROP, _MAP, _MARKS

    out, where, last_drop = [], [], -2
    for i, ch in enumerate(text):
        if ch in _MAP:
            out.append(_MAP[ch])
            where.append(i)
        elif ch in _DROP or (
            ch in _MARKS and i and (last_drop == i - 1 or text[i - 1].isdecimal())
        ):
            last_drop = i
        else:
            out.append(ch)
            where.append(i)
    return "".join(out), where


@FAST
@given(
    st.text(
        alphabet=st.sampled_from(
            [*FOLDY, "\u200d", "２", "０", "\U0001f50e", "\ufe0e", "\U000e0041", "あ"]
        ),
        max_size=60,
    )
    | st.text(max_size=60)
)
def test_fold_equals_the_rules_applied_one_character_at_a_time(text: str) -> None:
    folded, where = _fold_one_by_one(text)
    f = fold(text)
    if f is None:
        assert folded == text
        return
    assert f.text == folded
    assert [f.offset(i) for i in range(len(folded))] == where


@FAST
@given(st.text(max_size=200))
def test_hits_on_any_text_lie_inside_it_and_never_overlap(text: str) -> None:
    text = unicodedata.normalize("NFC", text)
    hits = find_pii(text, DetectSettings(keep_invalid=True, include_company_numbers=True))
    for a, b in pairwise(hits):
        assert a.end <= b.start
    assert all(0 <= h.start < h.end <= len(text) for h in hits)


HIDDEN = (
    "연락처 010\u200b-98\u200d76-5432, 카드 ４１１１ １１１１ １１１１ １１１１, 메일"
    " kim\u00ad@mailbox.com."
)
VISIBLE = ["010", "9876", "5432", "４１１１", "kim", "mailbox.com"]


def test_redacted_review_export_hides_obfuscated_values_and_their_copies() -> None:
    hits = [asdict(h) for h in find_pii(HIDDEN)]
    assert {h["type"] for h in hits} == {"PHONE", "CARD", "EMAIL"}
    text = HIDDEN + " 다시: 010-9876-5432."  # a plain copy the filter's hits do not point at
    masked, new_hits = redact("d1", text, hits)
    assert not any(v in masked for v in VISIBLE), masked
    assert "\u200b" not in masked and "\u00ad" not in masked and "\u200d" not in masked
    assert masked.count("[PHONE]") == 2
    assert all(masked[h["start"] : h["end"]] == f"[{h['type']}]" for h in new_hits)


def test_masker_masks_the_whole_obfuscated_value() -> None:
    rows = rules_rows(HIDDEN, ("PHONE", "CARD", "EMAIL"))
    result = mask_text(HIDDEN, rows)
    assert not any(v in result.masked_text for v in VISIBLE), result.masked_text
    assert "\u200b" not in result.masked_text and "\u00ad" not in result.masked_text
