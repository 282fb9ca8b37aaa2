"""An output folder belongs to one set of mask settings: a rerun with others is refused, not
silently skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.executor import JobError
from spcl.mask_stage import MaskJobConfig, MaskJobError, run_mask_job


def test_rerun_with_other_types_is_refused(tmp_path: Path) -> None:
    # before, the second run skipped the finished file: masked/ kept the first settings' output
    # (here, no PERSON masking) while metrics.json and the manifest named the second settings'
    # config hash
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a"], "text": ["Call 010-1234-5678."]}), tmp_path / "in" / "p.parquet"
    )
    base = {
        "input": str(tmp_path / "in"),
        "output": str(tmp_path / "out"),
        "vault": str(tmp_path / "v"),
    }
    first = run_mask_job(MaskJobConfig(**base, types=("PHONE",)))
    assert first["masked"] == 1
    with pytest.raises(MaskJobError, match="other mask settings"):
        run_mask_job(MaskJobConfig(**base, types=("PHONE", "PERSON")))
    # not a setting of the output
    again = run_mask_job(MaskJobConfig(**base, types=("PHONE",), batch_size=7))
    assert again["run"]["files_skipped"] == 1


def test_the_release_settings_leave_out_operational_knobs() -> None:
    a = MaskJobConfig(
        input="i", output="o", vault="v", backend="openai", options={"timeout_s": 10, "retries": 1}
    )
    b = MaskJobConfig(
        input="i", output="o", vault="v", backend="openai", options={"timeout_s": 99, "retries": 5}
    )
    c = MaskJobConfig(
        input="i", output="o", vault="v", backend="openai", options={"adapter": "lora/"}
    )
    assert a.release_hash() == b.release_hash() != c.release_hash()
    assert (
        a.release_hash()
        != MaskJobConfig(
            input="i", output="o", vault="v", backend="openai", names=False
        ).release_hash()
    )


def _one_file_run(tmp_path: Path) -> tuple[dict[str, str], Path]:
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a"], "text": ["Call 010-1234-5678."]}), tmp_path / "in" / "p.parquet"
    )
    base = {
        "input": str(tmp_path / "in"),
        "output": str(tmp_path / "out"),
        "vault": str(tmp_path / "v"),
    }
    assert run_mask_job(MaskJobConfig(**base, types=("PHONE",)))["masked"] == 1
    (marker,) = (tmp_path / "out" / "_done").glob("*.json")
    return base, marker


def test_an_empty_release_hash_never_passes_the_settings_check(tmp_path: Path) -> None:
    # before, a done-marker whose release_hash was "" was taken as "written before hashes existed"
    # and not checked: a rerun with other types skipped the file and left its output under the new
    # settings
    base, marker = _one_file_run(tmp_path)
    data = json.loads(marker.read_text())
    data["release_hash"] = ""
    marker.write_text(json.dumps(data))
    with pytest.raises(MaskJobError, match="other mask settings"):
        run_mask_job(MaskJobConfig(**base, types=("PHONE", "PERSON")))
    del data["release_hash"]
    marker.write_text(json.dumps(data))
    with pytest.raises(MaskJobError, match="other mask settings"):
        run_mask_job(MaskJobConfig(**base, types=("PHONE",)))


@pytest.mark.parametrize("damage", ["truncated", "not_an_object", "wrong_kinds", "huge_int"])
def test_a_damaged_done_marker_is_refused_in_one_line(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: a JSONDecodeError / AttributeError traceback out of the planner
    from spcl.cli import main
    from spcl.executor.state import MarkerError

    base, marker = _one_file_run(tmp_path)
    text = marker.read_text()
    broken = {
        "truncated": text[: len(text) // 2],
        "not_an_object": "[1, 2]",
        "wrong_kinds": json.dumps({**json.loads(text), "stats": [1], "runs": 3}),
        "huge_int": '{"key": ' + "9" * 5000 + "}",
    }[damage]
    marker.write_text(broken)
    with pytest.raises(MarkerError, match="damaged"):
        run_mask_job(MaskJobConfig(**base, types=("PHONE",)))
    code = main(
        [
            "mask",
            "--input",
            base["input"],
            "--output",
            base["output"],
            "--vault",
            base["vault"],
            "--backend",
            "rules",
            "--types",
            "PHONE",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and marker.name in err[0] and "Traceback" not in err[0]
    assert marker.read_text() == broken  # left for the user to look at


def test_a_damaged_generalize_marker_is_refused_in_one_line(tmp_path: Path) -> None:
    from spcl.executor.state import MarkerError
    from spcl.generalize.job import GeneralizeJobConfig, run_generalize_job

    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a"], "text": ["Call 010-1234-5678."]}), tmp_path / "in" / "p.parquet"
    )
    cfg = GeneralizeJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
    )
    assert run_generalize_job(cfg)["documents"] == 1
    (marker,) = (tmp_path / "out" / "_done").glob("*.json")
    data = json.loads(marker.read_text())
    for broken in (
        marker.read_text()[:40],
        json.dumps({**data, "stats": {**data["stats"], "bogus": 1}}),
        json.dumps({**data, "release_hash": ""}),
    ):
        marker.write_text(broken)
        with pytest.raises((MarkerError, JobError), match=r"damaged|other generalize settings"):
            run_generalize_job(cfg)
