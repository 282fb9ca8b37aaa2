"""The agreement filter on hand-made vote tables, the verifier, hashed-id balance and kappa vs
scikit-learn."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from spcl.annotate.agreement import Decision, TeacherVote, decide, verify
from spcl.annotate.balance import balance
from spcl.annotate.contract import Vote, parse_vote
from spcl.annotate.prompt import CODES
from spcl.annotate.summary import pair_agreement, teacher_report
from spcl.review.labels import LABELS
from spcl.review.sample import hash_key
from spcl.screen import CATEGORIES


def tv(teacher: str, line: str | None = None, *, error: str | None = None) -> TeacherVote:
    """A teacher vote from the contract line the teacher printed (or a backend error)."""
    return TeacherVote.from_output(teacher, line, error)


# each row: the teachers' outputs (None + error for a backend failure) → the expected decision
TABLE: list[tuple[list[tuple[str, str | None, str | None]], float, Decision]] = [
    (
        [("a", "SCPI\tMEDICAL\t0.9", None), ("b", "SCPI\tHEALTH_CHECK,MEDICAL\t0.85", None)],
        0.8,
        Decision(None, "SCPI", ("MEDICAL",), ("MEDICAL", "HEALTH_CHECK"), 0.85),
    ),
    (
        [("a", "NONE\t-\t0.95", None), ("b", "<think>no person</think>NONE\t-\t1", None)],
        0.8,
        Decision(None, "NONE", (), (), 0.95),
    ),
    (
        [
            ("a", "RELATED\tCRIME_VICTIM\t0.9", None),
            ("b", "RELATED\tJUVENILE_PROCEDURE\t0.9", None),
        ],
        0.8,
        Decision(None, "RELATED", ("CRIME",), ("CRIME_VICTIM", "JUVENILE_PROCEDURE"), 0.9),
    ),
    (
        [("a", "SCPI\tMEDICAL\t0.9", None), ("b", "RELATED\tMEDICAL\t0.9", None)],
        0.8,
        Decision("label_disagreement"),
    ),
    (
        [("a", "SCPI\tMEDICAL\t0.9", None), ("b", "SCPI\tMEDICAL,CRIME_VICTIM\t0.9", None)],
        0.8,
        Decision("category_disagreement"),
    ),
    # both OTHER: same category
    (
        [("a", "SCPI\tCREED\t0.9", None), ("b", "SCPI\tLGBT\t0.9", None)],
        0.8,
        Decision(None, "SCPI", ("OTHER",), ("CREED", "LGBT"), 0.9),
    ),
    ([("a", "NONE\t-\t0.9", None), ("b", "NONE\t-\t0.79", None)], 0.8, Decision("low_confidence")),
    (
        [("a", "NONE\t-\t0.9", None), ("b", "NONE\t-\t0.79", None)],
        0.79,
        Decision(None, "NONE", (), (), 0.79),
    ),
    (
        [("a", "SCPI\tMEDICAL\t0.1", None), ("b", "NONE\t-\t0.1", None)],
        0.8,
        Decision("label_disagreement"),
    ),
    (
        [("a", "SCPI\tMEDICAL\t0.1", None), ("b", "SCPI\tCREED\t0.1", None)],
        0.8,
        Decision("category_disagreement"),
    ),
    ([("a", None, "timeout"), ("b", "garbage", None)], 0.8, Decision("backend_error:a")),
    ([("a", "garbage", None), ("b", None, "http_503")], 0.8, Decision("unparseable:a")),
    (
        [("a", "SCPI\tMEDICAL\t0.9", None), ("b", "SCPI\tMEDICAL\t0.9\nsure!", None)],
        0.8,
        Decision("unparseable:b"),
    ),
    (
        [("a", "SCPI\tMEDICAL\t0.9", None), ("b", None, "output_truncated")],
        0.8,
        Decision("backend_error:b"),
    ),
    (
        [("a", "NONE\t-\t0.9", None), ("b", "NONE\t-\t0.9", None), ("c", "SCPI\tRACE\t0.9", None)],
        0.8,
        Decision("label_disagreement"),
    ),
    (
        [("a", "NONE\t-\t0.9", None), ("b", "NONE\t-\t0.9", None), ("c", "NONE\t-\t0.5", None)],
        0.8,
        Decision("low_confidence"),
    ),
]


@pytest.mark.parametrize(("outputs", "min_conf", "expected"), TABLE)
def test_agreement_filter_on_hand_made_votes(outputs, min_conf: float, expected: Decision) -> None:
    assert decide([tv(t, line, error=err) for t, line, err in outputs], min_conf) == expected


def test_one_teacher_is_not_enough() -> None:
    with pytest.raises(ValueError, match="two teachers"):
        decide([tv("a", "NONE\t-\t1")], 0.5)


def test_verifier_keeps_moves_or_fails_closed() -> None:
    kept = decide([tv("a", "SCPI\tMEDICAL\t0.9"), tv("b", "SCPI\tHEALTH_CHECK\t0.9")], 0.8)
    assert kept.kept
    assert verify(kept, tv("v", "SCPI\tMEDICAL_GUIDANCE\t0.6")) == kept  # same label and category
    assert verify(kept, tv("v", "RELATED\tMEDICAL\t0.99")).reason == "verifier_disagreement"
    assert verify(kept, tv("v", "SCPI\tMEDICAL,DISABILITY\t0.99")).reason == "verifier_disagreement"
    assert verify(kept, tv("v", "SCPI MEDICAL 0.9")).reason == "unparseable:v"
    assert verify(kept, tv("v", error="timeout")).reason == "backend_error:v"
    rejected = Decision("label_disagreement")
    assert verify(rejected, tv("v", "SCPI\tMEDICAL\t0.9")) is rejected


vote_lines = st.one_of(
    st.builds(
        lambda c, k: f"SCPI\t{','.join(c)}\t{k}",
        st.lists(st.sampled_from(CODES), min_size=1, max_size=3, unique=True),
        st.sampled_from(["0.5", "0.9", "1"]),
    ),
    st.builds(
        lambda c, k: f"RELATED\t{','.join(c)}\t{k}",
        st.lists(st.sampled_from(CODES), min_size=1, max_size=3, unique=True),
        st.sampled_from(["0.5", "0.9"]),
    ),
    st.sampled_from(["NONE\t-\t0.9", "NONE\t-\t0.3", "junk", ""]),
)


@given(st.lists(vote_lines, min_size=2, max_size=4), st.sampled_from([0.0, 0.8, 1.0]))
def test_kept_means_parsed_same_label_same_categories_confident(
    lines: list[str], min_conf: float
) -> None:
    votes = [tv(f"t{i}", line) for i, line in enumerate(lines)]
    d = decide(votes, min_conf)
    parsed = [v.vote for v in votes]
    if d.kept:
        assert all(p is not None for p in parsed)
        assert {p.label for p in parsed if p} == {d.label}
        assert {p.categories for p in parsed if p} == {d.categories}
        assert all(p.confidence >= min_conf for p in parsed if p)
    else:
        assert d.label is None and d.reason


# --- balance by hashed id -------------------------------------------------------------------------

rows_strategy = st.lists(
    st.tuples(st.uuids().map(str), st.sampled_from(["SCPI", "RELATED", "NONE", "NONE"])),
    max_size=60,
    unique_by=lambda r: r[0],
)


@given(rows_strategy, st.sampled_from([0.05, 0.1, 0.3, 0.5, 1.0]), st.integers(0, 3), st.randoms())
def test_balance_is_a_pure_function_of_ids_and_seed(
    rows, share: float, seed: int, rnd: random.Random
) -> None:
    b = balance(rows, share, seed)
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    b2 = balance(shuffled, share, seed)
    # order does not matter
    assert {rows[i][0] for i in b.dropped} == {shuffled[i][0] for i in b2.dropped}
    assert all(rows[i][1] == "NONE" for i in b.dropped)  # only NONE is ever dropped
    kept_none = [r for i, r in enumerate(rows) if r[1] == "NONE" and i not in b.dropped]
    gone = [rows[i] for i in b.dropped]
    if kept_none and gone:  # the kept NONE texts are those with the smallest hashed ids
        assert max(hash_key(seed, r[0]) for r in kept_none) < min(
            hash_key(seed, r[0]) for r in gone
        )
    pos = sum(r[1] == "SCPI" for r in rows)
    remaining = len(rows) - len(b.dropped)
    if b.dropped:
        if kept_none:  # NONE was cut, not to zero: the target share is reached ...
            assert pos / remaining >= share - 1e-9
        assert pos / (remaining + 1) < share + 1e-9  # ... and one more NONE text would miss it
    assert b.none_kept == len(kept_none)


def test_balance_numbers_and_seed_dependence() -> None:
    rows = (
        [(f"s{i}", "SCPI") for i in range(10)]
        + [(f"r{i}", "RELATED") for i in range(5)]
        + [(f"n{i}", "NONE") for i in range(200)]
    )
    b = balance(rows, 0.1, seed=0)
    assert b.none_kept == 85 and len(b.dropped) == 115 and b.share_after == round(10 / 100, 6)
    assert balance(rows, 0.1, seed=0) == b
    assert balance(rows, 0.1, seed=1).dropped != b.dropped
    assert balance(rows, None, seed=0).dropped == frozenset()
    # already above the share: nothing to cut
    assert balance(rows, 0.01, seed=0).dropped == frozenset()
    with pytest.raises(ValueError):
        balance(rows, 0.0, seed=0)


# --- kappa per teacher pair equals scikit-learn's -------------------------------------------------


def _sk(a: list, b: list, labels: list) -> float | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = cohen_kappa_score(a, b, labels=labels)
    return None if math.isnan(k) else k


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(vote_lines, min_size=3, max_size=3), min_size=1, max_size=40))
def test_pair_kappa_equals_scikit_learn(table: list[list[str]]) -> None:
    names = ["a", "b", "c"]
    votes = [[tv(n, line) for n, line in zip(names, row, strict=True)] for row in table]
    pairs = pair_agreement(votes, names)
    assert list(pairs) == ["a|b", "a|c", "b|c"]
    for key, entry in pairs.items():
        i, j = (names.index(x) for x in key.split("|"))
        both = [(r[i].vote, r[j].vote) for r in votes if r[i].vote and r[j].vote]
        assert entry["documents"] == len(both)
        if not both:
            assert entry["label_kappa"] is None
            continue
        expected = _sk([x.label for x, _ in both], [y.label for _, y in both], list(LABELS))
        assert (entry["label_kappa"] is None) == (expected is None)
        if expected is not None:
            assert entry["label_kappa"] == pytest.approx(expected, abs=1e-6)
        for cat in CATEGORIES:
            got = entry["per_category"][cat]["kappa"]
            exp = _sk(
                [cat in x.categories for x, _ in both],
                [cat in y.categories for _, y in both],
                [False, True],
            )
            assert (got is None) == (exp is None)
            if exp is not None:
                assert got == pytest.approx(exp, abs=1e-6)


def test_teacher_rates() -> None:
    r = teacher_report(
        {
            "documents": 10,
            "outputs": 8,
            "parsed": 6,
            "parse_failures": {"fields": 2},
            "backend_errors": {"timeout": 2},
            "generated_tokens": 50,
            "wall_seconds": 2.0,
            "latency_seconds": 5.0,
        }
    )
    assert r["parse_failure_rate"] == 0.25 and r["backend_error_rate"] == 0.2
    assert r["tokens_per_document"] == 5.0 and r["seconds_per_document"] == 0.2
    assert parse_vote(Vote("SCPI", ("RACE",), 0.123456).line()) == Vote("SCPI", ("RACE",), 0.123456)
