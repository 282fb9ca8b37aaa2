"""Sampled manual review: sampling, exports, redaction, agreement, estimates, to-train (issue 6)."""

from __future__ import annotations

import csv
import html.parser
import json
import math
import random
import stat
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from spcl.cli import main
from spcl.manifest import read_manifest, verify_manifest
from spcl.review.agree import adjudicate, agreement, cohen_kappa, fleiss_kappa, verdict
from spcl.review.estimate import Scan, estimate, scan_output, scan_with_plan, weighted_rate, wilson
from spcl.review.export import export_sample
from spcl.review.labels import ReviewError, parse_categories
from spcl.review.redact import redact
from spcl.review.reviews import Review, escape_cell, read_reviews, unescape_cell
from spcl.review.sample import SamplePlan, SampleSpec, allocate, draw, parse_stratum, sample_dataset
from tests.support.review_rows import make_rows, write_output


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return make_rows()


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory, rows: list[dict]) -> Path:
    return write_output(tmp_path_factory.mktemp("out"), rows, rows_per_file=1000)


# ---------------------------------------------------------------- sampling


def test_sample_is_independent_of_partitioning_and_row_order(
    tmp_path: Path, rows: list[dict], out_dir: Path
):
    spec = SampleSpec(n=120, seed=7)
    plan_a, a = sample_dataset(out_dir, spec)
    other = write_output(tmp_path / "other", rows, rows_per_file=37, shuffle_seed=3)
    assert len(list(other.glob("decision=*/*.parquet"))) > 10
    plan_b, b = sample_dataset(other, spec)
    assert plan_a.to_json() == plan_b.to_json()
    assert a.column("id").to_pylist() == b.column("id").to_pylist()
    assert a.num_rows == 120
    _, c = sample_dataset(out_dir, SampleSpec(n=120, seed=8))
    assert set(c.column("id").to_pylist()) != set(a.column("id").to_pylist())


def test_draw_is_a_pure_function_of_ids_and_seed():
    rng = random.Random(0)
    ids = [f"d{i}" for i in range(400)]
    strata = [f"decision={rng.choice(['clean', 'flagged'])}|lang={rng.choice('ab')}" for _ in ids]
    spec = SampleSpec(n=50, seed=3, dimensions=("decision", "lang"))
    plan1, chosen1 = draw(ids, strata, spec)
    order = list(range(len(ids)))
    rng.shuffle(order)
    plan2, chosen2 = draw([ids[i] for i in order], [strata[i] for i in order], spec)
    assert chosen1 == chosen2 and plan1.sizes == plan2.sizes


def test_stratum_sizes_are_honoured(out_dir: Path):
    plan, table = sample_dataset(out_dir, SampleSpec(per_stratum=3, seed=1))
    got: dict[str, int] = {}
    for s in table.column("stratum").to_pylist():
        got[s] = got.get(s, 0) + 1
    assert got == {s: min(3, p) for s, p in plan.populations.items() if min(3, p)}
    assert all(parse_stratum(s)["decision"] != "quarantine" for s in got)
    assert {"decision", "lang", "category", "bucket"} == set(parse_stratum(next(iter(got))))


def test_allocation_includes_clean_and_the_floor(out_dir: Path):
    plan, table = sample_dataset(
        out_dir,
        SampleSpec(
            n=200,
            seed=2,
            clean_share=0.3,
            min_per_stratum=2,
            dimensions=("decision", "lang", "category"),
        ),
    )
    assert 20 < len(plan.populations) < 50
    decisions = table.column("decision").to_pylist()
    assert len(decisions) == 200
    assert decisions.count("clean") == 60
    assert all(plan.sizes[s] >= min(2, p) for s, p in plan.populations.items())
    weights = dict(
        zip(table.column("stratum").to_pylist(), table.column("weight").to_pylist(), strict=True)
    )
    assert all(math.isclose(w, plan.populations[s] / plan.sizes[s]) for s, w in weights.items())


@settings(max_examples=60, deadline=None)
@given(
    pops=st.dictionaries(
        st.tuples(st.sampled_from(["clean", "flagged"]), st.sampled_from(["ja", "ko", "en"])),
        st.integers(1, 300),
        min_size=1,
    ),
    n=st.integers(0, 500),
    share=st.floats(0.0, 1.0),
)
def test_allocate_properties(pops: dict, n: int, share: float):
    populations = {f"decision={d}|lang={lg}": p for (d, lg), p in pops.items()}
    sizes = allocate(
        populations, SampleSpec(n=n, clean_share=share, dimensions=("decision", "lang"))
    )
    assert all(0 <= sizes[s] <= p for s, p in populations.items())
    assert sum(sizes.values()) == min(n, sum(populations.values()))
    has_clean = any(s.startswith("decision=clean") for s in populations)
    if has_clean and n > 0:
        assert sum(k for s, k in sizes.items() if s.startswith("decision=clean")) >= 1


# ---------------------------------------------------------------- exports


class _Collect(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_exports_open_and_are_private(tmp_path: Path, out_dir: Path):
    plan, table = sample_dataset(out_dir, SampleSpec(n=40, seed=5))
    dest = tmp_path / "batch"
    manifest = export_sample(table, plan, dest, source=out_dir, reviewers=["a", "b"])
    assert stat.S_IMODE(dest.stat().st_mode) == 0o700
    for f in dest.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f.name
    raw = (dest / "sample.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    with open(dest / "sample.csv", encoding="utf-8-sig", newline="") as fh:
        csv_rows = list(csv.DictReader(fh))
    ids = table.column("id").to_pylist()
    texts = dict(zip(ids, table.column("text").to_pylist(), strict=True))
    assert [r["id"] for r in csv_rows] == ids
    assert all(unescape_cell(r["text"]) == texts[r["id"]] for r in csv_rows)
    assert any(r["text"].startswith("'=") for r in csv_rows if r["lang"] == "en")  # no live formula
    assert {"label", "categories", "note"} <= set(csv_rows[0])
    jsonl = [json.loads(line) for line in (dest / "sample.jsonl").read_text().splitlines()]
    assert [r["id"] for r in jsonl] == ids and all(r["label"] == "" for r in jsonl)
    tasks = json.loads((dest / "labelstudio-tasks.json").read_text())
    assert [t["data"]["doc_id"] for t in tasks] == ids
    hit = tasks[0]["predictions"][0]["result"][0]["value"]
    source_hit = table.slice(0, 1).column("hits").to_pylist()[0][0]
    assert (hit["start"], hit["end"]) == (source_hit["start"], source_hit["end"])
    config = ET.fromstring((dest / "labelstudio-config.xml").read_text())
    choices = {c.get("name"): [x.get("value") for x in c] for c in config.iter("Choices")}
    assert choices == {
        "label": ["SCPI", "RELATED", "NONE"],
        "categories": ["MEDICAL", "CRIME", "DISABILITY", "OTHER"],
    }
    page = (dest / "sample.html").read_text()
    parser = _Collect()
    parser.feed(page)
    # the page's data + its code
    assert parser.tags.count("script") == 2 and parser.tags.count("mark") == 40
    assert "&lt;script&gt;" in page and "<script>alert" not in page
    assert all(i in "".join(parser.text) for i in ids)
    assert manifest["records"] == 40 and manifest["licence"] == "CC-BY-4.0"
    assert manifest["sources"][0]["path"] == str(out_dir)
    assert read_manifest(dest)["record_counts"]["sample.jsonl"] == 40
    assert verify_manifest(dest).ok
    with pytest.raises(FileExistsError):
        export_sample(table, plan, dest)


def test_redacted_export_leaves_no_hit_value(tmp_path: Path, out_dir: Path, rows: list[dict]):
    plan, table = sample_dataset(out_dir, SampleSpec(n=60, seed=9))
    dest = tmp_path / "red"
    export_sample(table, plan, dest, redacted=True, reviewers=["a"])
    by_id = {r["id"]: r for r in rows}
    values = [
        by_id[i]["text"][h["start"] : h["end"]]
        for i in table.column("id").to_pylist()
        for h in by_id[i]["hits"]
    ]
    assert len(values) == 60
    blob = b"".join(f.read_bytes() for f in dest.iterdir())
    assert not [v for v in values if v.encode() in blob]
    assert b"[PHONE]" in blob
    tasks = json.loads((dest / "labelstudio-tasks.json").read_text())
    for t in tasks:
        for res in t["predictions"][0]["result"]:
            v = res["value"]
            assert t["data"]["text"][v["start"] : v["end"]] == "[PHONE]"


@given(st.text(alphabet="='+-@\tab", max_size=6))
def test_csv_formula_guard_round_trips(cell: str):
    guarded = escape_cell(cell)
    assert not guarded.startswith(("=", "+", "-", "@", "\t")) or guarded.lstrip("+-").isdigit()
    assert unescape_cell(guarded) == cell


def test_redact_masks_repeats_and_merges_overlaps():
    text = "a 010-1111-2222 b 010-1111-2222 c x@y.kr"
    hits = [
        {"type": "PHONE", "start": 2, "end": 15},
        {"type": "EMAIL", "start": 34, "end": 40},
        {"type": "PHONE", "start": 10, "end": 15},
    ]
    masked, new = redact("d", text, hits)
    assert masked == "a [PHONE] b [PHONE] c [EMAIL]"
    assert all(masked[h["start"] : h["end"]] == f"[{h['type']}]" for h in new)
    with pytest.raises(ReviewError) as err:
        redact("doc-7", text, [{"type": "PHONE", "start": 30, "end": 99}])
    assert "doc-7" in str(err.value) and "010" not in str(err.value)


# ---------------------------------------------------------------- agreement


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("ABC"), st.sampled_from("ABCD")), min_size=1, max_size=60)
)
def test_cohen_kappa_matches_sklearn(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours = cohen_kappa(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = cohen_kappa_score(a, b)
    assert (math.isnan(ours) and math.isnan(theirs)) or math.isclose(ours, theirs, abs_tol=1e-9)


def test_fleiss_kappa_on_the_published_example():
    # Fleiss' kappa worked example (Wikipedia, "Fleiss' kappa"): 10 subjects, 14 raters, 5
    # categories.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert round(fleiss_kappa(table), 3) == 0.210
    with pytest.raises(ValueError):
        fleiss_kappa([[1, 1], [2, 1]])


def _reviews(labels: dict[str, tuple[str, str]]) -> dict[str, Review]:
    return {i: Review(i, lab, parse_categories(c, row_id=i)) for i, (lab, c) in labels.items()}


def test_agreement_report_and_verdicts():
    a = _reviews(
        {
            "1": ("SCPI", "CRIME"),
            "2": ("NONE", ""),
            "3": ("RELATED", "MEDICAL"),
            "4": ("SCPI", "MEDICAL"),
            "5": ("NONE", ""),
        }
    )
    b = _reviews(
        {
            "1": ("SCPI", "CRIME"),
            "2": ("NONE", ""),
            "3": ("SCPI", "MEDICAL"),
            "4": ("SCPI", "CRIME"),
            "6": ("NONE", ""),
        }
    )
    r = agreement({"a": a, "b": b})
    assert r.method == "cohen" and r.items == 4
    assert r.kappa == pytest.approx(
        cohen_kappa_score(["SCPI", "NONE", "RELATED", "SCPI"], ["SCPI", "NONE", "SCPI", "SCPI"])
    )
    assert r.label_disagreements == ["3"] and r.category_disagreements == ["4"]
    assert r.not_rated_by_all == ["5", "6"]
    assert r.confusion[1][0] == 1 and sum(map(sum, r.confusion)) == 4  # RELATED (a) vs SCPI (b)
    c = dict(b)
    three = agreement({"a": a, "b": b, "c": c})
    assert three.method == "fleiss" and len(three.pairwise) == 3
    assert "rewrite the guideline" in verdict(0.59) and verdict(0.59).startswith("moderate")
    assert (
        verdict(0.6) == "substantial (Landis–Koch)"
        and verdict(0.8) == "almost perfect (Landis–Koch)"
    )
    rows = adjudicate({"a": a, "b": b})
    by_id = {row["id"]: row for row in rows}
    assert (
        by_id["1"]["label"] == "SCPI" and by_id["3"]["label"] == "" and by_id["3"]["agreed"] == "no"
    )
    sens = {row["id"]: row for row in adjudicate({"a": a, "b": b}, policy="sensitive")}
    assert sens["3"]["label"] == "SCPI" and sens["4"]["categories"] == "CRIME,MEDICAL"


def test_reviews_read_from_a_semicolon_spreadsheet_export(tmp_path: Path):
    p = tmp_path / "r.csv"
    p.write_text(
        "\ufeffid;text;label;categories;note\n'-d1;x, y;scpi;crime, medical;ok\nd2;z;;;\n",
        encoding="utf-8",
    )
    got = read_reviews(p)
    assert (
        got["-d1"] == Review("-d1", "SCPI", ("CRIME", "MEDICAL"), "ok") and got["d2"].label is None
    )


def test_bad_review_cell_names_id_and_column_only(tmp_path: Path):
    p = tmp_path / "r.csv"
    p.write_text("id,text,label\nd-9,秘密の本文 010-9999-8888,MAYBE\n", encoding="utf-8")
    with pytest.raises(ReviewError) as err:
        read_reviews(p)
    msg = str(err.value)
    assert "d-9" in msg and "label" in msg and "秘密" not in msg and "9999" not in msg


# ---------------------------------------------------------------- estimates


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (Wilson score, no
    # correction)
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_matches_published_values(x, n, low, high):
    lo, hi = wilson(x, n)
    assert round(lo, 4) == low and round(hi, 4) == high


def test_weighted_rate_reduces_to_wilson_and_weights_strata():
    equal = weighted_rate([(2.0, True)] * 15 + [(2.0, False)] * 133, population=1000)
    assert (equal.low, equal.high) == pytest.approx(
        wilson(15, 148)
    ) and equal.count == pytest.approx(1000 * 15 / 148)
    # stratum A: 90 docs, 3 of 3 reviewed positive; stratum B: 10 docs, 0 of 3 positive -> 0.9
    mixed = weighted_rate([(30.0, True)] * 3 + [(10 / 3, False)] * 3, population=100)
    assert mixed.rate == pytest.approx(0.9) and mixed.effective_n < 6


def test_estimate_scales_to_corpus_counts():
    scan = Scan(
        populations={"s-f": 400, "s-c": 600},
        domains={
            ("flagged", "all", ""): 400,
            ("flagged", "lang", "ja"): 400,
            ("flagged", "category", "CRIME"): 400,
            ("clean", "all", ""): 600,
            ("clean", "lang", "ja"): 600,
            ("clean", "category", "-"): 600,
        },
        docs={f"f{i}": ("s-f", "flagged", "ja", "CRIME") for i in range(10)}
        | {f"c{i}": ("s-c", "clean", "ja", "-") for i in range(20)},
    )
    reviews = {
        f"f{i}": Review(f"f{i}", "SCPI" if i < 8 else "NONE", ("CRIME",) if i < 8 else ())
        for i in range(10)
    }
    reviews |= {
        f"c{i}": Review(f"c{i}", "SCPI" if i < 1 else "NONE", ("MEDICAL",) if i < 1 else ())
        for i in range(20)
    }
    result = estimate(reviews, scan, {"flagged": 4000, "clean": 6000})
    p = result["precision_flagged"]["overall"]
    assert p["rate"] == pytest.approx(0.8) and p["count"] == pytest.approx(3200)
    assert (p["low"], p["high"]) == pytest.approx(wilson(8, 10), abs=1e-6)
    m = result["miss_rate_clean"]
    assert m["overall"]["count"] == pytest.approx(300) and m["by_category"]["MEDICAL"][
        "rate"
    ] == pytest.approx(0.05)
    assert m["by_category"]["CRIME"]["positives"] == 0
    assert result["recall_estimate"]["rate"] == pytest.approx(3200 / 3500, abs=1e-6)
    wider = estimate(reviews, scan, {"flagged": 4000, "clean": 6000}, positive=["scpi", "NONE"])
    assert wider["precision_flagged"]["overall"]["rate"] == 1.0
    with pytest.raises(ValueError):
        estimate(reviews, scan, {}, positive=["YES"])


# ---------------------------------------------------------------- the whole loop through the CLI


def _fill(path: Path, labeller) -> None:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        cols, rows = reader.fieldnames, list(reader)
    for r in rows:
        r["label"], r["categories"] = labeller(r)
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


def test_cli_loop_export_agree_adjudicate_report_to_train(
    tmp_path: Path, out_dir: Path, rows, capsys
):
    batch = tmp_path / "review" / "batch-01"
    assert (
        main(
            [
                "review",
                "export",
                "--input",
                str(out_dir),
                "--output",
                str(batch),
                "--n",
                "80",
                "--seed",
                "7",
                "--reviewers",
                "a,b",
                "--redact",
            ]
        )
        == 0
    )

    def a_lab(r):
        return ("SCPI", "MEDICAL") if r["decision"] == "flagged" else ("NONE", "")

    def b_lab(r):
        return (
            ("SCPI", "MEDICAL")
            if r["decision"] == "flagged" and not r["id"].endswith("3")
            else ("NONE", "")
        )

    _fill(batch / "reviewer-a.csv", a_lab)
    _fill(batch / "reviewer-b.csv", b_lab)
    assert (
        main(["review", "agree", str(batch / "reviewer-a.csv"), str(batch / "reviewer-b.csv")]) == 0
    )
    agreed = json.loads((batch / "agreement.json").read_text())
    assert agreed["method"] == "cohen" and agreed["items"] == 80 and 0 < agreed["kappa"] < 1
    assert (
        main(
            [
                "review",
                "agree",
                str(batch / "reviewer-a.csv"),
                str(batch / "reviewer-b.csv"),
                "--fail-under",
                "0.99",
            ]
        )
        == 1
    )
    assert (
        main(
            [
                "review",
                "adjudicate",
                str(batch / "reviewer-a.csv"),
                str(batch / "reviewer-b.csv"),
                "--policy",
                "sensitive",
            ]
        )
        == 0
    )
    adj = batch / "adjudicated.csv"
    batch_manifest = read_manifest(batch)
    assert (
        batch_manifest["kind"] == "review-batch"
        and batch_manifest["iaa"]["kappa"] == agreed["kappa"]
    )
    assert batch_manifest["export_manifest_sha256"] and verify_manifest(batch).ok
    assert main(["manifest", "verify", str(batch)]) == 0
    assert main(["review", "report", "--input", str(out_dir), "--reviews", str(adj)]) == 0
    est = json.loads((batch / "report" / "estimates.json").read_text())
    # the plan-based scan (reviewed ids only) and a full scan of the output agree
    plan = SamplePlan.from_json(json.loads((batch / "plan.json").read_text()))
    ids = set(read_reviews(adj))
    assert scan_with_plan(out_dir, plan, ids) == scan_output(out_dir, plan.spec, ids)
    assert est["precision_flagged"]["overall"]["rate"] == pytest.approx(1.0)
    assert est["miss_rate_clean"]["overall"]["rate"] == 0.0
    assert est["precision_flagged"]["overall"]["population"] == sum(
        r["decision"] == "flagged" for r in rows
    )
    assert (batch / "report" / "estimates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert verify_manifest(batch / "report").ok and verify_manifest(batch).ok
    # a redacted export must take its training text from the filter output
    assert main(["review", "to-train", str(adj), "--output", str(tmp_path / "train")]) == 1
    assert (
        main(
            [
                "review",
                "to-train",
                str(adj),
                "--output",
                str(tmp_path / "train"),
                "--input",
                str(out_dir),
            ]
        )
        == 0
    )
    records = [json.loads(x) for x in (tmp_path / "train" / "train.jsonl").read_text().splitlines()]
    assert len(records) == 80
    by_id = {r["id"]: r for r in rows}
    assert set(records[0]) == {"id", "lang", "source", "text", "label", "categories", "provenance"}
    shared = Path("/work/shared/data/scpi-real-v1/labelled.jsonl")  # the fields spcl train reads
    if shared.is_file():
        with shared.open(encoding="utf-8") as fh:
            assert set(json.loads(fh.readline())) == set(records[0]) - {"provenance"}
    assert all(r["text"] == by_id[r["id"]]["text"] for r in records)
    assert records[0]["provenance"]["kappa"] == agreed["kappa"]
    try:  # the training reader of `spcl train`, where present in this checkout
        from spcl.screen.train import read_records
    except ImportError:
        read_records = None
    if read_records is not None:
        parsed = read_records([tmp_path / "train" / "train.jsonl"])
        assert [r.id for r in parsed] == [r["id"] for r in records]
        assert [r.label for r in parsed] == [r["label"] for r in records]
    m = read_manifest(tmp_path / "train")
    assert (
        m["kind"] == "training-set" and m["records"] == 80 and m["iaa"]["kappa"] == agreed["kappa"]
    )
    assert verify_manifest(tmp_path / "train").ok
    assert stat.S_IMODE((tmp_path / "train" / "train.jsonl").stat().st_mode) == 0o600
    printed = capsys.readouterr()
    leaked = [r["text"][h["start"] : h["end"]] for r in rows if r["text"] for h in r["hits"]]
    assert not [v for v in leaked if v in printed.out + printed.err]


@pytest.mark.parametrize("reviewers", ["a,b/../../x", "a,a", "a,x\nforged", "a,b c"])
def test_cli_export_checks_every_argument_before_writing(
    tmp_path: Path, out_dir: Path, reviewers: str, capsys
):
    """A bad --reviewers value is refused before the folder or sample.csv (text in clear) exists
    (issue 21)."""
    batch = tmp_path / "batch"
    args = ["review", "export", "--input", str(out_dir), "--output", str(batch), "--n", "20"]
    assert main([*args, "--reviewers", reviewers]) == 1
    assert not batch.exists() and not list(tmp_path.rglob("*.csv"))
    err = capsys.readouterr().err
    # one line, a newline in a name escaped
    assert "--reviewers" in err and len(err.strip().splitlines()) == 1
    assert main([*args, "--format", "csv,pdf", "--reviewers", "a"]) == 1 and not batch.exists()
    batch.write_text("not a folder")
    assert main([*args, "--reviewers", "a"]) == 1 and batch.read_text() == "not a folder"
