"""The shipped crawl-text evaluation set (``data/detect-eval/crawl.jsonl``): every family of split
or encoded identifiers is found (recall >= 0.95 each) and look-alikes stay under 2 %; the builder
reproduces the file."""

from __future__ import annotations

import json
from pathlib import Path

from spcl.evaluate.detect import evaluate_detect, read_gold
from tools.datasets.crawl_set import build

CRAWL = Path(__file__).resolve().parents[2] / "data" / "detect-eval" / "crawl.jsonl"


def test_each_family_is_found_and_look_alikes_are_not() -> None:
    report = evaluate_detect(read_gold(CRAWL))
    families = {k: v for k, v in report["recall"]["by_tag"].items() if k.startswith("family:")}
    assert len(families) == 11
    assert all(v["recall"] >= 0.95 for v in families.values()), families
    assert report["negatives"]["n"] == 60 and report["negatives"]["rate"] <= 0.02


def test_the_builder_reproduces_the_shipped_file() -> None:
    assert [json.loads(line) for line in CRAWL.open(encoding="utf-8")] == build()
