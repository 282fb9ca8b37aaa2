"""Document ids are text too: an id holding an address or a number never reaches masked/ or failed/
in clear; unmask gives the id back, and resume and retries still work (row keys come from the
input's own ids)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.cli import main
from spcl.mask.ids import id_holds_value
from spcl.mask.vault import open_vault
from spcl.mask_stage import MaskJobConfig, run_mask_job
from tests.support.extractors import TimeoutOnce

KEY = bytes(range(32))
IDS = [
    "https://example.org/u?mail=kim.ids@mailbox.com",
    "https://example.org/u?mail=lee.ids%40mailbox.com",
    "https://example.kr/u?tel=010-2468-1357",
    "plain-1",
    "https://example.kr/u?tel=010-9753-8642",
]
TEXTS = [
    "Write to kim.ids@mailbox.com today.",
    "No value here, only words.",
    "전화 010-1111-2222 주세요",
    # the last one fails (no text): its id must not show in failed/ either
    "call 010-3333-4444",
    "",
]
PLANTED = ("kim.ids", "lee.ids", "2468-1357", "9753-8642", "010-2468", "010-9753")


def _rows(folder: Path) -> list[dict]:
    return [r for p in sorted(folder.glob("*.parquet")) for r in pq.read_table(p).to_pylist()]


def _cfg(tmp_path: Path) -> MaskJobConfig:
    (tmp_path / "in").mkdir(exist_ok=True)
    pq.write_table(pa.table({"id": IDS, "text": TEXTS}), tmp_path / "in" / "p.parquet")
    return MaskJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
    )


def _assert_no_planted(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for value in PLANTED:
                assert value.encode() not in data, (path.name, value)


def test_ids_with_values_are_released_as_keyed_hashes_and_unmask_gives_them_back(
    tmp_path: Path, capsys
) -> None:
    # before, masked/ held https://…?mail=<address> as the row's id in clear
    metrics = run_mask_job(_cfg(tmp_path))
    assert metrics["masked"] == 4 and metrics["failed"] == 1
    _assert_no_planted(tmp_path / "out")
    _assert_no_planted(tmp_path / "v")
    vault = open_vault(tmp_path / "v", KEY)
    masked = {r["row_key"]: r for r in _rows(tmp_path / "out" / "masked")}
    shown = sorted(r["id"] for r in masked.values())
    assert shown == sorted([vault.screened_id(i) for i in IDS[:3]] + ["plain-1"])
    [failed] = _rows(tmp_path / "out" / "failed")
    assert failed["id"] == vault.screened_id(IDS[4]) and failed["reason"] == "no_text"
    # the same id always gives the same hash (a rerun skips: row keys are the input's)
    assert run_mask_job(_cfg(tmp_path))["run"]["files_skipped"] == 1
    assert (
        main(
            [
                "unmask",
                "--masked",
                str(tmp_path / "out"),
                "--vault",
                str(tmp_path / "v"),
                "--output",
                str(tmp_path / "restored"),
            ]
        )
        == 0
    )
    restored = {r["id"]: r for r in _rows(tmp_path / "restored")}
    assert sorted(restored) == sorted(IDS[:4]) and all(r["verified"] for r in restored.values())
    assert restored[IDS[0]]["text"] == TEXTS[0]
    (tmp_path / "ids.txt").write_text(IDS[2] + "\n")
    assert (
        main(
            [
                "unmask",
                "--masked",
                str(tmp_path / "out"),
                "--vault",
                str(tmp_path / "v"),
                "--output",
                str(tmp_path / "one"),
                "--ids",
                str(tmp_path / "ids.txt"),
            ]
        )
        == 0
    )
    assert [r["id"] for r in _rows(tmp_path / "one")] == [IDS[2]]
    capsys.readouterr()


def test_a_row_shown_with_another_rows_id_hash_is_refused(tmp_path: Path, capsys) -> None:
    run_mask_job(_cfg(tmp_path))
    [part] = (tmp_path / "out" / "masked").glob("*.parquet")
    rows = pq.read_table(part).to_pylist()
    vault = open_vault(tmp_path / "v", KEY)
    hashed = [r for r in rows if r["id"].startswith("id-")]
    hashed[0]["id"], hashed[1]["id"] = hashed[1]["id"], hashed[0]["id"]
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(part)), part)
    assert (
        main(
            [
                "unmask",
                "--masked",
                str(tmp_path / "out"),
                "--vault",
                str(tmp_path / "v"),
                "--output",
                str(tmp_path / "restored"),
            ]
        )
        == 1
    )
    refused = [
        json.loads(x) for x in (tmp_path / "restored" / "_refused.jsonl").read_text().splitlines()
    ]
    assert sorted(r["reason"] for r in refused) == ["masked_text_changed", "masked_text_changed"]
    assert vault.screened_id(IDS[0]) != vault.screened_id(IDS[1])
    capsys.readouterr()


def test_a_retried_row_keeps_its_screened_id(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    first = run_mask_job(cfg, TimeoutOnce())
    assert first["failed"] == 5
    vault = open_vault(tmp_path / "v", KEY)
    assert {r["id"] for r in _rows(tmp_path / "out" / "failed")} == {
        vault.screened_id(i) for i in IDS[:3]
    } | {"plain-1", vault.screened_id(IDS[4])}
    again = run_mask_job(cfg)  # the retry pass (rules backend) masks the four transient failures
    assert again["masked"] == 4 and again["failed"] == 1
    assert sorted(r["id"] for r in _rows(tmp_path / "out" / "masked")) == sorted(
        [vault.screened_id(i) for i in IDS[:3]] + ["plain-1"]
    )
    _assert_no_planted(tmp_path / "out")


@pytest.mark.parametrize(
    "doc_id",
    [
        "crawl-000017",
        "doc-2024-05-01",
        "https://example.org/articles/12345",
        "<urn:uuid:5b2a1c9e-8f3d-4c1a-9e2b-0d4f6a7b8c9d>",
    ],
)
def test_ordinary_ids_are_released_as_they_are(doc_id: str) -> None:
    assert not id_holds_value(doc_id)


def test_generalize_screens_ids_the_same_way(tmp_path: Path) -> None:
    from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job

    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"id": IDS, "text": TEXTS}), tmp_path / "in" / "p.parquet")
    metrics = run_generalize_job(
        GeneralizeJobConfig(
            input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
        )
    )
    assert metrics["documents"] == len(IDS)
    _assert_no_planted(tmp_path / "out")
    _assert_no_planted(tmp_path / "v")
    vault = open_vault(tmp_path / "v", KEY)
    released = {r["id"] for sub in ("generalized", "failed") for r in _rows(tmp_path / "out" / sub)}
    assert released == {vault.screened_id(i) for i in IDS if i != "plain-1"} | {"plain-1"}
    for row in _rows(tmp_path / "out" / "generalized"):
        rec = vault.record(row["row_key"], row["vault_file"])
        assert (rec.source_id or row["id"]) in IDS and (rec.source_id is None) == (
            row["id"] == "plain-1"
        )


SEPARATORS = st.sampled_from(["/", "?", "=", "&", "#", ";", ",", "/u?mail=", "?tel=", "&contact="])
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-._", min_size=0, max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    prefix=WORD,
    before=SEPARATORS,
    after=SEPARATORS,
    suffix=WORD,
    value=st.sampled_from(
        ["kim.ids@mailbox.com", "lee.ids%40mailbox.com", "010-2468-1357", "+82-10-9753-8642"]
    ),
)
def test_a_planted_value_anywhere_in_a_url_id_is_found(
    prefix: str, before: str, after: str, suffix: str, value: str
) -> None:
    assert id_holds_value(f"https://{prefix or 'x'}.example{before}{value}{after}{suffix}")
