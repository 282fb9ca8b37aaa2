"""The masking evaluator (issue 4 §5) and the oracle run over all 2,200 synthetic documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import spcl.evaluate.masking as em
from spcl.cli import main
from spcl.evaluate import EvalError, evaluate_masking
from spcl.extract import parse_extraction
from spcl.extract.prompt import FEW_SHOT
from spcl.mask import MaskResult
from spcl.synth.pii import SPLITS, generate

SRC1 = "김가상 고객 010-0000-1234, 김 가 상 님"
SRC2 = "Mail kim1@mailbox.com or call (201) 555-0123."


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "gold.jsonl",
        [
            {
                "id": "d1",
                "source_text": SRC1,
                "entities": [
                    {"type": "PERSON", "original": "김가상"},
                    {"type": "PHONE", "original": "010-0000-1234"},
                ],
            },
            {
                "id": "d2",
                "source_text": SRC2,
                "entities": [
                    {"type": "email", "original": " kim1@mailbox.com "},
                    {"type": "PHONE", "original": "(201) 555-0123"},
                ],
            },
            {"id": "d3", "source_text": "대표번호 1588-0000", "entities": []},
        ],
    )


@pytest.fixture(scope="module")
def pii_all(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pii")
    generate(out, seed=42)
    rows = [
        json.loads(line)
        for name, _, _ in SPLITS
        for line in (out / f"{name}.jsonl").open(encoding="utf-8")
    ]
    return _write(out / "all.jsonl", rows)


def test_oracle_run_over_all_documents(pii_all: Path, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in pii_all.open(encoding="utf-8")]
    assert len(rows) == 2200
    pred = _write(tmp_path / "pred.jsonl", [{"id": r["id"], "raw": r["target_tsv"]} for r in rows])
    m = evaluate_masking(pii_all, pred)
    assert m["entity"]["f1"] == 1.0 and m["entity"]["fn"] == 0 and m["entity"]["fp"] == 0
    assert all(v["f1"] == 1.0 for v in m["per_type"].values()) and len(m["per_type"]) == 9
    assert m["documents"]["total"] == 2200 and m["documents"]["leak_rate"] == 0.0
    assert m["entities"]["leak_rate"] == 0.0 and m["entities"]["gold"] > 8000
    assert (
        m["entities"]["over_redaction_rate"] == 0.0 and m["entities"]["hallucination_rate"] == 0.0
    )
    assert m["parse"]["success_rate"] == 1.0
    assert (
        m["tokenization"]["deterministic_rate"] == 1.0
        and m["tokenization"]["round_trip_rate"] == 1.0
    )


def test_hand_computed_metrics(gold: Path, tmp_path: Path) -> None:
    pred = _write(
        tmp_path / "pred.jsonl",
        [
            # d1: PERSON right; PHONE missed -> its occurrence leaks; one hallucinated row; one FP
            # (REL 고객)
            {"id": "d1", "raw": "PERSON\t김가상\nPERSON\t김가상\nREL\t고객\nACCOUNT\talias123456"},
            # d2: candidates form, everything right
            {
                "id": "d2",
                "candidates": [["EMAIL", "kim1@mailbox.com"], ["PHONE", "(201) 555-0123"]],
                "parse_success": True,
            },
            # d3: nothing, nothing expected
            {"id": "d3", "raw": ""},
        ],
    )
    m = evaluate_masking(gold, pred)
    assert (m["entity"]["tp"], m["entity"]["fp"], m["entity"]["fn"]) == (3, 1, 1)
    assert (
        m["entity"]["precision"] == 0.75
        and m["entity"]["recall"] == 0.75
        and m["entity"]["f1"] == 0.75
    )
    assert m["per_type"]["PERSON"]["f1"] == 1.0 and m["per_type"]["REL"]["precision"] == 0.0
    assert m["per_type"]["PHONE"] == {
        "tp": 1,
        "fp": 0,
        "fn": 1,
        "precision": 1.0,
        "recall": 0.5,
        "f1": 2 / 3,
    }
    # seed 000: leaked documents over ALL documents (1 of 3); the with-gold rate is kept under its
    # own name
    assert m["documents"] == {
        "total": 3,
        "with_gold": 2,
        "leaked": 1,
        "leak_rate": pytest.approx(1 / 3),
        "leak_rate_with_gold": 0.5,
        "missing_predictions": 0,
    }
    assert (
        m["entities"]["gold"] == 4
        and m["entities"]["leaked"] == 1
        and m["entities"]["leak_rate"] == 0.25
    )
    assert m["entities"]["over_redaction_rate"] == 0.25
    assert m["entities"]["rows_checked"] == 5 and m["entities"]["hallucinated"] == 1
    assert m["entities"]["hallucination_rate"] == 0.2
    assert m["parse"]["success_rate"] == 1.0


def test_partial_coverage_counts_as_a_leak(gold: Path, tmp_path: Path) -> None:
    # "김가" covers only part of "김가상" (and of its variant "김 가 상"): both documents' PERSON
    # leaks.
    pred = _write(
        tmp_path / "p.jsonl",
        [{"id": "d1", "candidates": [["PERSON", "김가"], ["PHONE", "010-0000-1234"]]}],
    )
    m = evaluate_masking(gold, pred)
    assert m["entities"]["leaked"] == 1 + 2  # d1 PERSON; d2 has no prediction (both entities)
    # the variant occurrence "김 가 상" must be covered too: masking only the literal surface is not
    # enough
    pred = _write(
        tmp_path / "p2.jsonl",
        [{"id": "d1", "candidates": [["PERSON", "김가상"], ["PHONE", "010-0000-1234"]]}],
    )
    assert evaluate_masking(gold, pred)["documents"]["leaked"] == 1  # only d2 (missing prediction)


def test_failed_parse_excludes_candidates_and_missing_prediction_fails(
    gold: Path, tmp_path: Path
) -> None:
    pred = _write(
        tmp_path / "pred.jsonl",
        [
            {
                "id": "d1",
                "candidates": [["PERSON", "김가상"], ["PHONE", "010-0000-1234"]],
                "parse_success": False,
            },
            {"id": "d3", "raw": "Sorry, I can't."},
        ],
    )
    m = evaluate_masking(gold, pred)
    assert m["entity"]["tp"] == 0 and m["entity"]["f1"] == 0.0 and m["entity"]["precision"] == 0.0
    assert m["parse"] == {"documents": 3, "success": 0, "success_rate": 0.0}
    assert (
        m["documents"]["missing_predictions"] == 1 and m["documents"]["leak_rate_with_gold"] == 1.0
    )
    # over all three documents (one has no gold)
    assert m["documents"]["leak_rate"] == pytest.approx(2 / 3)


def test_zero_denominators_give_zero(tmp_path: Path) -> None:
    g = _write(tmp_path / "g.jsonl", [{"id": "n", "source_text": "nothing here", "entities": []}])
    p = _write(tmp_path / "p.jsonl", [{"id": "n", "raw": ""}])
    m = evaluate_masking(g, p)
    assert m["entity"] == {"tp": 0, "fp": 0, "fn": 0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert m["documents"]["leak_rate"] == 0.0 and m["entities"]["hallucination_rate"] == 0.0
    assert m["tokenization"]["round_trip_rate"] == 1.0


def test_determinism_and_round_trip_metrics_can_fail(
    gold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = em.mask_text

    def order_dependent(source: str, candidates: list[tuple[str, str]]) -> MaskResult:
        r = real(source, candidates)
        tag = candidates[0][1] if candidates else ""
        return MaskResult(r.masked_text + tag, r.mapping, r.spans)

    monkeypatch.setattr(em, "mask_text", order_dependent)
    pred = _write(
        tmp_path / "p.jsonl", [{"id": "d1", "raw": "PERSON\t김가상\nPHONE\t010-0000-1234"}]
    )
    m = evaluate_masking(gold, pred)
    assert m["tokenization"]["deterministic"] == 2 and m["tokenization"]["round_trip"] == 2


@pytest.mark.parametrize(
    ("gold_rows", "pred_rows", "message"),
    [
        ([{"id": "a", "source_text": "김가상", "entities": []}] * 2, [], "duplicate id 'a'"),
        (
            [{"id": "a", "source_text": "김가상", "entities": []}],
            [{"id": "a", "raw": ""}] * 2,
            "duplicate id 'a'",
        ),
        (
            [{"id": "a", "source_text": "김가상", "entities": []}],
            [{"id": "zz", "raw": ""}],
            "id 'zz' is not in gold",
        ),
        (
            [
                {
                    "id": "a",
                    "source_text": "김가상",
                    "entities": [{"type": "PERSON", "original": "박비밀"}],
                }
            ],
            [],
            "entity 0 \\(PERSON\\): value does not occur",
        ),
        (
            [
                {
                    "id": "a",
                    "source_text": "x 91234567",
                    "entities": [{"type": "ACCOUNT", "original": "1234567"}],
                }
            ],
            [],
            "value does not occur",
        ),
    ],
)
def test_rejections_never_show_values(
    tmp_path: Path, gold_rows: list, pred_rows: list, message: str
) -> None:
    g, p = _write(tmp_path / "g.jsonl", gold_rows), _write(tmp_path / "p.jsonl", pred_rows)
    with pytest.raises(EvalError, match=message) as err:
        evaluate_masking(g, p)
    for secret in ("김가상", "박비밀", "1234567"):
        assert secret not in str(err.value)


def test_cli_prints_and_writes_json(
    gold: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pred = _write(
        tmp_path / "p.jsonl", [{"id": "d1", "raw": "PERSON\t김가상\nPHONE\t010-0000-1234"}]
    )
    out = tmp_path / "m" / "metrics.json"
    assert (
        main(["eval", "masking", "--gold", str(gold), "--pred", str(pred), "--output", str(out)])
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text()) and printed["entity"]["tp"] == 2
    bad = _write(tmp_path / "bad.jsonl", [{"id": "nope", "raw": "PERSON\t김가상"}])
    assert main(["eval", "masking", "--gold", str(gold), "--pred", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "not in gold" in err and "김가상" not in err


def test_prompt_examples_obey_the_contract() -> None:
    for doc, answer in FEW_SHOT:
        r = parse_extraction(answer, doc)
        assert (
            r.parse_success
            and not r.hallucinated_rows
            and len(r.candidates) == len(answer.splitlines())
        )
