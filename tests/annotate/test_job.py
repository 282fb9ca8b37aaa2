"""``spcl annotate`` end to end against real OpenAI-compatible HTTP servers on loopback (the
project's ``tests/support/scripted_llm.py``, one per teacher) serving two *scripted teachers* (and a
scripted verifier) that disagree on some texts: outputs, reasons, report, kappa, resume, review
export of the rejected texts, the Spark engine, and training a screen on the result.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import cohen_kappa_score

from spcl.annotate.prompt import build_messages
from spcl.cli import main
from spcl.manifest import verify_manifest
from tests.support.annotate_teachers import (
    BY_TEXT,
    DOCS,
    EXPECTED_DROPPED,
    EXPECTED_LABELLED,
    EXPECTED_REJECTED,
    SCRIPT,
    A,
    B,
    ScriptedTeachers,
    V,
    annotate,
    document_of,
    read,
    script,
    write_input,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def server() -> Iterator[ScriptedTeachers]:
    with ScriptedTeachers(script) as teachers:
        yield teachers


def test_end_to_end_outputs_reasons_report_and_kappa(
    tmp_path: Path, server: ScriptedTeachers, caplog: pytest.LogCaptureFixture
) -> None:
    inp, out = write_input(tmp_path / "in"), tmp_path / "out"
    with caplog.at_level(logging.DEBUG):
        assert annotate(inp, out, server) == 0
    labelled = {r["id"]: r for r in read(out / "labelled.jsonl")}
    rejected = {r["id"]: r for r in read(out / "rejected.jsonl")}
    dropped = {r["id"]: r for r in read(out / "dropped.jsonl")}
    assert {i: (r["label"], r["categories"]) for i, r in labelled.items()} == EXPECTED_LABELLED
    assert {i: r["reason"] for i, r in rejected.items()} == EXPECTED_REJECTED
    broken = [i for i, r in dropped.items() if r["reason"] == "unreadable:malformed_json"]
    assert (
        len(broken) == 1
        and {i: r["reason"] for i, r in dropped.items() if i not in broken} == EXPECTED_DROPPED
    )
    assert all("text" not in r for r in dropped.values())
    # what spcl train reads, plus the votes
    from spcl.screen.train import read_records

    records = {r.id: r for r in read_records([out / "labelled.jsonl"])}
    assert records["ko-med"].text == DOCS["ko-med"] and records["ko-med"].lang == "ko"
    assert records["en-none"].lang == "en" and not records["en-none"].synthetic
    med = labelled["ko-med"]
    assert med["codes"] == ["MEDICAL", "MEDICAL_GUIDANCE"] and med["confidence"] == 0.9
    assert [(v["teacher"], v["label"], v["codes"]) for v in med["votes"]] == [
        (A, "SCPI", ["MEDICAL", "MEDICAL_GUIDANCE"]),
        (B, "SCPI", ["MEDICAL"]),
    ]
    junk = rejected["ko-junk"]["votes"][1]
    assert junk["label"] is None and junk["parse_failure"] == "fields"
    assert rejected["ja-err"]["votes"][0]["error"] == "http_400"

    report = json.loads((out / "report.json").read_text())
    c = report["counts"]
    assert (c["input_records"], c["unreadable"], c["not_candidates"], c["candidates"]) == (
        15,
        1,
        2,
        12,
    )
    assert (c["labelled"], c["rejected"], c["dropped"]) == (7, 5, 3) and report["reconciliation"][
        "ok"
    ]
    assert report["rejected_reasons"] == {r: 1 for r in EXPECTED_REJECTED.values()}
    assert report["candidates_by_lang"] == {"en": 3, "ja": 4, "ko": 5}
    assert report["labels"] == {"SCPI": 4, "RELATED": 0, "NONE": 3}
    assert report["prompt_version"] == "annotate-v1" and [
        t["name"] for t in report["teachers"]
    ] == [A, B]
    sa, sb = report["teacher_stats"][A], report["teacher_stats"][B]
    assert sa["backend_errors"] == {"http_400": 1} and sa["parse_failure_rate"] == 0.0
    assert sb["parse_failures"] == {"fields": 1} and sb["parse_failure_rate"] == round(1 / 12, 6)
    assert sb["tokens_per_document"] > 0 and sb["seconds_per_document"] > 0
    # kappa equals scikit-learn's on the votes both teachers parsed
    both = [
        r["votes"]
        for r in [*labelled.values(), *rejected.values()]
        if r["votes"][0]["label"] and r["votes"][1]["label"]
    ]
    assert report["kappa"][f"{A}|{B}"]["documents"] == len(both) == 10
    expected = cohen_kappa_score([v[0]["label"] for v in both], [v[1]["label"] for v in both])
    assert report["kappa"][f"{A}|{B}"]["label_kappa"] == pytest.approx(expected, abs=1e-6)
    for cat, entry in report["kappa"][f"{A}|{B}"]["per_category"].items():
        a = [cat in v[0]["categories"] for v in both]
        b = [cat in v[1]["categories"] for v in both]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = cohen_kappa_score(a, b, labels=[False, True])
        assert entry["kappa"] == (None if math.isnan(k) else pytest.approx(k, abs=1e-6))
    assert (out / "agreement.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert verify_manifest(out).ok and verify_manifest(out / "_work").ok
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "annotated-set" and manifest["records"] == 7
    assert set(manifest["files"]) == {
        "labelled.jsonl",
        "rejected.jsonl",
        "dropped.jsonl",
        "pending.jsonl",
        "report.json",
        "agreement.png",
    }
    assert (out / "pending.jsonl").read_text() == "" and report["counts"]["pending"] == 0
    assert oct((out / "labelled.jsonl").stat().st_mode & 0o777) == "0o600"
    # sensitive text never reaches logs or the report
    report_text = (out / "report.json").read_text()
    for text in DOCS.values():
        assert text not in caplog.text and text not in report_text
    assert all(server.asked(m, DOCS[d]) == 1 for m in (A, B) for d in SCRIPT)
    assert all(server.asked(m, DOCS[d]) == 0 for m in (A, B) for d in EXPECTED_DROPPED)


def test_rerun_skips_done_files_and_rebalances_without_asking_again(tmp_path: Path, server) -> None:
    inp, out = write_input(tmp_path / "in"), tmp_path / "out"
    assert annotate(inp, out, server) == 0
    first = (out / "labelled.jsonl").read_bytes()
    asked = server.total()
    assert annotate(inp, out, server) == 0
    assert (out / "labelled.jsonl").read_bytes() == first and server.total() == asked
    assert annotate(inp, out, server, "--positive-share", "0.6", "--seed", "3") == 0
    assert server.total() == asked  # balancing re-reads the parts; no teacher is asked
    report = json.loads((out / "report.json").read_text())
    assert report["counts"]["balanced_out"] == 1 and report["labels"] == {
        "SCPI": 4,
        "RELATED": 0,
        "NONE": 2,
    }
    assert report["reconciliation"]["ok"] and report["run"]["files_skipped"] == 3
    balanced = [r for r in read(out / "dropped.jsonl") if r["reason"] == "balanced_out"]
    assert len(balanced) == 1 and balanced[0]["label"] == "NONE"
    from spcl.review.sample import hash_key

    nones = ["ko-none2", "ja-none", "en-none"]
    # the largest hashed id goes
    assert balanced[0]["id"] == max(nones, key=lambda i: hash_key(3, i))
    # other teachers on the same output folder are refused
    rc = main(
        [
            "annotate",
            "--input",
            str(inp),
            "--output",
            str(out),
            "--teacher",
            server.spec(A),
            "--teacher",
            server.spec(V),
        ]
    )
    assert rc == 1


def test_server_going_away_stops_the_job_and_a_rerun_finishes_exactly_once(
    tmp_path: Path, server, capsys
) -> None:
    inp, out = write_input(tmp_path / "in"), tmp_path / "out"
    server.down_after = 10  # a.jsonl has 5 candidates × 2 teachers; then the server goes away
    assert annotate(inp, out, server) == 1
    assert "unreachable" in capsys.readouterr().err
    assert len(list((out / "_work" / "done").glob("*.json"))) == 1
    server.down_after = None
    assert annotate(inp, out, server) == 0
    ids = [
        r["id"] for name in ("labelled", "rejected", "dropped") for r in read(out / f"{name}.jsonl")
    ]
    assert len(ids) == len(set(ids)) == 15
    # a.jsonl, committed before the server went away
    first_file = [i for i in SCRIPT if i.startswith("ko")]
    # never asked again
    assert all(server.asked(m, DOCS[i]) == 1 for m in (A, B) for i in first_file)
    assert all(server.asked(m, DOCS[i]) <= 2 for m in (A, B) for i in SCRIPT)


def test_verifier_moves_its_disagreements_to_rejected(tmp_path: Path, server) -> None:
    inp, out = write_input(tmp_path / "in"), tmp_path / "out"
    assert annotate(inp, out, server, "--verifier", server.spec(V)) == 0
    rejected = {r["id"]: r for r in read(out / "rejected.jsonl")}
    assert rejected["ko-dis"]["reason"] == "verifier_disagreement"
    assert rejected["ko-dis"]["verifier"]["label"] == "RELATED"
    report = json.loads((out / "report.json").read_text())
    assert (
        report["counts"]["verifier_rejected"] == 1 and report["counts"]["agreed_by_teachers"] == 7
    )
    assert report["verifier_stats"]["documents"] == 7  # only the kept texts are verified
    assert sum(server.asked(V, t) for t in DOCS.values()) == 7


def test_candidates_all_and_bad_usage(tmp_path: Path, server, capsys) -> None:
    inp = write_input(tmp_path / "in")
    script_all = dict(
        SCRIPT,
        **{
            "no-person": {A: (200, "NONE\t-\t1"), B: (200, "NONE\t-\t1")},
            "no-person-ja": {A: (200, "NONE\t-\t1"), B: (200, "NONE\t-\t0.5")},
        },
    )
    server.script = lambda model, doc: (
        script_all[BY_TEXT[doc]].get(model) or script_all[BY_TEXT[doc]][A]
    )
    assert annotate(inp, tmp_path / "all", server, "--candidates", "all") == 0
    report = json.loads((tmp_path / "all" / "report.json").read_text())
    assert report["counts"]["candidates"] == 14 and report["counts"]["not_candidates"] == 0
    assert report["rejected_reasons"]["low_confidence"] == 2
    assert (
        main(
            [
                "annotate",
                "--input",
                str(inp),
                "--output",
                str(tmp_path / "x"),
                "--teacher",
                "openai:m@x",
            ]
        )
        == 2
    )
    assert (
        main(
            [
                "annotate",
                "--input",
                str(inp),
                "--output",
                str(tmp_path / "x"),
                "--teacher",
                server.spec(A),
            ]
        )
        == 2
    )  # one teacher is not enough
    rc = main(
        [
            "annotate",
            "--input",
            str(inp),
            "--output",
            str(tmp_path / "x"),
            "--teacher",
            "openai:m@http://127.0.0.1:9/v1",
            "--teacher",
            "openai:n@http://127.0.0.1:9/v1",
            "--retries",
            "0",
        ]
    )
    assert rc == 1 and "cannot reach the OpenAI-compatible endpoint" in capsys.readouterr().err
    assert not (tmp_path / "x" / "labelled.jsonl").exists()


def test_review_export_of_the_rejected_texts(tmp_path: Path, server, capsys) -> None:
    inp, out = write_input(tmp_path / "in"), tmp_path / "out"
    assert annotate(inp, out, server) == 0
    rev = tmp_path / "review"
    assert (
        main(
            [
                "review",
                "export",
                "--input",
                str(out),
                "--output",
                str(rev),
                "--what",
                "rejected",
                "--format",
                "csv,jsonl,html",
                "--reviewers",
                "a,b",
            ]
        )
        == 0
    )
    rows = {r["id"]: r for r in read(rev / "sample.jsonl")}
    assert set(rows) == set(EXPECTED_REJECTED)
    assert (
        rows["ja-crime"]["decision"] == "rejected" and rows["ja-crime"]["text"] == DOCS["ja-crime"]
    )
    assert rows["ja-crime"]["reasons"] == [
        "label_disagreement",
        f"vote:{A}=SCPI:CRIME:0.9",
        f"vote:{B}=RELATED:CRIME:0.9",
    ]
    assert rows["ja-err"]["reasons"][1] == f"vote:{A}=error:http_400"
    from spcl.review.reviews import read_reviews

    assert set(read_reviews(rev / "reviewer-a.csv")) == set(EXPECTED_REJECTED)
    assert verify_manifest(rev).ok
    # people decide: both reviewers label every disputed text, then adjudicate and make training
    # data
    for name in ("a", "b"):
        path = rev / f"reviewer-{name}.csv"
        table = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
        for row in table:
            row["label"] = "SCPI" if row["id"] in ("ja-crime", "ja-lgbt") else "NONE"
            row["categories"] = {"ja-crime": "CRIME", "ja-lgbt": "OTHER"}.get(row["id"], "")
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(table[0]), lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(table)
        path.write_text("\ufeff" + buf.getvalue(), encoding="utf-8")
    assert (
        main(["review", "adjudicate", str(rev / "reviewer-a.csv"), str(rev / "reviewer-b.csv")])
        == 0
    )
    assert (
        main(
            [
                "review",
                "to-train",
                str(rev / "adjudicated.csv"),
                "--output",
                str(tmp_path / "reviewed"),
            ]
        )
        == 0
    )
    from spcl.screen.train import read_records

    reviewed = {r.id: r for r in read_records([tmp_path / "reviewed" / "train.jsonl"])}
    assert set(reviewed) == set(EXPECTED_REJECTED) and reviewed["ja-crime"].categories == ("CRIME",)
    assert reviewed["ja-crime"].text == DOCS["ja-crime"] and reviewed["en-rel"].label == "NONE"
    small = tmp_path / "review-small"
    assert (
        main(
            [
                "review",
                "export",
                "--input",
                str(out),
                "--output",
                str(small),
                "--what",
                "rejected",
                "--n",
                "2",
                "--strata",
                "decision",
                "--format",
                "jsonl",
            ]
        )
        == 0
    )
    again = tmp_path / "review-small-2"
    assert (
        main(
            [
                "review",
                "export",
                "--input",
                str(out),
                "--output",
                str(again),
                "--what",
                "rejected",
                "--n",
                "2",
                "--strata",
                "decision",
                "--format",
                "jsonl",
            ]
        )
        == 0
    )
    assert len(read(small / "sample.jsonl")) == 2
    assert (small / "sample.jsonl").read_bytes() == (again / "sample.jsonl").read_bytes()
    assert (
        main(
            [
                "review",
                "export",
                "--input",
                str(inp),
                "--output",
                str(tmp_path / "r3"),
                "--what",
                "rejected",
            ]
        )
        == 1
    )


@pytest.mark.slow
def test_spark_engine_matches_the_python_engine(tmp_path: Path, server) -> None:
    inp = write_input(tmp_path / "in")
    assert annotate(inp, tmp_path / "plain", server, "--positive-share", "0.6") == 0
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "jobs" / "annotate.py"),
            "--input",
            str(inp),
            "--output",
            str(tmp_path / "spark"),
            "--teacher",
            server.spec(A),
            "--teacher",
            server.spec(B),
            "--retries",
            "0",
            "--positive-share",
            "0.6",
            "--master",
            "local[2]",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((tmp_path / "spark" / "report.json").read_text())
    assert report["run"]["engine"] == "spark" and report["run"]["files_processed"] == 3
    for name in ("labelled.jsonl", "rejected.jsonl", "dropped.jsonl"):
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()


@pytest.mark.slow
def test_annotated_output_trains_a_screen(tmp_path: Path, root: Path) -> None:
    """Real labelled sentences (scpi-real-v1) as the 'crawl sample'; scripted teachers answer from
    the gold label (teacher B flips every 9th to NONE): the labelled output trains a screen with
    ``spcl train``."""
    from tests.support.paths import SHARED_DATA

    if not SHARED_DATA.is_file():
        pytest.skip("../shared/data/scpi-real-v1 is not on this machine")
    from spcl.text import normalize

    rows = [json.loads(line) for line in SHARED_DATA.read_text().splitlines()]
    pick = (
        [r for r in rows if r["label"] == "SCPI"][:60]
        + [r for r in rows if r["label"] == "RELATED"][:30]
        + [r for r in rows if r["label"] == "NONE"][:90]
    )
    code = {
        "MEDICAL": "MEDICAL",
        "CRIME": "CRIMINAL_PROCEDURE",
        "DISABILITY": "DISABILITY",
        "OTHER": "CREED",
    }
    gold = {normalize(r["text"]): (k, r) for k, r in enumerate(pick)}

    def gold_script(model: str, doc: str) -> tuple[int, str]:
        k, r = gold[doc]
        if model == B and k % 9 == 0:
            return 200, "NONE\t-\t0.9"
        codes = ",".join(code[c] for c in r["categories"]) or "CREED"
        return 200, "NONE\t-\t0.9" if r["label"] == "NONE" else f"{r['label']}\t{codes}\t0.9"

    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table(
            {
                "id": [r["id"] for r in pick],
                "text": [r["text"] for r in pick],
                "lang": [r["lang"] for r in pick],
            }
        ),
        tmp_path / "in" / "sample.parquet",
    )
    with ScriptedTeachers(gold_script, names=(A, B)) as teachers:
        assert annotate(tmp_path / "in", tmp_path / "ann", teachers, "--candidates", "all") == 0
    report = json.loads((tmp_path / "ann" / "report.json").read_text())
    assert (
        report["reconciliation"]["ok"]
        and report["counts"]["rejected"]
        == report["rejected_reasons"].get("label_disagreement", 0)
        > 0
    )
    assert (
        main(
            [
                "train",
                "--data",
                str(tmp_path / "ann" / "labelled.jsonl"),
                "--output",
                str(tmp_path / "model"),
                "--cv-folds",
                "2",
                "--target-recall",
                "0.9",
            ]
        )
        == 0
    )
    # without cross-validation (--cv-folds 0) training still works (it used to divide by zero)
    assert (
        main(
            [
                "train",
                "--data",
                str(tmp_path / "ann" / "labelled.jsonl"),
                "--output",
                str(tmp_path / "model0"),
                "--cv-folds",
                "0",
            ]
        )
        == 0
    )
    assert (tmp_path / "model0" / "model_card.json").exists()
    from spcl.screen import load_screen

    screen = load_screen(tmp_path / "model")
    card = json.loads((tmp_path / "model" / "model_card.json").read_text())
    assert card["training_data"][0]["manifest"]["kind"] == "annotated-set"
    res = screen.predict([r["text"] for r in pick], langs=[r["lang"] for r in pick])
    positives = [i for i, r in enumerate(pick) if r["label"] == "SCPI"]
    assert res.flag[positives].mean() >= 0.8  # it learned the labels it was given


def test_a_changed_input_file_is_annotated_again_not_skipped(tmp_path: Path, server) -> None:
    inp, out = write_input(tmp_path / "in"), tmp_path / "out"
    assert annotate(inp, out, server) == 0
    before = json.loads((out / "report.json").read_text())["counts"]
    # a new record
    extra = json.dumps({"id": "ja-late", "text": DOCS["ja-crime"]}, ensure_ascii=False)
    # the same name, new content
    (inp / "b.jsonl").write_text((inp / "b.jsonl").read_text() + extra + "\n")
    assert annotate(inp, out, server) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["files_processed"] == 1 and report["reconciliation"]["ok"]
    assert report["counts"]["input_records"] == before["input_records"] + 1


def test_an_output_folder_of_another_input_is_refused(tmp_path: Path, server) -> None:
    first, out = write_input(tmp_path / "in"), tmp_path / "out"
    assert annotate(first, out, server) == 0
    before = (out / "labelled.jsonl").read_bytes()
    other = write_input(tmp_path / "other")  # the same file names, another folder
    extra = json.dumps({"id": "ja-other", "text": DOCS["ja-crime"]}, ensure_ascii=False)
    (other / "b.jsonl").write_text((other / "b.jsonl").read_text() + extra + "\n")
    assert annotate(other, out, server) != 0
    assert (out / "labelled.jsonl").read_bytes() == before  # the first input's labels are kept


def _outage_input(folder: Path) -> tuple[Path, dict[str, str]]:
    """100 records in two files (an invented person per text): ``ok-*`` in a.jsonl, ``down-*`` in
    b.jsonl."""
    folder.mkdir(parents=True)
    texts = {
        f"{'ok' if i < 40 else 'down'}-{i:03d}": f"김가상{i}씨는 지난달 폐암 진단을 받았다 ({i})."
        for i in range(100)
    }
    for name, prefix in (("a.jsonl", "ok"), ("b.jsonl", "down")):
        (folder / name).write_text(
            "".join(
                json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n"
                for i, t in texts.items()
                if i.startswith(prefix)
            )
        )
    return folder, texts


def test_a_503_outage_leaves_records_pending_exit_3_and_a_rerun_asks_for_exactly_those(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 21: teacher B answers 503 (with ``Retry-After: 0``) for every b.jsonl text while it is
    down. The client retries each request ``--retries`` times; what still fails is *pending* — not
    rejected, exit 3 — and once B recovers the same command asks both teachers again for exactly the
    60 pending records."""
    inp, texts = _outage_input(tmp_path / "in")
    by_text = {build_messages(t)[0]["content"]: i for i, t in texts.items()}
    down = {"on": True}

    def script(model: str, doc: str) -> tuple[int, str]:
        doc_id = next(i for t, i in by_text.items() if document_of(t) == doc)
        if model == B and down["on"] and doc_id.startswith("down"):
            return 503, ""
        return 200, "SCPI\tMEDICAL\t0.9"

    out = tmp_path / "out"
    args = [
        "annotate",
        "--input",
        str(inp),
        "--output",
        str(out),
        "--candidates",
        "all",
        "--retries",
        "2",
        "--concurrency",
        "8",
    ]
    with ScriptedTeachers(script, names=(A, B)) as teachers:
        for s in teachers.servers.values():
            s.retry_after = "0"
        run = [*args, "--teacher", teachers.spec(A), "--teacher", teachers.spec(B)]
        with caplog.at_level(logging.DEBUG):
            assert main(run) == 3
        first = capsys.readouterr()
        assert "pending" in first.err and "rerun the same command" in first.err
        assert read(out / "rejected.jsonl") == []  # nothing rejected for good
        pending = {r["id"]: r for r in read(out / "pending.jsonl")}
        assert set(pending) == {i for i in texts if i.startswith("down")}
        assert {(r["reason"], r["error"]) for r in pending.values()} == {
            (f"backend_error:{B}", "http_503")
        }
        assert all("text" not in r for r in pending.values())
        assert {r["id"] for r in read(out / "labelled.jsonl")} == {
            i for i in texts if i.startswith("ok")
        }
        report = json.loads((out / "report.json").read_text())
        assert report["reconciliation"] == {
            "input_records": 100,
            "labelled": 40,
            "rejected": 0,
            "dropped": 0,
            "pending": 60,
            "ok": True,
        }
        assert report["pending_reasons"] == {f"backend_error:{B}": 60}
        # one try + 2 retries, bounded
        assert all(teachers.asked(B, texts[i]) == 3 for i in pending)
        assert all(teachers.asked(A, texts[i]) == 1 for i in texts)
        # a rerun while B is still down: the same 60 are asked again (and only they), still pending,
        # still 3
        assert main(run) == 3
        assert all(teachers.asked(A, texts[i]) == (2 if i in pending else 1) for i in texts)
        # as if a retry was killed after writing the pending part only: the 30 records in no part
        # are asked too
        part = next((out / "_work" / "parts").glob("b-*.pending.jsonl"))
        part.write_text("".join(line + "\n" for line in part.read_text().splitlines()[:30]))
        # B recovers: the rerun asks for exactly the pending records and finishes them
        down["on"] = False
        assert main(run) == 0
        assert all(teachers.asked(A, texts[i]) == (3 if i in pending else 1) for i in texts)
        assert all(teachers.asked(B, texts[i]) == (7 if i in pending else 1) for i in texts)
        asked = teachers.total()
        assert main(run) == 0 and teachers.total() == asked  # finished: nothing is asked again
    last = capsys.readouterr()
    labelled = read(out / "labelled.jsonl")
    assert sorted(r["id"] for r in labelled) == sorted(texts) and read(out / "pending.jsonl") == []
    report = json.loads((out / "report.json").read_text())
    assert (
        report["reconciliation"]["ok"]
        and report["counts"]["pending"] == 0
        and report["counts"]["labelled"] == 100
    )
    assert report["counts"]["input_records"] == 100 and report["run"]["files_skipped"] == 2
    ids = [
        r["id"]
        for name in ("labelled", "rejected", "dropped", "pending")
        for r in read(out / f"{name}.jsonl")
    ]
    assert sorted(ids) == sorted(texts)  # every input record in exactly one output
    logs = (
        caplog.text
        + first.out
        + first.err
        + last.out
        + last.err
        + (out / "report.json").read_text()
    )
    assert not [t for t in texts.values() if t in logs] and "김가상" not in logs


def test_a_transient_verifier_failure_is_pending_a_permanent_one_is_rejected() -> None:
    from spcl.annotate.agreement import TeacherVote
    from spcl.annotate.runner import transient_failure

    ok = TeacherVote.from_output(A, "SCPI\tMEDICAL\t0.9", None)
    assert transient_failure([ok, ok], TeacherVote(V, error="timeout")) == TeacherVote(
        V, error="timeout"
    )
    assert transient_failure([ok, TeacherVote(B, error="http_429")], None).teacher == B
    assert (
        transient_failure(
            [ok, TeacherVote(B, error="http_400")], TeacherVote(V, error="output_truncated")
        )
        is None
    )
