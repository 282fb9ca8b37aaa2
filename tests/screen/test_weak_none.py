from __future__ import annotations

import json
from pathlib import Path

from spcl.manifest import verify_manifest
from spcl.screen.passages import passages
from spcl.screen.train import read_records
from tools.datasets.weak_none import weak_none_records

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "data" / "weak-none"


def _help_tree(tmp: Path) -> Path:
    page = tmp / "ja" / "text" / "a.html"
    page.parent.mkdir(parents=True)
    body = "".join(
        f"<p>これは説明文の{i}番目の文です。ファイルを開いて保存します。</p>" for i in range(40)
    )
    page.write_text(f"<html><head><script>var x = 1;</script></head><body>{body}</body></html>")
    return tmp


def test_passages_are_bounded_and_in_the_language() -> None:
    text = "短い文です。" * 200 + " English only sentence here. " * 30
    out = passages(text, "ja", min_chars=40, max_chars=120)
    assert out and all(40 <= len(p) <= 126 for p in out)
    assert not any("English only" in p and "短い" not in p for p in out)


def test_records_are_deterministic_none_and_training_only(tmp_path: Path) -> None:
    root = _help_tree(tmp_path)
    first = weak_none_records("ja", 5, seed=1, root=root)
    assert first == weak_none_records("ja", 5, seed=1, root=root)
    assert first != weak_none_records("ja", 5, seed=2, root=root)
    assert {r["label"] for r in first} == {"NONE"} and all(
        "script" not in str(r["text"]) for r in first
    )
    path = tmp_path / "w.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in first))
    assert all(r.synthetic for r in read_records([path]))  # augmentation: never scored in CV


def test_shipped_set_matches_its_manifest_and_is_all_none() -> None:
    assert verify_manifest(SHIPPED).ok
    rows = [
        json.loads(line) for line in (SHIPPED / "libreoffice-help.jsonl").open(encoding="utf-8")
    ]
    assert len(rows) == 3000 and {r["label"] for r in rows} == {"NONE"}
    assert {r["lang"] for r in rows} == {"ja", "ko"} and len({r["text"] for r in rows}) == len(rows)
