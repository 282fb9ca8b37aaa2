"""An output folder belongs to one set of mask settings: a rerun with others is refused, not silently skipped."""

from __future__ import annotations

import base64
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.mask_stage import MaskJobConfig, MaskJobError, run_mask_job

KEY = bytes(range(32))


@pytest.fixture(autouse=True)
def vault_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with a known vault key in the environment."""
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(KEY).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)


def test_rerun_with_other_types_is_refused(tmp_path: Path) -> None:
    # before, the second run skipped the finished file: masked/ kept the first settings' output (here, no
    # PERSON masking) while metrics.json and the manifest named the second settings' config hash
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"id": ["a"], "text": ["Call 010-1234-5678."]}), tmp_path / "in" / "p.parquet")
    base = {"input": str(tmp_path / "in"), "output": str(tmp_path / "out"), "vault": str(tmp_path / "v")}
    first = run_mask_job(MaskJobConfig(**base, types=("PHONE",)))
    assert first["masked"] == 1
    with pytest.raises(MaskJobError, match="other mask settings"):
        run_mask_job(MaskJobConfig(**base, types=("PHONE", "PERSON")))
    again = run_mask_job(MaskJobConfig(**base, types=("PHONE",), batch_size=7))  # not a setting of the output
    assert again["run"]["files_skipped"] == 1


def test_the_release_settings_leave_out_operational_knobs() -> None:
    a = MaskJobConfig(input="i", output="o", vault="v", backend="openai", options={"timeout_s": 10, "retries": 1})
    b = MaskJobConfig(input="i", output="o", vault="v", backend="openai", options={"timeout_s": 99, "retries": 5})
    c = MaskJobConfig(input="i", output="o", vault="v", backend="openai", options={"adapter": "lora/"})
    assert a.release_hash() == b.release_hash() != c.release_hash()
    assert a.release_hash() != MaskJobConfig(input="i", output="o", vault="v", backend="openai",
                                             names=False).release_hash()
