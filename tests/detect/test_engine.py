"""The detector set: public API, overlap resolution, prefilter equivalence, caching, no values in
logs."""

from __future__ import annotations

import logging
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.config import PII_TYPES, DetectSettings
from spcl.detect import (
    DETECTORS,
    TYPE_PRIORITY,
    Hit,
    build_detectors,
    find_pii,
    resolve_overlaps,
)
from spcl.detect.folding import fold
from spcl.detect.markup import decode_markup, join_digits

FAST = settings(max_examples=200, deadline=None)

# Pieces that combine into PII, near-PII and noise, so random texts hit every detector and its
# edges.
PIECES = [
    "010-1234-5678", "01012345678", "02-123-4567", "090-1234-5678", "03(3581)3111",
    "+82 10-1234-5678", "+1 (415) 555-2671", "1588-1234", "0120-123-456", "kim@mailbox.com",
    "a.b@c.co.kr", "@", "@@", "900101-1234568", "9001011234568", "900230-1234568", "123456789018",
    "1234 5678 9018", "マイナンバー", "4111 1111 1111 1111", "4111111111111111", "378282246310005",
    "계좌", "은행", "普通", "口座", "123456-01-123456", "1234567", "생년월일", "born", "生まれ",
    "1990-01-02", "1990年1月2日", "1990년 1월 2일", "平成2年1月2日", "January 2, 1990",
    "02/01/1990", "〒", "우편번호", "100-0001", "06236", "서울특별시 강남구 테헤란로 152",
    "東京都千代田区千代田1-1", "大阪府大阪市北区梅田3丁目1番3号", "2024-01-02 12:34:56",
    "20240102123456", "ISBN 978-4-06-123456-7", "주문번호", "550e8400-e29b-41d4", "192.168.0.1",
    "1,234,567원", "-", ".", " ", "(", ")", "+", "0", "1", "9", "가", "あ", "x", "😀", "\n",
    # issue 12: written forms and hiding characters
    "415-555-0132", "415.555.0132", "(212)555-0147", " x204", " ext. 45", "001-1-",
    "1-800-555-0199", "Call ", "212 555 0147", "태어났", "に生まれ", "에 ", "\u200b", "\u2060",
    "\u00ad", "\ufe0f", "\u20e3", "\u0301", "１", "𝟎", "\u00a0",
    # crawled text: markup, references, escapes, wide separators, wraps, obfuscated mail
    "<b>", "</b>", "<br>", "&#64;", "&amp;#45;", "&#45;", "%40", "\\u0040", "ー", "\u3000", "-\n",
    " - ", " [at] ", " dot ", "(at)", "e.g. ", "Room ", "のように",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), min_size=0, max_size=25).map("".join)
noisy = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(alphabet="0123456789-. ()+@가あx", max_size=8)),
    max_size=25,
).map("".join)


def _every_detector(view: str, s: DetectSettings) -> list[Hit]:
    hits: list[Hit] = []
    for t in PII_TYPES:
        if t in s.types:
            hits += DETECTORS[t](s).find(view)
    return resolve_overlaps(hits)


def _through(text: str, steps: tuple, s: DetectSettings) -> tuple[list[Hit], bool]:
    views = []
    for step in steps:
        view = step(text)
        if view is not None:
            views.append((step, view))
            text = view.text
    hits = _every_detector(text, s)
    for _, view in reversed(views):
        hits = [Hit(h.type, *view.span(h.start, h.end), h.validated, h.detector) for h in hits]
    return hits, any(step is not fold for step, _ in views)


def reference_find(text: str, s: DetectSettings) -> list[Hit]:
    """Every detector run on the whole decoded and folded text, no prefilter, spans mapped back,
    merged with the hits on the folded text as written: what the fast path must reproduce."""
    hits, decoded = _through(text, (decode_markup, fold, join_digits), s)
    if not decoded:
        return hits
    written, _ = _through(text, (fold,), s)
    return resolve_overlaps(hits + written)


@FAST
@given(noisy)
def test_hits_never_overlap_and_lie_within_the_text(text: str) -> None:
    hits = find_pii(text, DetectSettings(keep_invalid=True, include_company_numbers=True))
    for h in hits:
        assert 0 <= h.start < h.end <= len(text)
        assert h.type in PII_TYPES
        assert h.validated in (True, False, None)
        assert "@" in h.detector
    for a, b in pairwise(hits):
        assert a.end <= b.start, (a, b)
    assert hits == sorted(hits, key=lambda h: (h.start, -h.end))


@FAST
@given(texts)
def test_prefiltered_fast_path_equals_running_every_detector(text: str) -> None:
    """The fast path never misses a hit of the reference (a miss could release a value). It may find
    more: on percent-encoded text such as ``%40010-1234-5678`` it keeps a phone the reference's
    merge drops."""
    for s in (DetectSettings(), DetectSettings(keep_invalid=True, include_company_numbers=True)):
        fast = build_detectors(s).find(text)
        missed = [h for h in reference_find(text, s) if h not in fast]
        assert missed == []


def test_an_address_number_wrapped_after_a_hyphen_is_read_whole() -> None:
    """A lot number too short to be a number cluster, wrapped after its hyphen, is masked whole
    (the fast path once stopped at ``152`` and would have released ``-1990``)."""
    text = "서울특별시 강남구 테헤란로 152-\n1990年1月2日"
    assert [text[h.start : h.end] for h in build_detectors().find(text)] == [
        "서울특별시 강남구 테헤란로 152-\n1990"
    ]


def test_fast_path_keeps_both_phones_around_a_wide_dash_in_decoded_text() -> None:
    """The one known case where the fast path finds more than the reference: after ``%40`` decodes,
    two phones joined by a long dash are read on the view as written as well as joined, and both are
    real values."""
    text = "%40010-1234-5678ー010-1234-5678"
    spans = [text[h.start : h.end] for h in build_detectors().find(text)]
    assert spans == ["010-1234-5678", "010-1234-5678"]
    assert len(reference_find(text, DetectSettings())) == 1


@FAST
@given(texts)
def test_default_hits_are_never_shown_invalid(text: str) -> None:
    assert all(h.validated is not False for h in find_pii(text))


@FAST
@given(st.text(max_size=300))
def test_any_text_is_handled(text: str) -> None:
    # Unicode case folding ("ſep" matches "sep" case-insensitively), odd digits, surrogates…: no
    # crash.
    hits = find_pii(text, DetectSettings(keep_invalid=True, include_company_numbers=True))
    assert all(0 <= h.start < h.end <= len(text) for h in hits)


def test_unicode_case_folding_month_does_not_crash() -> None:
    assert [
        h.validated for h in find_pii("born ſep 2, 1990", DetectSettings(keep_invalid=True))
    ] == [False]


def test_find_pii_caches_the_detector_set() -> None:
    from spcl.detect import _cached

    find_pii("warm up")
    before = _cached.cache_info()
    find_pii("010-1234-5678")
    find_pii("kim@mailbox.com", DetectSettings())
    after = _cached.cache_info()
    assert after.misses == before.misses
    assert after.hits == before.hits + 2


def test_build_detectors_honours_types() -> None:
    ds = build_detectors(DetectSettings(types=("PHONE", "EMAIL")))
    assert sorted(d.type for d in ds.detectors) == ["EMAIL", "PHONE"]
    assert len(build_detectors().detectors) == len(PII_TYPES)


def test_empty_and_pii_free_texts() -> None:
    assert find_pii("") == []
    assert find_pii("오늘 날씨가 좋다. 今日はいい天気です。 Nice weather today.") == []


def test_overlap_prefers_validated_then_longer_then_priority() -> None:
    valid = Hit("RRN", 0, 14, True, "rrn_kr@1")
    unknown_longer = Hit("ACCOUNT", 0, 16, None, "account@1")
    assert resolve_overlaps([unknown_longer, valid]) == [valid]
    shorter = Hit("PHONE", 2, 10, None, "phone_kr@1")
    assert resolve_overlaps([shorter, unknown_longer]) == [unknown_longer]
    phone = Hit("PHONE", 0, 13, None, "phone_kr@1")
    account = Hit("ACCOUNT", 0, 13, None, "account@1")
    assert resolve_overlaps([account, phone]) == [phone]
    assert TYPE_PRIORITY["PHONE"] < TYPE_PRIORITY["ACCOUNT"]
    invalid = Hit("CARD", 0, 19, False, "card@1")
    assert resolve_overlaps([invalid, phone]) == [phone]


def test_overlap_keeps_disjoint_hits_and_drops_chains_correctly() -> None:
    a = Hit("PHONE", 0, 10, None, "p")
    b = Hit("ACCOUNT", 8, 20, None, "a")  # longer: wins over a and c
    c = Hit("PHONE", 18, 25, None, "p")
    d = Hit("EMAIL", 30, 40, None, "e")
    assert resolve_overlaps([d, c, b, a]) == [b, d]
    assert resolve_overlaps([a, d]) == [a, d]


def test_no_values_in_logs(caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    text = "주민번호 900101-1234568 010-1234-5678 kim@mailbox.com"
    find_pii(text)
    for record in caplog.records:
        message = record.getMessage()
        for value in ("900101", "1234-5678", "kim@mailbox.com"):
            assert value not in message


@FAST
@given(texts)
def test_dob_cue_windows_equal_a_full_scan(text: str) -> None:
    from spcl.detect.dob import _DATE, DobDetector, _date_ok

    s = DetectSettings(keep_invalid=True)
    detector = DobDetector(s)
    naive = [
        (m.start(), m.end(), _date_ok(m))
        for m in _DATE.finditer(text)
        if detector.in_birth_context(text, m)
    ]
    assert [(h.start, h.end, h.validated) for h in DobDetector(s).find(text)] == naive
