"""`spcl report`: a self-contained run report of a filter or mask output, with no document values
(issue 14)."""

from __future__ import annotations

import base64
import gzip
import html.parser
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.cli import main
from spcl.manifest import verify_manifest, write_manifest
from spcl.screen.heads import PROBABILITY_EDGES as LGBM_EDGES
from tests.support.browser import chromium, severe_logs
from tests.support.review_rows import make_rows, write_output

PNG = b"\x89PNG\r\n\x1a\n"


class _Imgs(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return make_rows(400, seed=4)


@pytest.fixture()
def filter_out(tmp_path: Path, rows: list[dict]) -> Path:
    out = write_output(tmp_path / "out", rows, rows_per_file=150)
    stats = json.loads((out / "stats.json").read_text())
    by_lang: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["decision"] != "quarantine":
            by_lang.setdefault(r["lang"], {}).setdefault(r["decision"], 0)
            by_lang[r["lang"]][r["decision"]] += 1
    flagged = sum(r["decision"] == "flagged" for r in rows)
    stats.update(
        reconciliation={"input_records": len(rows), "output_records": len(rows), "ok": True},
        by_lang=by_lang,
        flag_reasons={"rule:PHONE": flagged},
        documents_by_pii_type={"PHONE": len(rows) - 1},
        pii_hits_by_type={"PHONE": len(rows) - 1},
        quarantine_reasons={"malformed_json": 1},
        config_hash="cfg123",
        model="models/not-here",
        stage_seconds={"list_inputs": 0.1, "screen_and_write": 2.0},
        docs_per_second=200.0,
    )
    (out / "stats.json").write_text(json.dumps(stats))
    (out / "manifest.json").unlink()
    write_manifest(out, kind="spcl-filter-output")
    return out


def _no_images(page: str) -> str:
    """The page without its inlined images (base64 may contain any short string by chance)."""
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)


def _leaks(rows: list[dict], blob: str) -> list[str]:
    values = [r["text"][h["start"] : h["end"]] for r in rows if r["text"] for h in r["hits"]]
    ids = [r["id"] for r in rows]
    fragments = ["田中さん", "김철수", "HYPERLINK"]
    return [v for v in [*values, *ids, *fragments] if v in blob]


def test_filter_report_counts_histograms_and_no_values(filter_out: Path, rows: list[dict], capsys):
    assert main(["report", str(filter_out)]) == 0
    page = (filter_out / "report.html").read_text(encoding="utf-8")
    facts = json.loads((filter_out / "report" / "facts.json").read_text())["filter"]
    # self-contained: every image inlined as a PNG, nothing to fetch, no script
    tags = _Imgs()
    tags.feed(page)
    imgs = [a for t, a in tags.tags if t == "img"]
    assert len(imgs) >= 6 and all(a["src"].startswith("data:image/png;base64,") for a in imgs)
    assert all(base64.b64decode(a["src"].split(",", 1)[1]).startswith(PNG) for a in imgs)
    assert not [t for t, a in tags.tags if t in ("script", "link", "iframe")]
    csp = next(
        a["content"] for t, a in tags.tags if a.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in csp and "img-src data:" in csp and "script-src" not in csp
    pngs = sorted((filter_out / "report").glob("*.png"))
    assert {p.stem for p in pngs} >= {
        "decisions",
        "languages",
        "flag_rate",
        "reasons",
        "pii_types",
        "scores",
    }
    assert all(p.read_bytes().startswith(PNG) for p in pngs)
    # the numbers are the output's
    scored = [r for r in rows if r["scores"]]
    assert sum(facts["scores"]["lgbm_counts"]) == len(scored) == facts["scores"]["documents_scored"]
    first_bin = sum(1 for r in scored if r["scores"]["lgbm"] < LGBM_EDGES[1])
    assert facts["scores"]["lgbm_counts"][0] == first_bin
    # no model card at stats["model"]: the threshold is the lowest score each model flagged
    lowest = min(r["scores"]["lgbm"] for r in scored if r["scores"]["lgbm_flag"])
    assert facts["scores"]["thresholds"]["lgbm"] == pytest.approx(lowest)
    assert facts["scores"]["threshold_source"].startswith("lowest flagged")
    flagged_cats = [
        r["top_category"] for r in rows if r["decision"] == "flagged" and r["top_category"]
    ]
    assert sum(facts["top_categories"].values()) == len(flagged_cats)
    ja = facts["by_lang"]["ja"]
    assert facts["flag_rate_by_lang"]["ja"] == pytest.approx(
        ja["flagged"] / (ja["flagged"] + ja["clean"])
    )
    assert "cfg123" in page and "OK" in page
    # no document text, id or value anywhere in the report
    blob = (
        _no_images(page)
        + (filter_out / "report" / "facts.json").read_text()
        + capsys.readouterr().out
    )
    assert _leaks(rows, blob) == []
    # the output's manifest still verifies; the report folder has its own
    assert verify_manifest(filter_out).ok and verify_manifest(filter_out / "report").ok


def test_failed_reconciliation_shows_and_wrong_folders_are_refused(
    filter_out: Path, tmp_path: Path, capsys
):
    stats = json.loads((filter_out / "stats.json").read_text())
    stats["reconciliation"] = {"input_records": 10, "output_records": 9, "ok": False}
    (filter_out / "stats.json").write_text(json.dumps(stats))
    assert main(["report", str(filter_out), "--output", str(tmp_path / "elsewhere")]) == 0
    assert "FAILED" in (tmp_path / "elsewhere" / "report.html").read_text()
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 1
    assert "neither a filter output" in capsys.readouterr().err


def _mask_output(path: Path) -> Path:
    (path / "masked").mkdir(parents=True)
    (path / "failed").mkdir()
    pq.write_table(
        pa.table({"id": ["m1", "m2", "m3"], "masked_text": ["[PHONE_1] 連絡", "x", "y"]}),
        path / "masked" / "part-a.parquet",
    )
    pq.write_table(
        pa.table({"id": ["f1"], "reason": ["timeout"]}), path / "failed" / "part-a.parquet"
    )
    metrics = {
        "backend": "rules",
        "model": "rules@1",
        "prompt_version": "extract-v1",
        "documents": 4,
        "masked": 3,
        "failed": 1,
        "masked_by_fallback": 0,
        "failed_reasons": {"timeout": 1},
        "entities_per_type": {"PHONE": 3, "PERSON": 1},
        "entities": 4,
        "parse_success_rate": 1.0,
        "extraction_success_rate": 0.75,
        "hallucination_rate": 0.0,
        "latency_seconds": {"p50": 0.01},
        "docs_per_second": 50.0,
        "run": {},
    }
    (path / "metrics.json").write_text(json.dumps(metrics))
    return path


def test_mask_report_alone_and_beside_a_filter_output(filter_out: Path, tmp_path: Path):
    masked = _mask_output(tmp_path / "masked-out")
    assert main(["report", str(masked)]) == 0
    page = _no_images((masked / "report.html").read_text())
    facts = json.loads((masked / "report" / "facts.json").read_text())["mask"]
    assert facts["reconciliation"] == {
        "documents": 4,
        "masked_rows": 3,
        "failed_rows": 1,
        "ok": True,
    }
    assert facts["failed_reasons"] == {"timeout": 1} and "Mask output" in page
    assert "[PHONE_1]" not in page and "m1" not in page
    assert main(["report", str(filter_out), "--mask", str(masked)]) == 0
    both = (filter_out / "report.html").read_text()
    assert "Filter output" in both and "Mask output" in both
    assert (filter_out / "report" / "mask_entities.png").read_bytes().startswith(PNG)
    assert main(["report", str(filter_out), "--mask", str(filter_out)]) == 1


@pytest.mark.slow
def test_report_of_a_real_run_renders_in_chromium(tmp_path: Path, root: Path):
    """filter (python engine, default screen) → mask (rules) → report; open it at phone width."""
    src = tmp_path / "in"
    src.mkdir()
    lines = gzip.decompress((root / "data/sample/crawl-0000.jsonl.gz").read_bytes()).splitlines()[
        :300
    ]
    (src / "part.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (src / "bad.jsonl").write_bytes((root / "data/sample/crawl-0003-bad.jsonl").read_bytes())
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SPCL_VAULT_KEY_FILE": str(tmp_path / "vault.key"),
    }

    def spcl(*argv: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "spcl.cli", *argv],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )

    out, masked = tmp_path / "out", tmp_path / "masked"
    spcl("filter", "-i", str(src), "-o", str(out), "--engine", "python")
    spcl("vault", "keygen", "--output", str(tmp_path / "vault.key"))
    spcl(
        "mask",
        "--input",
        str(out / "decision=flagged"),
        "--output",
        str(masked),
        "--vault",
        str(tmp_path / "vault"),
        "--backend",
        "rules",
    )
    spcl("report", str(out), "--mask", str(masked))
    facts = json.loads((out / "report" / "facts.json").read_text())
    assert facts["filter"]["scores"]["threshold_source"] == "model card"
    assert facts["filter"]["reconciliation"]["ok"] and facts["mask"]["reconciliation"]["ok"]
    assert facts["filter"]["quarantine_reasons"]
    assert verify_manifest(out).ok
    page = _no_images((out / "report.html").read_text())
    written = pq.read_table(out / "decision=flagged").to_pylist()
    values = [r["text"][h["start"] : h["end"]] for r in written for h in r["hits"]]
    cjk = {
        w
        for r in written
        for w in re.findall(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{3,}", r["text"])
    }
    assert (
        values
        and cjk
        and not [v for v in [*values, *cjk, *(r["id"] for r in written)] if v in page]
    )
    with chromium(tmp_path / "profile", width=420) as driver:
        driver.get((out / "report.html").as_uri())
        loaded = driver.execute_script(
            "return Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)"
        )
        assert len(loaded) >= 8 and all(loaded)
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 0  # readable on a phone: nothing wider than the screen
        assert driver.find_element("tag name", "h1").text.startswith("spcl run report")
        assert severe_logs(driver) == []


def test_report_shows_the_model_cards_per_language_thresholds() -> None:
    """A card with per-language thresholds (screen format 2): the facts carry them next to the
    global ones."""
    from spcl.report.facts import _ColumnScan, _score_facts

    card = {
        "thresholds": {"lgbm": 0.6, "svc": 0.1},
        "lang_thresholds": {"ko": {"lgbm": 0.7, "svc": 0.2}, "ja": {"lgbm": 0.2, "svc": -0.5}},
    }
    facts = _score_facts(_ColumnScan(), card)
    assert (
        facts["thresholds"] == {"lgbm": 0.6, "svc": 0.1}
        and facts["threshold_source"] == "model card"
    )
    assert facts["thresholds_by_lang"] == {
        "ja": {"lgbm": 0.2, "svc": -0.5},
        "ko": {"lgbm": 0.7, "svc": 0.2},
    }
    assert _score_facts(_ColumnScan(), {"thresholds": {"lgbm": 0.6}})["thresholds_by_lang"] == {}


def test_report_per_language_thresholds_and_rule_vs_screen_only(tmp_path: Path, capsys) -> None:
    """Each language's histogram carries its own threshold; flagged documents split per language
    into rule hits and screen-only; the share sent to the LLM stage."""
    rows = make_rows(300, seed=9)
    for i, r in enumerate(rows):
        if r["decision"] == "flagged" and i % 3 == 0:
            r["reasons"] = ["screen:head"]
    out = write_output(tmp_path / "out", rows, rows_per_file=120)
    card_dir = tmp_path / "model"
    card_dir.mkdir()
    (card_dir / "model_card.json").write_text(
        json.dumps(
            {
                "thresholds": {"lgbm": 0.5, "svc": 0.0},
                "lang_thresholds": {
                    "ja": {"lgbm": 0.31, "svc": -0.2},
                    "ko": {"lgbm": 0.77, "svc": 0.3},
                },
            }
        )
    )
    stats = json.loads((out / "stats.json").read_text())
    stats["model"] = str(card_dir)
    (out / "stats.json").write_text(json.dumps(stats))
    assert main(["report", str(out)]) == 0
    facts = json.loads((out / "report" / "facts.json").read_text())["filter"]
    expect: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["decision"] == "flagged":
            cause = (
                "rule_hits" if any(x.startswith("rule:") for x in r["reasons"]) else "screen_only"
            )
            expect.setdefault(r["lang"], {"rule_hits": 0, "screen_only": 0})[cause] += 1
    assert facts["flagged_by_lang_cause"] == expect
    assert all(v["screen_only"] and v["rule_hits"] for v in expect.values())
    ja_scored = [r for r in rows if r["lang"] == "ja" and r["scores"]]
    assert sum(facts["scores"]["counts_by_lang"]["lgbm"]["ja"]) == len(ja_scored)
    assert (out / "report" / "scores_by_lang.png").read_bytes().startswith(PNG)
    flagged = sum(r["decision"] == "flagged" for r in rows)
    screened = sum(r["decision"] in ("flagged", "clean") for r in rows)
    llm = facts["llm_stage"]
    assert llm["documents"] == stats["counts"]["flagged"] and llm["share"] == pytest.approx(
        stats["counts"]["flagged"] / (stats["counts"]["flagged"] + stats["counts"]["clean"])
    )
    assert flagged and screened
    page = (out / "report.html").read_text()
    assert "rule hits vs screen only" in page and "sent to the LLM stage" in page


def test_language_panels_draw_each_languages_threshold() -> None:
    from spcl.report import charts

    drawn: list[tuple[str, float]] = []
    import matplotlib.axes

    real = matplotlib.axes.Axes.axvline

    def spy(self, x=0, *a, **k):
        drawn.append((self.get_title() or "", x))
        return real(self, x, *a, **k)

    scores = {
        "counts_by_lang": {"lgbm": {"ja": [1, 2], "ko": [3, 4], "en": [1, 1]}},
        "edges_by_head": {"lgbm": [0.0, 0.5, 1.0]},
        "thresholds": {"lgbm": 0.5},
        "thresholds_by_lang": {"ja": {"lgbm": 0.31}, "ko": {"lgbm": 0.77}},
    }
    matplotlib.axes.Axes.axvline = spy  # type: ignore[method-assign]
    try:
        assert charts.score_histograms_by_language(scores).startswith(PNG)
    finally:
        matplotlib.axes.Axes.axvline = real  # type: ignore[method-assign]
    assert sorted(x for _, x in drawn) == [0.31, 0.5, 0.77]
