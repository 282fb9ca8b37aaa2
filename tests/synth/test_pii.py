"""The synthetic PII set (issue 4 §1) and its chat records (§6)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from stdnum import luhn
from stdnum.kr import rrn

from spcl.cli import main
from spcl.extract.prompt import FEW_SHOT, PROMPT_VERSION, build_messages
from spcl.manifest import sha256_file, verify_manifest
from spcl.synth.pii import GENERATOR_VERSION, SPLITS, generate


@pytest.fixture(scope="module")
def pii_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pii")
    assert main(["synth", "pii", "--seed", "42", "--output", str(out)]) == 0
    return out


def _records(root: Path, split: str) -> list[dict]:
    return [
        json.loads(line)
        for line in (root / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
    ]


def _all(root: Path) -> list[dict]:
    return [r for name, _, _ in SPLITS for r in _records(root, name)]


def test_split_sizes_languages_and_manifest(pii_dir: Path) -> None:
    manifest = json.loads((pii_dir / "manifest.json").read_text())
    assert manifest["generator_version"] == GENERATOR_VERSION == "1.0.0" and manifest["seed"] == 42
    expected = {"train": (1280, 320), "validation": (160, 40), "test": (320, 80)}
    for split, (ko, en) in expected.items():
        recs = _records(pii_dir, split)
        assert len(recs) == ko + en
        assert (
            sum(r["lang"] == "ko" for r in recs) == ko
            and sum(r["lang"] == "en" for r in recs) == en
        )
        info = manifest["splits"][split]
        assert info["records"] == ko + en and info["langs"] == {"en": en, "ko": ko}
        assert info["sha256"] == sha256_file(pii_dir / f"{split}.jsonl")
    assert manifest["records"] == 2200
    assert verify_manifest(pii_dir).ok


def test_records_are_consistent(pii_dir: Path) -> None:
    recs = _all(pii_dir)
    assert len({r["id"] for r in recs}) == 2200 and len({r["source_text"] for r in recs}) == 2200
    for r in recs:
        assert set(r) == {"id", "lang", "source_text", "entities", "target_tsv"}
        pairs = [(e["type"], e["original"]) for e in r["entities"]]
        assert len(pairs) == len(set(pairs))
        assert r["target_tsv"] == "\n".join(f"{t}\t{v}" for t, v in pairs)
        positions = [r["source_text"].index(v) for _, v in pairs]
        assert all(p >= 0 for p in positions)
    types = {e["type"] for r in recs for e in r["entities"]}
    assert types == {"PERSON", "RRN", "DOB", "REL", "ADDRESS", "PHONE", "EMAIL", "ACCOUNT", "CARD"}


def test_values_are_synthetic(pii_dir: Path) -> None:
    recs = _all(pii_dir)
    values = {(e["type"], e["original"]) for r in recs for e in r["entities"]}
    rrns = [v for t, v in values if t == "RRN"]
    cards = [v for t, v in values if t == "CARD"]
    assert len(rrns) > 100 and len(cards) > 100
    # well-formed dates, failing check digit (python-stdnum as the independent oracle)
    for v in rrns:
        assert re.fullmatch(r"\d{6}-[1-4]\d{6}", v)
        assert not rrn.is_valid(v)
    for v in cards:
        digits = re.sub(r"\D", "", v)
        assert len(digits) == 16 and digits[0] in "45" and not luhn.is_valid(digits)
    for t, v in values:
        if t == "PHONE":
            assert re.fullmatch(r"010[- ]?0000[- ]?\d{4}|(\(\d{3}\) |\d{3}-)555-01\d\d", v), v
        if t == "EMAIL":
            assert v.split("@")[1] in {"mailbox.com", "mailbox.org", "mailbox.net"}


def test_negatives_hold_only_non_personal_strings(pii_dir: Path) -> None:
    negatives = [r for r in _all(pii_dir) if not r["entities"]]
    assert 250 <= len(negatives) <= 500
    assert all(r["target_tsv"] == "" for r in negatives)
    company = re.compile(r"1588-|1577-|1644-|080-000-|1-800-000-")
    assert sum(bool(company.search(r["source_text"])) for r in negatives) > 100
    assert (
        sum(bool(re.search(r"\b(AB|XR|SKU|KT)-\d{4}-\d{4}", r["source_text"])) for r in negatives)
        > 50
    )


def test_regeneration_is_byte_identical(pii_dir: Path, tmp_path: Path) -> None:
    assert main(["synth", "pii", "--seed", "42", "--output", str(tmp_path)]) == 0
    for name, _, _ in SPLITS:
        assert (tmp_path / f"{name}.jsonl").read_bytes() == (pii_dir / f"{name}.jsonl").read_bytes()
    a, b = (json.loads((d / "manifest.json").read_text()) for d in (pii_dir, tmp_path))
    a.pop("created"), b.pop("created")
    assert a == b
    other = tmp_path / "seed7"
    generate(other, seed=7)
    assert (other / "test.jsonl").read_bytes() != (pii_dir / "test.jsonl").read_bytes()


def test_to_chat_records(pii_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "chat.jsonl"
    assert (
        main(
            ["synth", "to-chat", "--input", str(pii_dir / "validation.jsonl"), "--output", str(out)]
        )
        == 0
    )
    printed = capsys.readouterr()
    src = _records(pii_dir, "validation")
    chat = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(chat) == len(src) == 200
    for s, c in zip(src, chat, strict=True):
        assert c["id"] == s["id"] and c["prompt_version"] == PROMPT_VERSION == "extract-v4"
        assert c["prompt"] == build_messages(s["source_text"])
        assert c["completion"] == [{"role": "assistant", "content": s["target_tsv"]}]
        assert s["source_text"][:20] not in printed.out + printed.err


def test_prompt_covers_types_contract_and_three_languages() -> None:
    system = build_messages("x")[0]["content"]
    for t in ("PERSON", "RRN", "DOB", "REL", "ADDRESS", "PHONE", "EMAIL", "ACCOUNT", "CARD", "tab"):
        assert t in system
    assert (
        re.search(r"[가-힣]", system)
        and re.search(r"[ぁ-んァ-ン]", system)
        and "Please refund" in system
    )
    assert len(FEW_SHOT) >= 3
