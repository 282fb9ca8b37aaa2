"""A generalize output folder belongs to one set of settings: a rerun with others is refused, not
skipped."""

from __future__ import annotations

import base64
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.executor.errors import JobError
from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job

KEY = bytes(range(32))


@pytest.fixture(autouse=True)
def vault_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with a known vault key in the environment."""
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(KEY).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)


def test_rerun_with_other_settings_is_refused(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a"], "text": ["Call 010-1234-5678."]}), tmp_path / "in" / "p.parquet"
    )
    base = {
        "input": str(tmp_path / "in"),
        "output": str(tmp_path / "out"),
        "vault": str(tmp_path / "v"),
    }
    run_generalize_job(GeneralizeJobConfig(**base, types=("PHONE",)))
    with pytest.raises(JobError, match="other generalize settings"):
        run_generalize_job(GeneralizeJobConfig(**base, types=("PHONE", "PERSON")))
    with pytest.raises(JobError, match="other generalize settings"):
        run_generalize_job(
            GeneralizeJobConfig(
                **base, types=("PHONE",), settings={"rules_rungs": {"DOB": "label"}}
            )
        )
    again = run_generalize_job(GeneralizeJobConfig(**base, types=("PHONE",), batch_size=5))
    assert again["reconciliation"]["ok"]
