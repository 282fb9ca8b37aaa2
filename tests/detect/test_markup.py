"""Detectors read crawled text as a person reads it: values split by tags, written as character
references, percent- or backslash-escaped, with dashes and ideographic spaces between digits,
wrapped after a hyphen, mail addresses written with "at"/"dot" words, cards with dots, US numbers
after the 001 prefix. Each hit's span covers the whole written value in the original text, the
markup inside it included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.detect import find_pii
from spcl.detect.markup import decode

# (text, type, the written value that must be one hit's exact span)
POSITIVES = [
    ("연락처 010-<b>1234</b>-5678 입니다", "PHONE", "010-<b>1234</b>-5678"),
    ('tel: <span class="n">010</span>-1234-5678.', "PHONE", "010</span>-1234-5678"),
    ("mail hong&#64;naver.com please", "EMAIL", "hong&#64;naver.com"),
    ("mail hong&#x40;naver.com please", "EMAIL", "hong&#x40;naver.com"),
    ("mail hong&amp;#64;naver.com please", "EMAIL", "hong&amp;#64;naver.com"),
    ("전화 010&#45;1234&#45;5678", "PHONE", "010&#45;1234&#45;5678"),
    ("https://x.kr/u?m=hong%40naver.com&a=1", "EMAIL", "hong%40naver.com"),
    ('{"mail": "hong\\u0040naver.com"}', "EMAIL", "hong\\u0040naver.com"),
    ("name [at] naver [dot] com", "EMAIL", "name [at] naver [dot] com"),
    ("write name(at)gmail.com today", "EMAIL", "name(at)gmail.com"),
    ("e-mail: kim.lee at naver dot com", "EMAIL", "kim.lee at naver dot com"),
    ("電話 03ー1234ー5678 まで", "PHONE", "03ー1234ー5678"),
    ("電話０９０－１２３４－５６７８まで", "PHONE", "０９０－１２３４－５６７８"),
    ("휴대폰 010\u30001234\u30005678 로", "PHONE", "010\u30001234\u30005678"),
    ("call 010-1234-\n5678 today", "PHONE", "010-1234-\n5678"),
    ("card 4111-1111-\n    1111-1111 ok", "CARD", "4111-1111-\n    1111-1111"),
    ("card 4111.1111.1111.1111 ok", "CARD", "4111.1111.1111.1111"),
    ("card 4111&#45;1111&#45;1111&#45;1111", "CARD", "4111&#45;1111&#45;1111&#45;1111"),
    ("NY office 001-212-555-0198 ext. 204 please", "PHONE", "001-212-555-0198 ext. 204"),
    ("SSN 536&#45;90&#45;4399", "SSN", "536&#45;90&#45;4399"),
    ("주민번호 900101-<i>1234568</i>", "RRN", "900101-<i>1234568"),
]


@pytest.mark.parametrize(("text", "type_", "value"), POSITIVES)
def test_a_split_or_encoded_value_is_found_with_its_markup(
    text: str, type_: str, value: str
) -> None:
    start = text.index(value)
    spans = [(h.type, h.start, h.end) for h in find_pii(text)]
    assert (type_, start, start + len(value)) in spans, spans


NEGATIVES = [
    "available at github.com and at gitlab.com",
    "look at this dot com bubble",
    "a table <td>010</td><td>1234</td><td>5678</td>",  # cells never run together
    "50%25 off, 3 < 4 & 5 > 2, &copy; 2024",
    "version 4111.1111.1111.1112",  # Luhn fails
    "call 001-012-555-0198",  # no NANP area code
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_look_alikes_of_the_new_forms_are_not_found(text: str) -> None:
    assert [h.type for h in find_pii(text)] == []


def test_a_tag_holding_a_value_stays_text_so_the_value_inside_is_found() -> None:
    text = '<a href="mailto:hong@naver.com">mail me</a>'
    hits = find_pii(text)
    assert [(h.type, text[h.start : h.end]) for h in hits] == [("EMAIL", "hong@naver.com")]


def test_a_value_wrapped_in_tags_is_masked_without_the_tags_around_it() -> None:
    text = "<p><b>010-1234-5678</b></p>"
    (hit,) = find_pii(text)
    assert text[hit.start : hit.end] == "010-1234-5678"


_PIECES = st.sampled_from(
    [
        "<b>",
        "</b>",
        "<br>",
        '<span class="x">',
        "&#64;",
        "&amp;#45;",
        "&amp;",
        "&nbsp;",
        "%40",
        "%zz",
        "\\u0040",
        "ー",
        "－",
        "\u3000",
        "-\n  ",
        "\n",
        "\u200b",
        "&#0;",
        '<a href="1">',
        "&bogus;",
        "%2D",
    ]
)
_TEXTS = st.lists(st.one_of(_PIECES, st.text(alphabet="ab1 -@.", max_size=4)), max_size=20).map(
    "".join
)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_every_decoded_span_maps_inside_the_original_and_in_order(text: str) -> None:
    d = decode(text)
    if d is None:
        return
    n = len(d.text)
    prev_end = 0
    for i in range(n):
        s, e = d.span(i, i + 1)
        assert 0 <= s < e <= len(text)
        assert s >= prev_end  # characters map to disjoint, increasing pieces of the original
        prev_end = e
    for a in range(n):
        for b in range(a + 1, n + 1):
            s, e = d.span(a, b)
            assert (s, e) == (d.span(a, a + 1)[0], d.span(b - 1, b)[1])


_MARKUP = st.sampled_from(["", "", "", "<b>", "</b>", "<span>", "</span>", "\u200b", "<i>"])


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_masking_the_span_removes_the_whole_value_and_the_markup_inside_it(
    data: st.DataObject,
) -> None:
    digits = data.draw(st.sampled_from(["01012345678", "09012345678", "4111111111111111"]))
    sep = data.draw(st.sampled_from(["-", "&#45;", "&amp;#45;", "ー", "－", "\u3000", "%2D"]))
    groups = (
        [digits[:3], digits[3:7], digits[7:]]
        if len(digits) == 11
        else [digits[i : i + 4] for i in range(0, 16, 4)]
    )
    written = ""
    for k, g in enumerate(groups):
        if k:
            written += data.draw(_MARKUP) + sep + data.draw(_MARKUP)
        written += g[0] + data.draw(_MARKUP) + g[1:]
    if len(digits) == 16 and sep == "\u3000":
        return  # cards are written with hyphens or spaces, not ideographic spaces
    prefix, suffix = "<p>연락처: ", " 입니다</p>"
    text = prefix + written + suffix
    hits = find_pii(text)
    assert [(h.start, h.end) for h in hits] == [(len(prefix), len(prefix) + len(written))], (
        written,
        hits,
    )
    masked = text[: hits[0].start] + text[hits[0].end :]
    assert masked == prefix + suffix


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("연락처 010 - 4831 - 6911 로", "010 - 4831 - 6911"),
        ("mail: k.tanaka88 &#64; nate.com thanks", "k.tanaka88 &#64; nate.com"),
        # after a skipped "me at"
        ("reach me at yamamoto.k AT nate DOT com anytime", "yamamoto.k AT nate DOT com"),
    ],
)
def test_spaced_separators_and_upper_case_words_are_read_too(text: str, value: str) -> None:
    assert value in [text[h.start : h.end] for h in find_pii(text)]


@pytest.mark.parametrize(
    "text", ["hi @ john.doe today", "pages 10 - 20 and 30 - 40", "name at naver dot co dot kr"]
)
def test_spaced_forms_need_a_usual_tld_or_a_full_number(text: str) -> None:
    assert find_pii(text) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (
            "Tel<b>010-1234-5678</b>",
            "010-1234-5678",
        ),  # the dropped tag would glue "Tel" to the number
        ("ref 001-1-\n010-1234-5678", "010-1234-5678"),  # the joined wrap would glue two numbers
    ],
)
def test_decoding_never_loses_a_hit_the_text_as_written_gives(text: str, value: str) -> None:
    assert value in [text[h.start : h.end] for h in find_pii(text)]


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("<p>연락처 010-<b>1234</b>-5678 입니다</p>", "<p>연락처 [PHONE_1] 입니다</p>"),
        ("mail hong&amp;#64;naver.com, SSN 536&#45;90&#45;4399", "mail [EMAIL_1], SSN [SSN_1]"),
        ("name [at] naver [dot] com / 010\u30001234\u30005678", "[EMAIL_1] / [PHONE_1]"),
        ("call 010-1234-\n5678 now", "call [PHONE_1] now"),
    ],
)
def test_the_mask_stage_replaces_the_whole_written_value(text: str, masked: str) -> None:
    from spcl.entity_types import DEFAULT_TYPES
    from spcl.extract.backends import Extraction
    from spcl.mask_stage.candidates import rule_hits
    from spcl.mask_stage.document import mask_document

    result = mask_document(text, Extraction(raw=""), rule_hits(text), DEFAULT_TYPES, False)
    assert result.released is not None and result.released.masked_text == masked
