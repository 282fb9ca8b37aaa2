"""``tools/same_outputs.py compare``: what changes by itself (timings, run ids, vault nonces) is not
a difference; anything else is."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tools.same_outputs import compare, main

RUN_A, RUN_B = "20261202T060405Z-7320dda3", "20261202T061151Z-176de11c"


def _output(
    root: Path,
    run: str,
    seconds: float,
    masked: str = "[PHONE_1]",
    vault_ids: tuple[str, ...] = ("r1",),
    nonce: str = "n1",
) -> Path:
    (root / "masked").mkdir(parents=True)
    metrics = {"masked": 1, "elapsed_seconds": seconds, "run": {"run_id": run, "engine": "spark"}}
    (root / "metrics.json").write_text(json.dumps(metrics))
    pq.write_table(
        pa.table({"id": ["a"], "masked_text": [masked], "vault_file": [f"mask-k-{run}-ab12"]}),
        root / "masked" / "part-k.parquet",
    )
    vault = root / "vault"
    vault.mkdir()
    (vault / f"mask-k-{run}-ab12.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "nonce": nonce, "ciphertext": nonce * 4}) + "\n" for i in vault_ids
        )
    )
    stats = (root / "metrics.json").read_bytes()
    (root / "manifest.json").write_text(
        json.dumps(
            {
                "files": {
                    "metrics.json": {
                        "sha256": "0" * 64 if seconds < 2 else "1" * 64,
                        "bytes": len(stats),
                    }
                }
            }
        )
    )
    return root


def test_runs_that_differ_only_in_timings_run_ids_and_nonces_are_the_same(
    tmp_path: Path, capsys
) -> None:
    a = _output(tmp_path / "a", RUN_A, 1.5)
    b = _output(tmp_path / "b", RUN_B, 2.25, nonce="n2")
    result = compare(a, b)
    assert result["differ"] == [] and result["only_a"] == result["only_b"] == []
    assert result["normalized"] == 4  # every file differs in bytes, none in substance
    assert main(["compare", str(a), str(b)]) == 0
    assert "4 identical but for timings and run ids" in capsys.readouterr().out


def test_a_changed_value_row_or_vault_record_is_a_difference(tmp_path: Path) -> None:
    a = _output(tmp_path / "a", RUN_A, 1.5)
    b = _output(tmp_path / "b", RUN_B, 1.5, masked="010-1234-5678", vault_ids=("r1", "r2"))
    (b / "extra.json").write_text("{}")
    result = compare(a, b)
    assert result["differ"] == ["masked/part-k.parquet", "vault/mask-k-<run>.jsonl"]
    assert result["only_b"] == ["extra.json"]
    assert main(["compare", str(a), str(b)]) == 1
