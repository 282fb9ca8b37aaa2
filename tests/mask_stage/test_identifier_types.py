"""Issue 25: the new identifier types are flagged by the filter and masked (never released) by
the mask stage."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from spcl.cli import main
from spcl.extract.backends import Extraction
from spcl.mask_stage import MaskJobConfig, run_mask_job
from spcl.mask_stage.candidates import rule_hits
from spcl.mask_stage.document import mask_document

KEY = bytes(range(32))
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUpkGp3+"
    + "Xk3vR9tYp2Lm8QzW4nJs6" * 6
    + "\n-----END RSA PRIVATE KEY-----"
)
# (id, text, rule type the filter flags, the planted values that must not reach masked/)
DOCS = [
    ("ssn", "Applicant SSN 536-90-4399, call after five.", "SSN", ["536-90-4399"]),
    (
        "aws",
        "aws_access_key_id = AKIAQ3EGRBJ5VZX7ABCD\nregion = us-east-1",
        "CREDENTIAL",
        ["AKIAQ3EGRBJ5VZX7ABCD"],
    ),
    (
        "both",
        "SSN: 536 90 4399 and the key AKIA2E0A8F3B244C9986 leaked.",
        "SSN",
        ["536 90 4399", "AKIA2E0A8F3B244C9986"],
    ),
    ("itin", "ITIN 912-70-1234 on the form.", "ITIN", ["912-70-1234"]),
    (
        "iban",
        "Überweisung an IBAN DE89 3704 0044 0532 0130 00 bitte.",
        "IBAN",
        ["DE89 3704 0044 0532 0130 00"],
    ),
    ("ip", "Failed login from 93.184.216.34 at 03:12.", "IP", ["93.184.216.34"]),
    ("pw", 'db:\n  password: "t7#Qz9!vLm"\n', "CREDENTIAL", ["t7#Qz9!vLm"]),
    ("pem", f"key file:\n{PEM}\nend", "CREDENTIAL", ["MIIEowIBAAKCAQEAq7BFUpkGp3+"]),
    ("passport", "여권번호: M12345678 입니다.", "PASSPORT", ["M12345678"]),
    ("licence", "運転免許証番号 123456789012 を確認しました。", "DRIVER_LICENSE", ["123456789012"]),
    (
        "address",
        "I live at 1420 Pine Street, Seattle, WA 98101 with my cat.",
        "ADDRESS",
        ["1420 Pine Street", "WA 98101"],
    ),
]


def read_rows(folder: Path) -> list[dict]:
    """All rows of the Parquet files in ``folder``."""
    return [
        row for part in sorted(folder.glob("*.parquet")) for row in pq.read_table(part).to_pylist()
    ]


def test_filter_flags_and_rules_mask_stage_masks_every_new_type(tmp_path: Path) -> None:
    (tmp_path / "crawl").mkdir()
    with open(tmp_path / "crawl" / "docs.jsonl", "w", encoding="utf-8") as fh:
        for doc_id, text, _, _ in DOCS:
            fh.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    assert (
        main(
            [
                "filter",
                "--input",
                str(tmp_path / "crawl"),
                "--output",
                str(tmp_path / "f"),
                "--no-screen",
                "--engine",
                "python",
            ]
        )
        == 0
    )
    flagged = {r["id"]: r for r in read_rows(tmp_path / "f" / "decision=flagged")}
    for doc_id, _, rule_type, _ in DOCS:
        assert doc_id in flagged, doc_id
        assert f"rule:{rule_type}" in flagged[doc_id]["reasons"], (
            doc_id,
            flagged[doc_id]["reasons"],
        )
    metrics = run_mask_job(
        MaskJobConfig(
            str(tmp_path / "f" / "decision=flagged"), str(tmp_path / "m"), str(tmp_path / "v")
        )
    )
    assert metrics["reconciliation"]["ok"]
    assert read_rows(tmp_path / "m" / "failed") == []
    masked = {r["id"]: r["masked_text"] for r in read_rows(tmp_path / "m" / "masked")}
    assert sorted(masked) == sorted(d[0] for d in DOCS)
    for doc_id, _, _, values in DOCS:
        for value in values:
            assert value not in masked[doc_id], doc_id
    assert masked["address"] == "I live at [ADDRESS_1] with my cat."
    # every type its own token: a US SSN is never masked as a Korean resident number
    assert masked["ssn"] == "Applicant SSN [SSN_1], call after five."
    assert masked["itin"] == "ITIN [ITIN_1] on the form."
    assert "[CREDENTIAL_1]" in masked["aws"] and "[ID_1]" in masked["passport"]


def test_a_required_ssn_or_key_outside_the_allowed_types_fails_closed() -> None:
    text = "SSN 536-90-4399 / AKIA2E0A8F3B244C9986"
    hits = rule_hits(text)
    assert {h.type for h in hits if h.flagging} == {"SSN", "CREDENTIAL"}
    only_ssn = mask_document(text, Extraction(raw=""), hits, ("SSN",), False)
    assert only_ssn.released is None and only_ssn.reason == "uncovered_rule_hit:CREDENTIAL"
    only_rrn = mask_document(text, Extraction(raw=""), hits, ("RRN", "CREDENTIAL"), False)
    assert only_rrn.released is None and only_rrn.reason == "uncovered_rule_hit:SSN"
    both = mask_document(text, Extraction(raw=""), hits, ("SSN", "CREDENTIAL"), False)
    assert both.released is not None and both.released.masked_text == "SSN [SSN_1] / [CREDENTIAL_1]"
