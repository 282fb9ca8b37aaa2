from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import spcl.evaluate.screen as es
from spcl.evaluate.screen import ScreenEvalError, evaluate_screen, format_summary, read_eval_records
from spcl.screen.model import Screen, load_screen

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "screen-default"
ROWS = [
    {
        "id": "1",
        "lang": "ko",
        "label": "SCPI",
        "text": "김모(41)씨는 사기 혐의로 구속됐고 지난주 병원에 입원했다.",
    },
    {
        "id": "2",
        "lang": "ko",
        "label": "NONE",
        "text": "오늘 서울의 하늘은 맑고 기온은 어제보다 조금 높겠습니다.",
    },
    {
        "id": "3",
        "lang": "ja",
        "label": "RELATED",
        "text": "容疑者は警察に逮捕され、被害者は病院で治療を受けている。",
    },
    {
        "id": "4",
        "lang": "ja",
        "label": "NONE",
        "text": "新しい駅ビルには百貨店と映画館が入る予定だと発表した。",
    },
    {
        "id": "5",
        "lang": "ja",
        "label": "NONE",
        "text": "山田太郎は横領の罪で起訴され、懲役三年の判決を受けた。",
    },
    {
        "id": "6",
        "text": "Choose Format - Paragraph to change the spacing of the lines.",
        "origin": "man:x.1",
    },
    {
        "id": "7",
        "text": "The police arrested the suspect after the robbery downtown.",
        "origin": "sotu:1900.txt",
    },
    {
        "id": "8",
        "text": "We will build new roads and schools in every state.",
        "origin": "sotu:1901.txt",
    },
]


@pytest.fixture(scope="module")
def screen() -> Screen:
    return load_screen(MODEL)


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def _expected_flags(screen: Screen) -> np.ndarray:
    """One batch, languages as given (the unlabelled rows are English by script)."""
    return screen.predict([r["text"] for r in ROWS], [r.get("lang") or "en" for r in ROWS]).flag


def test_labelled_metrics_and_flag_rates_match_a_count_by_hand(
    tmp_path: Path, screen: Screen, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(es, "BATCH", 3)  # batches of 3 must give what one batch gives
    report = evaluate_screen(screen, read_eval_records(_write(tmp_path / "d.jsonl", ROWS)))
    flag = _expected_flags(screen)
    labels = np.array([r.get("label", "") for r in ROWS])
    pos, none = np.isin(labels, ("SCPI", "RELATED")), labels == "NONE"
    tp = int((flag & pos).sum())
    union = report["labelled_metrics"]["overall"]["union"]
    assert union["n"] == 5 and report["labelled"] == 5 and report["records"] == 8
    assert union["recall"] == round(tp / pos.sum(), 4)
    assert union["none_flag_rate"] == round(float(flag[none].mean()), 4)
    ja = report["labelled_metrics"]["per_lang"]["ja"]["union"]
    assert ja["n"] == 3 and ja["none_flag_rate"] == round(float(flag[[3, 4]].mean()), 4)
    rates = report["unlabelled_flag_rate"]["en"]
    assert rates["*"]["n"] == 3 and rates["sotu"]["n"] == 2 and rates["man"]["n"] == 1
    assert rates["sotu"]["flagged"] == int(flag[[6, 7]].sum()) and rates["*"]["flagged"] == int(
        flag[5:].sum()
    )


def test_report_and_summary_hold_no_text(tmp_path: Path, screen: Screen) -> None:
    report = evaluate_screen(screen, read_eval_records(_write(tmp_path / "d.jsonl", ROWS)))
    dumped = json.dumps(report, ensure_ascii=False) + format_summary(report)
    for row in ROWS:
        assert row["text"][:8] not in dumped


def test_goals_follow_the_issue_bar() -> None:
    def metrics(
        f1: float,
        scpi: float,
        none: float,
        ja_scpi: float,
        ko_scpi: float | None = None,
        en_none: float | None = None,
    ) -> dict:
        union = {"f1": f1, "scpi_recall": scpi, "none_flag_rate": none}
        per_lang = {"ja": {"union": {**union, "scpi_recall": ja_scpi}}}
        if ko_scpi is not None:
            per_lang["ko"] = {"union": {**union, "scpi_recall": ko_scpi}}
        if en_none is not None:
            per_lang["en"] = {
                "union": {**union, "scpi_recall": float("nan"), "none_flag_rate": en_none}
            }
        return {"overall": {"union": union}, "per_lang": per_lang}

    goals = es._goals(metrics(0.85, 0.95, 0.12, 0.95))
    assert all(g["met"] for g in goals.values()) and set(goals) == {
        "f1",
        "scpi_recall",
        "none_flagged",
        "ja_scpi_recall",
    }
    goals = es._goals(metrics(0.849, 0.96, 0.121, 0.94))
    assert [k for k, g in goals.items() if not g["met"]] == ["f1", "none_flagged", "ja_scpi_recall"]
    assert "ja_scpi_recall" not in es._goals(metrics(0.9, 0.96, 0.1, float("nan")))
    goals = es._goals(metrics(0.9, 0.96, 0.1, 0.96, ko_scpi=0.94, en_none=0.13))
    assert [k for k, g in goals.items() if not g["met"]] == ["ko_scpi_recall", "en_none_flagged"]


def test_labelled_metrics_per_source(tmp_path: Path, screen: Screen) -> None:
    rows = [{**r, "source": "wiki" if i % 2 else "news"} for i, r in enumerate(ROWS[:5])]
    report = evaluate_screen(screen, read_eval_records(_write(tmp_path / "s.jsonl", rows)))
    per_source = report["labelled_metrics"]["per_source"]
    assert (
        per_source["ko"]["news"]["union"]["n"] == 1 and per_source["ko"]["wiki"]["union"]["n"] == 1
    )
    assert (
        per_source["ja"]["news"]["union"]["n"] == 2 and per_source["ja"]["wiki"]["union"]["n"] == 1
    )
    flag = _expected_flags(screen)[:5]
    assert per_source["ja"]["news"]["union"]["none_flag_rate"] == round(float(flag[[4]].mean()), 4)
    assert any(
        line.split()[:3] == ["ja", "news", "2"] for line in format_summary(report).splitlines()
    )


def test_bad_rows_name_the_line_never_the_text(tmp_path: Path) -> None:
    secret = "홍길동의 비밀 병력"
    path = _write(tmp_path / "bad.jsonl", [ROWS[0], {"id": "x", "label": "MAYBE", "text": secret}])
    with pytest.raises(ScreenEvalError, match=r"bad.jsonl:2: label") as err:
        list(read_eval_records(path))
    assert secret not in str(err.value)
    (tmp_path / "nojson.jsonl").write_text("{not json\n")
    with pytest.raises(ScreenEvalError, match=r"nojson.jsonl:1: not valid JSON"):
        list(read_eval_records(tmp_path / "nojson.jsonl"))


def test_cli_prints_the_summary_writes_the_report_and_fails_cleanly(tmp_path: Path) -> None:
    data = _write(tmp_path / "d.jsonl", ROWS)
    out = tmp_path / "r" / "screen.json"
    cmd = [
        sys.executable,
        "-m",
        "spcl.cli",
        "eval",
        "screen",
        "--model",
        str(MODEL),
        "--data",
        str(data),
        "--output",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "goals:" in done.stdout and "unlabelled en" in done.stdout
    assert json.loads(out.read_text())["labelled"] == 5
    bad = _write(tmp_path / "bad.jsonl", [{"id": "1", "label": "NONE"}])
    done = subprocess.run(
        [*cmd[:-4], "--data", str(bad)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "bad.jsonl:1: field 'text'" in done.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["screen", "--data", "{data}", "--output", "{data}"],
        ["detect", "--gold", "{data}", "--output", "{data}"],
        ["masking", "--gold", "{other}", "--pred", "{data}", "--output", "{data}"],
        ["names", "--set", "{data}", "--output", "{data}"],
    ],
)
def test_a_report_never_overwrites_an_input(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from spcl.cli import main

    data = _write(tmp_path / "d.jsonl", ROWS)
    other = _write(tmp_path / "o.jsonl", ROWS[:1])
    before = data.read_bytes()
    argv = ["eval", *(a.format(data=data, other=other) for a in command)]
    argv[-1] = str(tmp_path / "." / "d.jsonl")  # the same file, spelt differently
    assert main(argv) == 2
    assert data.read_bytes() == before
    assert "is one of the inputs" in capsys.readouterr().err
