"""The filter job end to end: planted PII, every kind of bad record, reconciliation — both
engines."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from spcl.cli import main as cli_main
from spcl.config import load_settings
from spcl.filter.job import FilterJob, JobError, run_filter
from spcl.io.outputs import output_dataset
from spcl.manifest import verify_manifest
from spcl.synth.corpus import BAD_LINES, valid_card, valid_rrn
from tests.support.records import doc_line, write_lines

PLANTED = {
    "ko-phone": ("연락처는 010-2345-6789입니다. 편하게 전화 주세요.", "PHONE", "010-2345-6789"),
    "ja-email": (
        "詳しくは taro.yamada@mailbox.jp までご連絡ください。",
        "EMAIL",
        "taro.yamada@mailbox.jp",
    ),
    "en-card": ("I paid with {card} yesterday and it went through.", "CARD", None),
    "ko-rrn": ("주민등록번호 {rrn} 를 제출했습니다.", "RRN", None),
}
PLAIN = {
    "ko-plain": "오늘은 날씨가 맑아서 공원에 산책을 다녀왔습니다.",
    "ja-plain": "週末は家族で近くの公園に出かけました。",
    "en-plain": "The library opens at nine and closes at five on weekdays.",
    "ko-order": "주문번호 20231105-0012345 상품이 2023-11-05 14:32:10 에 발송되었습니다.",
}


def _corpus(tmp: Path) -> tuple[Path, dict[str, tuple[str, str]]]:
    import random

    rng = random.Random(3)
    card, rrn = valid_card(rng), valid_rrn(rng)
    planted = {}
    lines = []
    for doc_id, (template, pii_type, value) in PLANTED.items():
        text = template.format(card=card, rrn=rrn)
        value = value or (card if pii_type == "CARD" else rrn)
        planted[doc_id] = (pii_type, value)
        lines.append(doc_line(doc_id, text))
    lines += [doc_line(doc_id, text) for doc_id, text in PLAIN.items()]
    folder = tmp / "crawl"
    folder.mkdir()
    write_lines(folder / "good.jsonl.gz", lines, gz=True)
    write_lines(folder / "bad.jsonl", list(BAD_LINES))
    packed = gzip.compress(b"\n".join(doc_line(f"t{i}", "x" * 300) for i in range(100)) + b"\n")
    (folder / "truncated.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    (folder / "notes.txt").write_text("not an input file")
    return folder, planted


def _read(out: Path) -> dict[str, dict]:
    table = output_dataset(out).to_table()
    return {r["id"]: r for r in table.to_pylist()}


def _check_outputs(out: Path, planted: dict[str, tuple[str, str]], stats: dict) -> dict[str, dict]:
    rows = _read(out)
    for doc_id, (pii_type, value) in planted.items():
        row = rows[doc_id]
        assert row["decision"] == "flagged", doc_id
        assert f"rule:{pii_type}" in row["reasons"]
        spans = [row["text"][h["start"] : h["end"]] for h in row["hits"] if h["type"] == pii_type]
        assert value in spans, doc_id
    for doc_id in PLAIN:
        assert rows[doc_id]["decision"] == "clean", doc_id
        assert rows[doc_id]["reasons"] == []
    quarantined = {r["quarantine_reason"] for r in rows.values() if r["decision"] == "quarantine"}
    assert quarantined == {
        "malformed_json",
        "invalid_utf8",
        "missing_text_field",
        "text_not_string",
        "empty_text",
        "text_contains_nul",
        "not_an_object",
        "invalid_unicode_surrogate",
        "truncated_or_corrupt_stream",
    }
    raws = {r["raw"] for r in rows.values() if r["decision"] == "quarantine"}
    assert set(BAD_LINES) <= raws
    rec = stats["reconciliation"]
    assert rec["ok"] and rec["input_records"] == len(rows) == sum(stats["counts"].values())
    assert stats["counts"]["flagged"] == len(planted)
    assert stats["skipped_files"] and stats["skipped_files"][0].endswith("notes.txt")
    assert json.loads((out / "stats.json").read_text())["counts"] == stats["counts"]
    assert verify_manifest(out).ok
    return rows


def test_python_engine_end_to_end(tmp_path: Path) -> None:
    folder, planted = _corpus(tmp_path)
    settings = load_settings(overrides={"screen.enabled": False})
    out = tmp_path / "out"
    stats = run_filter(FilterJob((str(folder),), str(out), settings, engine="python"))
    _check_outputs(out, planted, stats)
    with pytest.raises(JobError, match="already exists"):
        run_filter(FilterJob((str(folder),), str(out), settings, engine="python"))
    run_filter(FilterJob((str(folder),), str(out), settings, engine="python", overwrite=True))


def test_a_relative_output_reaches_every_task_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Executors resolve a relative path against their own work folder: the driver must resolve
    it first."""
    import spcl.filter.driver as driver

    folder, planted = _corpus(tmp_path)
    seen: list[str] = []
    real = driver.screen_split

    def recording(fh, split, output, ctx, on_batch=None, **kw):  # type: ignore[no-untyped-def]
        seen.append(output)
        return real(fh, split, output, ctx, on_batch, **kw)

    monkeypatch.setattr(driver, "screen_split", recording)
    monkeypatch.chdir(tmp_path)
    settings = load_settings(overrides={"screen.enabled": False})
    stats = run_filter(FilterJob((str(folder),), "out", settings, engine="python"))
    assert seen and set(seen) == {str(tmp_path / "out")}
    _check_outputs(tmp_path / "out", planted, stats)


def test_cli_reports_config_errors_and_existing_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = _corpus(tmp_path)
    conf = tmp_path / "bad.yaml"
    conf.write_text("policy:\n  PHONE: sometimes\n")
    assert (
        cli_main(["filter", "-i", str(folder), "-o", str(tmp_path / "o"), "--conf", str(conf)]) == 2
    )
    assert "policy.PHONE" in capsys.readouterr().err
    (tmp_path / "o2").mkdir()
    (tmp_path / "o2" / "x").write_text("keep me")
    assert (
        cli_main(
            [
                "filter",
                "-i",
                str(folder),
                "-o",
                str(tmp_path / "o2"),
                "--engine",
                "python",
                "--no-screen",
            ]
        )
        == 2
    )
    assert "--overwrite" in capsys.readouterr().err
    assert (tmp_path / "o2" / "x").read_text() == "keep me"


def test_no_sensitive_value_in_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, planted = _corpus(tmp_path)
    with caplog.at_level("DEBUG"):
        cli_main(
            [
                "filter",
                "-i",
                str(folder),
                "-o",
                str(tmp_path / "o"),
                "--engine",
                "python",
                "--no-screen",
            ]
        )
    printed = caplog.text + "".join(capsys.readouterr())
    for _, value in planted.values():
        assert value not in printed


@pytest.mark.slow
def test_spark_engine_matches_python_engine(tmp_path: Path) -> None:
    folder, planted = _corpus(tmp_path)
    settings = load_settings(overrides={"screen.enabled": False})
    spark_out, py_out = tmp_path / "spark", tmp_path / "python"
    stats = run_filter(FilterJob((str(folder),), str(spark_out), settings, "spark", "local[2]"))
    spark_rows = _check_outputs(spark_out, planted, stats)
    run_filter(FilterJob((str(folder),), str(py_out), settings, engine="python"))
    py_rows = _read(py_out)
    assert {k: (v["decision"], v["hits"], v["reasons"]) for k, v in spark_rows.items()} == {
        k: (v["decision"], v["hits"], v["reasons"]) for k, v in py_rows.items()
    }


@pytest.mark.slow
def test_spark_submit_entry_point(tmp_path: Path, root: Path) -> None:
    import os
    import subprocess
    import sys

    folder, planted = _corpus(tmp_path)
    out = tmp_path / "submitted"
    spark_submit = Path(sys.executable).parent / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.run(
        [
            str(spark_submit),
            "--master",
            "local[2]",
            str(root / "jobs" / "filter.py"),
            "--input",
            str(folder),
            "--output",
            str(out),
            "--no-screen",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    stats = json.loads((out / "stats.json").read_text())
    _check_outputs(out, planted, stats)
    for _, value in planted.values():
        assert value not in proc.stdout + proc.stderr


def test_missing_java_gives_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = _corpus(tmp_path)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert cli_main(["filter", "-i", str(folder), "-o", str(tmp_path / "o"), "--no-screen"]) == 1
    err = capsys.readouterr().err
    assert "Java 17" in err and "--engine python" in err
