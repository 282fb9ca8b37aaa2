"""The small things reviewers trip over (issue 14 §3): CSV numbers, Landis–Koch verdicts, union
score buckets, `review report --positive auto`, and the pii answer through adjudication."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spcl.cli import main
from spcl.review.agree import verdict
from spcl.review.estimate import Scan, estimate
from spcl.review.labels import ReviewError, parse_pii
from spcl.review.reviews import Review, escape_cell, read_reviews, unescape_cell
from spcl.review.sample import SamplePlan, SampleSpec, sample_dataset, union_bucket
from tests.support.review_rows import make_rows, write_output


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_stay_numbers_in_the_csv(x: float):
    for cell in (f"{x:.4f}", f"{x:.6g}", repr(x)):
        assert escape_cell(cell) == cell and unescape_cell(cell) == cell


@given(st.text(alphabet="=+-@'\t0123456789.eE,x ", max_size=8))
def test_formula_like_cells_are_guarded_and_round_trip(cell: str):
    guarded = escape_cell(cell)
    assert unescape_cell(guarded) == cell
    # left unguarded only when it is a plain number
    if guarded.startswith(("=", "+", "-", "@", "\t")):
        float(guarded)


def test_formulas_and_lookalikes_are_still_guarded():
    for cell in ("=1+1", "-1+1", "+A1", "@SUM(A1)", "-", "-inf", "-٣", "'-0.5", "\t1"):
        assert escape_cell(cell) == "'" + cell, cell
    assert (
        escape_cell("-0.9071") == "-0.9071"
        and escape_cell("+12") == "+12"
        and escape_cell("1e5=") == "1e5="
    )


def test_exported_scores_are_numbers(tmp_path: Path):
    out = write_output(tmp_path / "out", make_rows(120, seed=2), rows_per_file=1000)
    assert (
        main(
            [
                "review",
                "export",
                "-i",
                str(out),
                "-o",
                str(tmp_path / "b"),
                "--n",
                "60",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    with open(tmp_path / "b" / "sample.csv", encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    svc = [r["svc"] for r in rows if r["svc"]]
    assert any(v.startswith("-") for v in svc) and all(float(v) == float(v) for v in svc)
    # formulas still guarded
    assert all(r["text"].startswith("'=") for r in rows if r["lang"] == "en")


@pytest.mark.parametrize(
    ("k", "band"),
    [
        (-0.2, "poor"),
        (0.0, "slight"),
        (0.19, "slight"),
        (0.2, "fair"),
        (0.41, "moderate"),
        (0.6, "substantial"),
        (0.79, "substantial"),
        (0.8, "almost perfect"),
        (1.0, "almost perfect"),
    ],
)
def test_verdict_uses_the_five_landis_koch_bands(k: float, band: str):
    text = verdict(k)
    assert text.startswith(f"{band} (Landis–Koch)")
    assert ("rewrite the guideline" in text) == (k < 0.6)


def test_union_bucket_names_the_flagging_models_and_the_lgbm_band():
    s = {"lgbm": 0.3, "svc": 0.4, "lgbm_flag": False, "svc_flag": True}
    assert union_bucket(s) == "svc:<0.5"
    assert union_bucket({**s, "lgbm": 0.97, "lgbm_flag": True}) == "lgbm+svc:>=0.95"
    assert union_bucket({**s, "lgbm": 0.7, "lgbm_flag": True, "svc_flag": False}) == "lgbm:0.5-0.8"
    assert union_bucket({**s, "svc_flag": False}) == "none:<0.5" and union_bucket(None) == "-"


def test_svc_only_flags_get_their_own_stratum(tmp_path: Path):
    rows = make_rows(200, seed=6)
    for i, r in enumerate(rows[:40]):  # low LightGBM score, flagged by the SVC alone
        r["scores"] = {
            **(r["scores"] or {}),
            "lgbm": 0.1 + i / 1000,
            "svc": 0.9,
            "lgbm_flag": False,
            "svc_flag": True,
        }
    out = write_output(tmp_path / "out", rows, rows_per_file=1000)
    plan, _ = sample_dataset(out, SampleSpec(n=60, seed=1, dimensions=("decision", "bucket")))
    assert any(s.endswith("bucket=svc:<0.5") for s in plan.populations)
    # no longer pooled with svc flags
    assert any(s.endswith("bucket=none:<0.5") for s in plan.populations)
    legacy = plan.to_json()
    del legacy["spec"]["bucket_by"]  # plans written before the union buckets keep their meaning
    assert SamplePlan.from_json(legacy).spec.bucket_by == "lgbm"


def _scan() -> Scan:
    docs = {f"r{i}": ("s-r", "flagged", "ja", "-") for i in range(4)}
    docs |= {f"s{i}": ("s-s", "flagged", "ja", "CRIME") for i in range(2)}
    docs |= {f"c{i}": ("s-c", "clean", "ja", "-") for i in range(4)}
    by = {f"r{i}": "rule" for i in range(4)} | {f"s{i}": "screen" for i in range(2)}
    return Scan(
        populations={"s-r": 4, "s-s": 2, "s-c": 4},
        domains={
            ("flagged", "all", ""): 6,
            ("flagged", "lang", "ja"): 6,
            ("flagged", "category", "-"): 4,
            ("flagged", "category", "CRIME"): 2,
            ("clean", "all", ""): 4,
            ("clean", "lang", "ja"): 4,
            ("clean", "category", "-"): 4,
        },
        docs=docs,
        flagged_by=by,
    )


def test_positive_auto_follows_what_flagged_the_document():
    def rev(i: str, label: str, pii: str = "") -> Review:
        return Review(i, label, (), "", {"pii": pii})

    reviews = {
        "r0": rev("r0", "NONE", "yes"),  # a phone number, confirmed: a true positive
        "r1": rev("r1", "NONE", "yes"),
        "r2": rev("r2", "NONE", "no"),  # the rule was wrong
        "r3": rev("r3", "NONE"),  # nobody answered: counted as a false positive, and said so
        "s0": rev("s0", "RELATED"),  # the screen flags RELATED by design
        "s1": rev("s1", "NONE", "yes"),  # pii=yes does not rescue a screen flag
        "c0": rev("c0", "SCPI"),
        "c1": rev("c1", "NONE", "yes"),
        "c2": rev("c2", "NONE"),
        "c3": rev("c3", "NONE"),
    }
    auto = estimate(reviews, _scan(), {"flagged": 6, "clean": 4})
    assert auto["precision_flagged"]["overall"]["positives"] == 3  # r0, r1, s0
    assert (
        auto["miss_rate_clean"]["overall"]["positives"] == 1
        and auto["rule_flagged_unanswered"] == 1
    )
    assert auto["positive_labels"] == "auto" and "pii=yes" in auto["positive_rule"]
    scpi = estimate(reviews, _scan(), {"flagged": 6, "clean": 4}, positive=["SCPI"])
    # the old default: every phone number "wrong"
    assert scpi["precision_flagged"]["overall"]["positives"] == 0
    with pytest.raises(ReviewError):
        estimate({"r0": rev("r0", "NONE", "maybe")}, _scan(), {})


def test_parse_pii():
    assert [parse_pii(v, row_id="d") for v in ("Y", "no", " ", "-", "TRUE", "0")] == [
        True,
        False,
        None,
        None,
        True,
        False,
    ]
    with pytest.raises(ReviewError, match=r"'d'.*pii"):
        parse_pii("perhaps 010-1234", row_id="d")


def _fill(path: Path, fill) -> None:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        cols, rows = reader.fieldnames, list(reader)
    for r in rows:
        r["label"], r["pii"] = fill(r)
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


def test_cli_report_defaults_to_auto_and_adjudicates_pii(tmp_path: Path, capsys):
    rows = make_rows(300, seed=8)
    out = write_output(tmp_path / "out", rows, rows_per_file=1000)
    batch = tmp_path / "batch"
    assert (
        main(
            [
                "review",
                "export",
                "-i",
                str(out),
                "-o",
                str(batch),
                "--n",
                "60",
                "--reviewers",
                "a,b",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    # every document is a phone number about nothing sensitive: NONE, and the hit is real
    _fill(batch / "reviewer-a.csv", lambda r: ("NONE", "yes"))
    _fill(batch / "reviewer-b.csv", lambda r: ("NONE", "no" if r["id"].endswith("7") else "yes"))
    assert (
        main(["review", "adjudicate", str(batch / "reviewer-a.csv"), str(batch / "reviewer-b.csv")])
        == 0
    )
    adj = read_reviews(batch / "adjudicated.csv")
    split = [i for i in adj if i.endswith("7")]
    assert split and all(adj[i].row["pii"] == "" and adj[i].row["agreed"] == "no" for i in split)
    assert all(adj[i].row["pii"] == "yes" for i in adj if i not in split)
    capsys.readouterr()
    assert (
        main(["review", "report", "-i", str(out), "--reviews", str(batch / "adjudicated.csv")]) == 0
    )
    printed = capsys.readouterr().out
    assert (
        "positive: auto" in printed
        and "rule-flagged documents labelled NONE have no pii answer" in printed
    )
    est = json.loads((batch / "report" / "estimates.json").read_text())
    flagged = [i for i in adj if i in {r["id"] for r in rows if r["decision"] == "flagged"}]
    p = est["precision_flagged"]["overall"]
    assert p["reviewed"] == len(flagged) and p["positives"] == len(
        [i for i in flagged if i not in split]
    )
    assert est["rule_flagged_unanswered"] == len([i for i in flagged if i in split])
    assert (
        main(
            [
                "review",
                "report",
                "-i",
                str(out),
                "--reviews",
                str(batch / "adjudicated.csv"),
                "--positive",
                "SCPI",
                "--output",
                str(tmp_path / "r2"),
            ]
        )
        == 0
    )
    assert (
        json.loads((tmp_path / "r2" / "estimates.json").read_text())["precision_flagged"][
            "overall"
        ]["rate"]
        == 0
    )
