"""The interactive labelling page of `spcl review export --format html` (issue 14).

Fast checks read the page as text; the slow test drives it in headless Chromium: label with clicks
and keys, reload, read ``window.spclLabelsCSV()``, download it, and feed it to ``spcl review
agree``.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html.parser
import json
import re
import time
from pathlib import Path

import pytest

from spcl.cli import main
from spcl.manifest import read_manifest
from spcl.review.page import STORAGE_PREFIX
from spcl.review.reviews import read_reviews
from tests.support.browser import chromium, severe_logs
from tests.support.review_rows import make_rows, write_output


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return make_rows(300, seed=3)


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory, rows: list[dict]) -> Path:
    root = tmp_path_factory.mktemp("page")
    out = write_output(root / "out", rows, rows_per_file=1000)
    dest = root / "batch"
    argv = [
        "review",
        "export",
        "--input",
        str(out),
        "--output",
        str(dest),
        "--n",
        "30",
        "--seed",
        "11",
        "--redact",
    ]
    assert main([*argv, "--format", "csv,jsonl,html", "--reviewers", "a"]) == 0
    return dest


def hit_values(rows: list[dict], ids: list[str]) -> list[str]:
    by_id = {r["id"]: r for r in rows}
    return [by_id[i]["text"][h["start"] : h["end"]] for i in ids for h in by_id[i]["hits"]]


def sample_ids(batch: Path) -> list[str]:
    with open(batch / "sample.csv", encoding="utf-8-sig", newline="") as fh:
        return [r["id"] for r in csv.DictReader(fh)]


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.starts: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.starts.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)


def _sha(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def test_page_is_self_contained_and_names_every_control(batch: Path, rows: list[dict]):
    page = (batch / "sample.html").read_text(encoding="utf-8")
    tags = _Tags()
    tags.feed(page)
    ids = sample_ids(batch)
    articles = [a for t, a in tags.starts if t == "article"]
    assert [a["data-doc-id"] for a in articles] == ids
    assert sum(1 for t, a in tags.starts if "data-label" in a) == 3 * len(ids)
    assert {a["data-category"] for t, a in tags.starts if "data-category" in a} == {
        "MEDICAL",
        "CRIME",
        "DISABILITY",
        "OTHER",
    }
    assert all(not a.get("src") and not a.get("href") for _t, a in tags.starts)  # nothing to fetch
    csp = next(
        a["content"] for t, a in tags.starts if a.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp
    # the one inline script that runs and the style are allowed by hash, nothing else
    code = [
        s
        for s, (t, a) in zip(
            tags.scripts, [x for x in tags.starts if x[0] == "script"], strict=True
        )
        if a.get("type") != "application/json"
    ]
    assert len(code) == 1 and _sha(code[0]) in csp and _sha(tags.styles[0]) in csp
    data_block = re.search(
        r'<script type="application/json" id="spcl-data">(.*?)</script>', page, re.S
    ).group(1)
    # text with <script> or & cannot end the block
    assert "<" not in data_block and "&" not in data_block
    data = json.loads(data_block)
    manifest = read_manifest(batch)
    assert (
        data["key"]
        == manifest["sample_sha256"]
        == hashlib.sha256((batch / "sample.jsonl").read_bytes()).hexdigest()
    )
    assert [r[0] for r in data["rows"]] == ids
    # --redact: no hit value anywhere in the page, its script or its data
    values = hit_values(rows, ids)
    assert values and not [v for v in values if v in page]


def test_page_key_changes_with_the_sample(tmp_path: Path, batch: Path, rows: list[dict]):
    out = write_output(tmp_path / "out", rows, rows_per_file=1000)
    assert (
        main(
            [
                "review",
                "export",
                "-i",
                str(out),
                "-o",
                str(tmp_path / "b2"),
                "--n",
                "30",
                "--seed",
                "12",
                "--format",
                "html",
            ]
        )
        == 0
    )
    assert read_manifest(tmp_path / "b2")["sample_sha256"] != read_manifest(batch)["sample_sha256"]


def _article(driver, i: int):
    return driver.find_elements("css selector", "article.doc")[i]


def _pressed(article, attr: str) -> list[str]:
    return [
        b.get_attribute(attr)
        for b in article.find_elements("css selector", f"[{attr}][aria-pressed=true]")
    ]


@pytest.mark.slow
def test_label_reload_download_and_agree_in_chromium(
    tmp_path: Path, batch: Path, rows: list[dict], capsys
):
    ids = sample_ids(batch)
    expected_blank = (batch / "sample.csv").read_bytes().decode("utf-8-sig")
    downloads = tmp_path / "downloads"
    with chromium(tmp_path / "profile", downloads=downloads) as driver:
        driver.get((batch / "sample.html").as_uri())
        assert driver.execute_script("return document.body.dataset.ready") == "true"
        # before any label the page hands back exactly the exported CSV
        assert driver.execute_script("return window.spclLabelsCSV()") == expected_blank
        progress = driver.find_element("id", "progress")
        assert progress.text == f"0 / {len(ids)} labelled"

        # clicks: doc 0 is SCPI with MEDICAL, and its rule hit is real
        first = _article(driver, 0)
        first.find_element("css selector", "[data-label=SCPI]").click()
        first.find_element("css selector", "[data-category=MEDICAL]").click()
        first.find_element("css selector", "[data-pii=yes]").click()
        # keys: j to doc 1 -> RELATED + CRIME; j to doc 2 -> NONE, hits not real; k back, j j j to
        # doc 3
        body = driver.find_element("tag name", "body")
        body.send_keys("j2c")
        body.send_keys("j3n")
        body.send_keys("kjj")
        body.send_keys("1do")
        assert "current" in _article(driver, 3).get_attribute("class")
        note = _article(driver, 3).find_element("css selector", "input.note")
        note.click()
        note.send_keys('=1+1, "quoted" note')
        body.send_keys("?")
        assert driver.find_element("id", "help").is_displayed()
        body.send_keys("?")
        assert not driver.find_element("id", "help").is_displayed()
        driver.find_element("id", "reviewer").send_keys("a")
        assert progress.text == f"4 / {len(ids)} labelled"

        # reload: everything is still there (localStorage, keyed by the sample's manifest hash)
        driver.refresh()
        assert driver.execute_script("return document.body.dataset.ready") == "true"
        assert driver.find_element("id", "progress").text == f"4 / {len(ids)} labelled"
        assert _pressed(_article(driver, 0), "data-label") == ["SCPI"]
        assert _pressed(_article(driver, 1), "data-category") == ["CRIME"]
        assert _pressed(_article(driver, 2), "data-pii") == ["no"]
        assert _pressed(_article(driver, 3), "data-category") == ["DISABILITY", "OTHER"]
        assert "current" in _article(driver, 3).get_attribute("class")
        key = read_manifest(batch)["sample_sha256"]
        assert driver.execute_script("return Object.keys(window.localStorage)") == [
            STORAGE_PREFIX + key
        ]

        labelled = driver.execute_script("return window.spclLabelsCSV()")
        driver.find_element("id", "download").click()
        target = downloads / "reviewer-a.csv"
        deadline = time.monotonic() + 20
        while not target.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert severe_logs(driver) == []

    raw = target.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and raw[3:].decode() == labelled
    got = read_reviews(target)
    assert list(got) == ids
    assert (got[ids[0]].label, got[ids[0]].categories, got[ids[0]].row["pii"]) == (
        "SCPI",
        ("MEDICAL",),
        "yes",
    )
    assert (got[ids[1]].label, got[ids[1]].categories) == ("RELATED", ("CRIME",))
    assert (got[ids[2]].label, got[ids[2]].row["pii"]) == ("NONE", "no")
    # guarded against formulas, read back as typed
    assert got[ids[3]].note == '=1+1, "quoted" note'
    assert "'=1+1" in raw.decode()
    assert sum(1 for r in got.values() if r.label) == 4
    # the non-reviewer columns are the export's own
    with open(target, encoding="utf-8-sig", newline="") as fh:
        mine = list(csv.DictReader(fh))
    with open(batch / "sample.csv", encoding="utf-8-sig", newline="") as fh:
        exported = list(csv.DictReader(fh))
    keep = [c for c in exported[0] if c not in ("label", "categories", "pii", "note")]
    assert [[r[c] for c in keep] for r in mine] == [[r[c] for c in keep] for r in exported]

    # a second reviewer disagrees on doc 1; `spcl review agree` reads both files
    other = tmp_path / "reviewer-b.csv"
    other.write_bytes(raw.replace(b",RELATED,CRIME,", b",SCPI,CRIME,"))
    capsys.readouterr()
    # only 4 of 30 are labelled: agree refuses a partial review unless asked to measure the overlap
    assert (
        main(
            [
                "review",
                "agree",
                str(target),
                str(other),
                "--output",
                str(tmp_path / "agreement.json"),
            ]
        )
        == 1
    )
    assert (
        main(
            [
                "review",
                "agree",
                str(target),
                str(other),
                "--output",
                str(tmp_path / "agreement.json"),
                "--allow-partial",
            ]
        )
        == 0
    )
    agreed = json.loads((tmp_path / "agreement.json").read_text())
    assert agreed["items"] == 4 and agreed["label_disagreements"] == [ids[1]]
    assert "Landis–Koch" in capsys.readouterr().out


def test_missing_browser_skips_with_a_reason_unless_required(monkeypatch, tmp_path: Path):
    import tests.support.browser as browser

    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("SPCL_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium chromium-driver"):
        browser.require_browser()
    monkeypatch.setenv("SPCL_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="SPCL_REQUIRE_BROWSER is set"):
        browser.require_browser()
