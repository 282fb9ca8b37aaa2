"""The per language × source table of ``spcl eval screen``, the same in its summary and in ``spcl
report``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spcl.evaluate.screen import SOURCE_TABLE_HEADER, evaluate_screen, format_summary, source_table
from spcl.report.build import write_report
from spcl.screen.model import Screen, load_screen

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "screen-default"
TEXTS = {
    "ko": [
        "김모(41)씨는 사기 혐의로 구속됐고 지난주 병원에 입원했다.",
        "오늘 서울의 하늘은 맑고 기온은 어제보다 조금 높겠습니다.",
        "저는 작년에 우울증 진단을 받고 약을 먹고 있어요.",
        "이 영화 진짜 재밌어요 배우들 연기가 좋아요.",
    ],
    "ja": [
        "容疑者は警察に逮捕され、被害者は病院で治療を受けている。",
        "新しい駅ビルには百貨店と映画館が入る予定だと発表した。",
        "私は先月から入院していて、手術を受けました。",
        "週末は友達とカフェでケーキを食べました。",
    ],
    "en": [
        "My mother was diagnosed with cancer last spring.",
        "The new bridge opens to traffic next week.",
        "He was arrested for fraud and sentenced to two years.",
        "I replaced the alternator on my truck.",
    ],
}


@pytest.fixture(scope="module")
def screen() -> Screen:
    if not (MODEL / "model_card.json").exists():
        pytest.skip("models/screen-default not built")
    return load_screen(MODEL)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    picks=st.lists(
        st.tuples(
            st.sampled_from(sorted(TEXTS)),
            st.integers(0, 3),
            st.sampled_from(["SCPI", "RELATED", "NONE"]),
            st.sampled_from(["a", "b"]),
        ),
        min_size=1,
        max_size=24,
    )
)
def test_source_table_counts_match_the_flags(
    screen: Screen, picks: list[tuple[str, int, str, str]]
) -> None:
    rows = [
        {"text": TEXTS[lang][i], "lang": lang, "label": label, "group": group}
        for lang, i, label, group in picks
    ]
    report = evaluate_screen(screen, rows)
    flag = screen.predict([r["text"] for r in rows], [r["lang"] for r in rows]).flag
    table = source_table(report)
    by_key = {(r[0], r[1]): dict(zip(SOURCE_TABLE_HEADER, r, strict=True)) for r in table}
    for lang, group in {(r["lang"], r["group"]) for r in rows}:
        m = np.array([r["lang"] == lang and r["group"] == group for r in rows])
        labels = np.array([r["label"] for r in rows])
        row = by_key[(lang, group)]
        assert row["documents"] == int(m.sum()) and row["SCPI"] == int(
            (m & (labels == "SCPI")).sum()
        )
        assert row["SCPI found"] == int((m & flag & (labels == "SCPI")).sum())
        assert row["NONE flagged"] == int((m & flag & (labels == "NONE")).sum())
        assert row["sent to LLM"] == round(int((m & flag).sum()) / int(m.sum()), 4)
    for lang in {r["lang"] for r in rows}:
        groups = {r["group"] for r in rows if r["lang"] == lang}
        star = by_key.get((lang, "*"))
        assert (star is not None) == (len(groups) > 1)
        if star:
            assert star["documents"] == sum(r["lang"] == lang for r in rows)


def test_eval_summary_and_report_show_the_same_table(tmp_path: Path, screen: Screen) -> None:
    data = tmp_path / "mine.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"{lang}{i}",
                    "text": t,
                    "lang": lang,
                    "source": f"s{i % 2}",
                    "label": "SCPI" if i % 2 == 0 else "NONE",
                },
                ensure_ascii=False,
            )
            + "\n"
            for lang, ts in TEXTS.items()
            for i, t in enumerate(ts)
        ),
        encoding="utf-8",
    )
    out = tmp_path / "eval.json"
    proc = subprocess.run(
        [
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
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    report = json.loads(out.read_text())
    rows = source_table(report)
    assert len(rows) == 3 * 3  # three languages × (two sources + the language's total)
    summary = format_summary(report)
    assert summary in proc.stdout
    lines = [line.split() for line in summary.splitlines()]
    for row in rows:  # every row of the table is a line of the summary
        assert [str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4])] in [
            ln[:5] for ln in lines
        ]
    page = write_report(out, dest=tmp_path / "rep")
    html = page.read_text()
    for row in rows:
        assert f'<td>{row[0]}</td><td>{row[1]}</td><td class="n">{row[2]}</td>' in html
    assert html.count("<tr>") == len(rows) + 1
    for text in (t for ts in TEXTS.values() for t in ts):  # never a document's text
        assert text not in html and text not in summary
