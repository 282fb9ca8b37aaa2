"""The teacher output contract (property tests) and the code → screen category mapping."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.annotate.contract import (
    CODE_TO_CATEGORY,
    PARSE_FAILURE_KINDS,
    Vote,
    VoteParseError,
    categories_of,
    parse_vote,
)
from spcl.annotate.prompt import CODES, FEW_SHOT, PROMPT_VERSION, build_messages
from spcl.review.labels import LABELS
from spcl.screen import CATEGORIES

confidences = st.integers(0, 10**6).map(lambda k: k / 10**6)
codes_sets = st.lists(st.sampled_from(CODES), min_size=1, max_size=5, unique=True).map(tuple)


@st.composite
def votes(draw: st.DrawFn) -> Vote:
    label = draw(st.sampled_from(LABELS))
    codes = () if label == "NONE" else draw(codes_sets)
    return Vote(label, codes, draw(confidences))


@given(
    votes(),
    st.sampled_from(["", "\n", "  \n\t", "\r\n"]),
    st.sampled_from(["", "\n", " \n\n"]),
    st.lists(st.text(max_size=30).filter(lambda t: "</think>" not in t), max_size=2),
)
def test_round_trip_with_whitespace_and_think_blocks(
    vote: Vote, before: str, after: str, thoughts: list[str]
) -> None:
    think = "".join(f"<think>{t}</think>" for t in thoughts)
    assert parse_vote(think + before + vote.line() + after) == vote


@settings(max_examples=400)
@given(
    st.text(
        alphabet=st.sampled_from(list("SCPIRELATDNO-\t,.0123456789 \n_MEDICALGBT<>/think")),
        max_size=60,
    )
)
def test_any_output_parses_to_a_valid_vote_or_a_named_failure(raw: str) -> None:
    try:
        vote = parse_vote(raw)
    except VoteParseError as err:
        assert err.kind in PARSE_FAILURE_KINDS
        # the message never quotes the output
        assert str(err) == f"unparseable teacher output ({err.kind})"
        return
    assert vote.label in LABELS and 0.0 <= vote.confidence <= 1.0
    assert set(vote.codes) <= set(CODES) and len(set(vote.codes)) == len(vote.codes)
    assert (vote.label == "NONE") == (vote.codes == ())


@given(votes(), st.sampled_from(["extra line", "SCPI\tMEDICAL\t0.9"]))
def test_a_second_line_is_a_failure(vote: Vote, extra: str) -> None:
    with pytest.raises(VoteParseError) as err:
        parse_vote(vote.line() + "\n" + extra)
    assert err.value.kind == "lines"


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("", "empty"),
        ("<think>only thinking</think>", "empty"),
        ("<think>unclosed SCPI\tMEDICAL\t0.9", "label"),
        ("<think>cut off\nSCPI\tMEDICAL\t0.9", "lines"),
        ("SCPI\tMEDICAL", "fields"),
        ("SCPI\tMEDICAL\t0.9\textra", "fields"),
        ("SCPI MEDICAL 0.9", "fields"),
        ("scpi\tMEDICAL\t0.9", "label"),
        ("PII\tMEDICAL\t0.9", "label"),
        ("SCPI \tMEDICAL\t0.9", "label"),
        ("SCPI\tMEDICAL\t0.9 x", "confidence"),
        ("SCPI\tCANCER\t0.9", "codes"),
        ("SCPI\tMEDICAL, CREED\t0.9", "codes"),
        ("SCPI\tMEDICAL,MEDICAL\t0.9", "codes"),
        ("SCPI\tMEDICAL,\t0.9", "codes"),
        ("SCPI\tmedical\t0.9", "codes"),
        ("SCPI\tMEDICAL\t1.5", "confidence"),
        ("SCPI\tMEDICAL\t1.01", "confidence"),
        ("SCPI\tMEDICAL\t-0.1", "confidence"),
        ("SCPI\tMEDICAL\t9e-1", "confidence"),
        ("SCPI\tMEDICAL\tnan", "confidence"),
        ("SCPI\tMEDICAL\t.9", "confidence"),
        ("SCPI\tMEDICAL\t90%", "confidence"),
        ("SCPI\tMEDICAL\t0_9", "confidence"),
        ("SCPI\t-\t0.9", "inconsistent"),
        ("RELATED\t-\t0.9", "inconsistent"),
        ("NONE\tMEDICAL\t0.9", "inconsistent"),
    ],
)
def test_contract_breaches_name_their_kind(raw: str, kind: str) -> None:
    with pytest.raises(VoteParseError) as err:
        parse_vote(raw)
    assert err.value.kind == kind


def test_accepted_forms() -> None:
    assert parse_vote("NONE\t-\t1") == Vote("NONE", (), 1.0)
    assert parse_vote("NONE\t-\t0") == Vote("NONE", (), 0.0)
    assert parse_vote("RELATED\tLGBT,RACE\t1.000") == Vote("RELATED", ("LGBT", "RACE"), 1.0)
    assert parse_vote("<think>\nSCPI?\n</think>\n\nSCPI\tCRIME_VICTIM\t0.75\n") == Vote(
        "SCPI", ("CRIME_VICTIM",), 0.75
    )


def test_codes_map_onto_the_screens_own_categories_as_the_issue_says() -> None:
    assert set(CODE_TO_CATEGORY) == set(CODES) and len(CODES) == 12
    assert set(CODE_TO_CATEGORY.values()) == set(CATEGORIES)
    groups = {c: sorted(k for k, v in CODE_TO_CATEGORY.items() if v == c) for c in CATEGORIES}
    assert groups == {
        "MEDICAL": ["HEALTH_CHECK", "MEDICAL", "MEDICAL_GUIDANCE"],
        "CRIME": ["CRIME_VICTIM", "CRIMINAL_PROCEDURE", "CRIMINAL_RECORD", "JUVENILE_PROCEDURE"],
        "DISABILITY": ["DISABILITY"],
        "OTHER": ["CREED", "LGBT", "RACE", "SOCIAL_STATUS"],
    }
    assert categories_of(["LGBT", "CRIME_VICTIM", "HEALTH_CHECK"]) == ("MEDICAL", "CRIME", "OTHER")


def test_prompt_is_versioned_and_its_examples_obey_the_contract() -> None:
    assert PROMPT_VERSION == "annotate-v1"
    langs = {"ko": 0, "ja": 0, "en": 0}
    for doc, answer in FEW_SHOT:
        parse_vote(answer)
        from spcl.text import guess_lang

        langs[guess_lang(doc)] += 1
    assert all(langs.values()), langs
    messages = build_messages("문서 본문")
    assert [m["role"] for m in messages] == ["user"] and messages[0]["content"].endswith(
        "문서 본문\n\nAnswer:"
    )
    assert all(code in messages[0]["content"] for code in CODES)
