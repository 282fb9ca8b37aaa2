"""The generalize job with rows that share a row key: one output per input row, one vault record
per key."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job
from tests.support.extractors import TimeoutOnce

KEY = bytes(range(32))


@pytest.fixture(autouse=True)
def vault_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with a known vault key in the environment."""
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(KEY).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)


def _input(tmp: Path) -> GeneralizeJobConfig:
    (tmp / "in").mkdir()
    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "text": [
                "Call 010-1234-5678 now.",
                "Mail kim@mailbox.com now.",
                "Call 010-9876-5432 now.",
            ],
            "row_key": ["k1", "k1", "k2"],
        }
    )
    pq.write_table(table, tmp / "in" / "part-0.parquet")
    return GeneralizeJobConfig(input=str(tmp / "in"), output=str(tmp / "out"), vault=str(tmp / "v"))


def _outputs(tmp: Path) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for sub in ("generalized", "failed"):
        for part in sorted((tmp / "out" / sub).glob("*.parquet")):
            rows += [(sub, r["id"], r["row_key"]) for r in pq.read_table(part).to_pylist()]
    return sorted(rows)


def _vault_keys(tmp: Path) -> list[list[str]]:
    return [
        [json.loads(line)["id"] for line in p.read_text().splitlines() if line.strip()]
        for p in sorted((tmp / "v").glob("*.jsonl"))
    ]


def test_a_shared_row_key_is_generalized_once_and_the_rest_fail_as_duplicates(
    tmp_path: Path,
) -> None:
    cfg = _input(tmp_path)
    metrics = run_generalize_job(cfg)
    assert _outputs(tmp_path) == [
        ("failed", "b", "k1"),
        ("generalized", "a", "k1"),
        ("generalized", "c", "k2"),
    ]
    # no ambiguous vault record
    assert all(len(ids) == len(set(ids)) for ids in _vault_keys(tmp_path))
    assert metrics["reconciliation"]["ok"]


def test_transient_retry_keeps_one_output_per_row_with_a_shared_row_key(tmp_path: Path) -> None:
    cfg = _input(tmp_path)
    ex = TimeoutOnce()
    run_generalize_job(cfg, extractor=ex)
    assert [o[0] for o in _outputs(tmp_path)] == ["failed"] * 3
    metrics = run_generalize_job(cfg, extractor=ex)
    assert _outputs(tmp_path) == [
        ("failed", "b", "k1"),
        ("generalized", "a", "k1"),
        ("generalized", "c", "k2"),
    ]
    assert all(len(ids) == len(set(ids)) for ids in _vault_keys(tmp_path))
    assert metrics["reconciliation"]["ok"]
