"""Issue 10, item 7: the TPS-style utility score with a local causal LM (a tiny random-weight model
here: the plumbing and the bounds are checked, not the values, which need a real model)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.generalize.utility import LMScorer, UtilityReport, score_document, similarity

KEY = bytes(range(32))


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> LMScorer:
    from spcl.bench.tiny_model import write_tiny_model

    return LMScorer(write_tiny_model(tmp_path_factory.mktemp("tiny") / "m", seed=3), device="cpu")


def test_similarity_bounds() -> None:
    a = np.array([1.0, 0.0])
    assert (
        similarity(a, a) == 1.0 and similarity(a, -a) == 0.0 and similarity(a, np.zeros(2)) == 0.0
    )


def test_a_span_kept_as_is_scores_one_and_scores_stay_in_bounds(scorer: LMScorer) -> None:
    source = "Kim Minjun was born on 3 March 1991 in Busan."
    spans = [
        {"type": "PERSON", "start": 0, "end": 10, "replacement": "Kim Minjun"},
        {"type": "DOB", "start": 23, "end": 35, "replacement": "March 1991"},
    ]
    kept = UtilityReport()
    score_document(source, spans[:1], scorer, kept)
    assert kept.as_dict()["tps"] == 1.0 and kept.info_bits > 0
    report = UtilityReport()
    score_document(source, spans, scorer, report)
    out = report.as_dict()
    assert (
        0.0 <= out["tps"] <= 1.0
        and out["spans"] == 2
        and set(out["tps_by_type"]) == {"PERSON", "DOB"}
    )
    # numbers and types only
    assert "Minjun" not in json.dumps(out) and "1991" not in json.dumps(out)


def test_eval_utility_over_a_generalize_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from spcl.bench.tiny_model import write_tiny_model
    from spcl.cli import main
    from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job

    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(KEY).decode())
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table(
            {
                "id": ["a", "b"],
                "text": ["연락처 010-1234-5678, 1991년 6월 9일생", "mail kim@mailbox.com please"],
            }
        ),
        tmp_path / "in" / "p.parquet",
    )
    run_generalize_job(
        GeneralizeJobConfig(
            input=str(tmp_path / "in"), output=str(tmp_path / "gen"), vault=str(tmp_path / "v")
        )
    )
    model = write_tiny_model(tmp_path / "m", seed=1)
    rc = main(
        [
            "eval",
            "utility",
            "--generalized",
            str(tmp_path / "gen"),
            "--vault",
            str(tmp_path / "v"),
            "--model",
            str(model),
            "--output",
            str(tmp_path / "u.json"),
        ]
    )
    assert rc == 0
    report = json.loads((tmp_path / "u.json").read_text())
    assert report["documents"] == 2 and report["spans"] >= 2 and 0.0 <= report["tps"] <= 1.0
    text = capsys.readouterr().out
    assert "010-1234-5678" not in text and "kim@mailbox.com" not in text


def test_reidentify_counts_what_the_attacker_recovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scripted attacker (loopback OpenAI-compatible server) always guesses one phone number: the
    phone span is re-identified, the date span is not."""
    from spcl.cli import main
    from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job
    from tests.support.scripted_llm import MODEL_NAME, scripted_server

    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(KEY).decode())
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table(
            {"id": ["a"], "text": ["연락처 010-1234-5678, 1991년 6월 9일생입니다."], "lang": ["ko"]}
        ),
        tmp_path / "in" / "p.parquet",
    )
    run_generalize_job(
        GeneralizeJobConfig(
            input=str(tmp_path / "in"), output=str(tmp_path / "gen"), vault=str(tmp_path / "v")
        )
    )
    with scripted_server(lambda doc, attempt: "010-1234-5678\n2020년") as server:
        rc = main(
            [
                "eval",
                "reidentify",
                "--generalized",
                str(tmp_path / "gen"),
                "--vault",
                str(tmp_path / "v"),
                "--endpoint",
                server.endpoint,
                "--model",
                MODEL_NAME,
                "--output",
                str(tmp_path / "r.json"),
            ]
        )
    assert rc == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["rate_by_type"]["PHONE"] == 1.0 and report["rate_by_type"]["DOB"] == 0.0
    assert report["failed_calls"] == 0 and report["spans"] == 2
