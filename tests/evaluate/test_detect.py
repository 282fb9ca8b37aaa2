"""``spcl eval detect`` and the evaluation-set builder (issue 12)."""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path

import pytest
from stdnum import luhn
from stdnum.jp import in_ as mynumber_oracle
from stdnum.kr import rrn as rrn_oracle

from spcl.cli import main
from spcl.evaluate.detect import DetectEvalError, evaluate_detect, parse_record, read_gold
from spcl.manifest import verify_manifest
from tools.datasets.detect_set import (
    DOB_TEMPLATES,
    NEGATIVES,
    OBFUSCATIONS,
    TEMPLATES,
    card,
    gold_records,
    is_carrier,
    mynumber,
    negative_records,
    rrn,
    troff_text,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "detect-eval"

RECORDS = [
    {
        "id": "g1",
        "lang": "ko",
        "text": "연락처 010-1234-5678 입니다",
        "spans": [{"type": "PHONE", "start": 4, "end": 17}],
    },
    # found by a hit of another type only: a typed miss, an any-type find, and a wrong hit
    {
        "id": "g2",
        "lang": "en",
        "text": "DOB: 1990-01-02",
        "spans": [{"type": "PHONE", "start": 5, "end": 15}],
    },
    # a gold span the detectors miss entirely
    {
        "id": "g3",
        "lang": "en",
        "text": "call me maybe",
        "spans": [{"type": "PHONE", "start": 0, "end": 4}],
    },
    {
        "id": "n1",
        "lang": "en",
        "kind": "negative",
        "text": "version 2.10.3",
        "tags": ["family:version"],
    },
    {
        "id": "n2",
        "lang": "en",
        "kind": "negative",
        "text": "mail kim@mailbox.com",
        "tags": ["family:x"],
    },
    {"id": "p1", "lang": "ko", "kind": "prose", "text": "가" * 100 + " 010-1234-5678 a@b.com"},
]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def test_report_counts_recall_precision_negatives_and_prose(tmp_path: Path) -> None:
    report = evaluate_detect(read_gold(_write(tmp_path / "g.jsonl", RECORDS)))
    r = report["recall"]
    assert (r["n"], r["overall"], r["overall_any_type"]) == (3, round(1 / 3, 4), round(2 / 3, 4))
    assert r["by_lang"]["ko"]["recall"] == 1.0 and r["by_lang"]["en"]["recall"] == 0.0
    assert report["precision"]["by_type"] == {
        "DOB": {"n": 1, "ok": 0, "precision": 0.0},
        "PHONE": {"n": 1, "ok": 1, "precision": 1.0},
    }
    neg = report["negatives"]
    assert (neg["n"], neg["hit"], neg["rate"], neg["ids_hit"]) == (2, 1, 0.5, ["n2"])
    assert neg["by_tag"]["family:version"]["rate"] == 0.0 and neg["hit_types"] == {"EMAIL": 1}
    prose = report["prose"]
    size = len(RECORDS[-1]["text"].encode()) / 1e6
    assert prose["hits"] == {"EMAIL": 1, "PHONE": 1}
    assert prose["non_email_hits_per_mb"] == round(1 / size, 3)
    assert [m["id"] for m in report["misses"]] == ["g2", "g3"]
    assert report["goals"]["recall_overall"]["met"] is False
    # ids and counts, never values
    assert "010-1234-5678" not in json.dumps(report, ensure_ascii=False)


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"id": "x"}, "string 'text'"),
        ({"text": "abc", "kind": "other"}, "kind must be"),
        ({"text": "abc", "spans": [{"type": "PHONE", "start": 2, "end": 9}]}, "outside the text"),
        ({"text": "abc", "spans": [{"type": "NAME", "start": 0, "end": 1}]}, "unknown span type"),
        ({"text": "abc", "spans": [{"type": "PHONE"}]}, "type, start and end"),
        (
            {"text": "abc", "kind": "negative", "spans": [{"type": "PHONE", "start": 0, "end": 1}]},
            "no gold spans",
        ),
    ],
)
def test_bad_records_are_refused_by_line(obj: dict, message: str) -> None:
    with pytest.raises(DetectEvalError, match=message):
        parse_record(obj, "f.jsonl:3")


def test_cli_prints_summary_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = _write(tmp_path / "g.jsonl", RECORDS)
    out = tmp_path / "r" / "report.json"
    assert main(["eval", "detect", "--gold", str(gold), "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "typed recall 0.3333" in printed and "hard negatives hit: 1/2" in printed
    assert json.loads(out.read_text())["recall"]["n"] == 3
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    assert main(["eval", "detect", "--gold", str(bad)]) == 2
    assert "bad.jsonl:1: not JSON" in capsys.readouterr().err


def test_generated_identifiers_pass_the_independent_oracle() -> None:
    rng = random.Random(5)
    for _ in range(300):
        assert rrn_oracle.is_valid(rrn(rng))
        assert mynumber_oracle.is_valid(mynumber(rng))
        assert luhn.is_valid(card(rng))


def test_builder_places_each_value_at_its_gold_span() -> None:
    carriers = {
        "ja": ["これは日本語の文です。", "設定を変更します。"],
        "ko": ["이것은 한국어 문장입니다.", "설정을 바꿉니다."],
        "en": ["This is a sentence.", "Change the settings."],
    }
    gold = gold_records(carriers, seed=3, per_cell=4)
    assert len(gold) == 4 * (len(TEMPLATES) + 3)
    for rec in gold:
        (span,) = rec["spans"]
        value = rec["text"][span["start"] : span["end"]]
        assert value and value.strip() == value and unicodedata.is_normalized("NFC", rec["text"])
        type_, lang, index = next(t for t in rec["tags"] if t.startswith("template:"))[9:].split(
            "/"
        )
        templates = DOB_TEMPLATES[lang] if type_ == "DOB" else TEMPLATES[(type_, lang)]
        head, tail = templates[int(index)].split("{v}")
        if "{" not in head:
            assert rec["text"][: span["start"]].endswith(head)
        if "{" not in tail:
            assert rec["text"][span["end"] :].startswith(tail)
    negatives = negative_records(carriers, seed=3, per_cell=2)
    assert len(negatives) == 2 * sum(len(t) for _, t in NEGATIVES.values())
    # a pure function of the inputs and seed
    assert gold_records(carriers, seed=3, per_cell=4) == gold


def test_obfuscations_keep_the_visible_characters() -> None:
    rng = random.Random(0)
    for name, hide in OBFUSCATIONS.items():
        hidden = hide("010-1234-5678", rng)
        visible = "".join(
            c
            for c in unicodedata.normalize("NFKC", hidden)
            if unicodedata.category(c)[0] not in "CM"
        )
        assert visible.replace(" ", "-") == "010-1234-5678", name


def test_text_helpers() -> None:
    assert (
        troff_text('.TH LS 1\n.SH NAME\n\\fBls\\fR \\- list\n.B "bold text"\n')
        == "ls - list bold text"
    )
    assert is_carrier("A plain sentence from 1999.")
    assert not is_carrier("mail me at a@b.c") and not is_carrier("call 555-12345")


def test_committed_set_is_intact_and_meets_the_goals() -> None:
    verify_manifest(DATA)
    report = evaluate_detect(
        rec for name in ("gold.jsonl", "prose.jsonl") for rec in read_gold(DATA / name)
    )
    assert report["records"] == {"gold": 1380, "negative": 1000, "prose": 1806}
    assert all(g["met"] for g in report["goals"].values()), report["goals"]


def test_committed_issue25_set_meets_the_goals() -> None:
    from stdnum import iban as iban_oracle
    from stdnum.us import ssn as ssn_oracle

    verify_manifest(DATA)
    records = list(read_gold(DATA / "ids.jsonl"))
    report = evaluate_detect(records)
    assert report["records"] == {"gold": 880, "negative": 640}
    assert set(report["recall"]["by_type"]) == {
        "SSN",
        "ITIN",
        "IBAN",
        "IP",
        "CREDENTIAL",
        "PASSPORT",
        "DRIVER_LICENSE",
        "ADDRESS",
    }
    assert all(row["recall"] >= 0.95 for row in report["recall"]["by_type"].values()), report[
        "recall"
    ]["by_type"]
    assert report["negatives"]["rate"] <= 0.02
    # the planted values are valid by the independent oracle
    for rec in records:
        for span in rec.spans:
            value = rec.text[span.start : span.end]
            if span.type == "SSN":
                assert ssn_oracle.is_valid(value.replace(" ", "-") if " " in value else value)
            if span.type == "IBAN":
                assert iban_oracle.is_valid(value, check_country=False)


def test_issue25_builder_is_a_pure_function_of_the_seed() -> None:
    from tools.datasets.ids_set import ids_records

    def place(lang: str, head: str, value: str, tail: str, rng: random.Random) -> tuple[str, int]:
        return f"A {head}{value}{tail} B", 2 + len(head)

    a, b = ids_records(place, 3, 2, 1), ids_records(place, 3, 2, 1)
    assert a == b and a != ids_records(place, 4, 2, 1)
    gold = [r for r in a if r["kind"] == "gold"]
    assert len(gold) == 2 * 22 and all(r["spans"] for r in gold)  # 22 (type, language) cells
