"""Dataset manifests: write, verify (a changed byte, a missing and an unlisted file), record
counts, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.cli import main
from spcl.manifest import (
    manifest_ref,
    read_manifest,
    record_counts,
    sha256_file,
    verify_manifest,
    write_manifest,
)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    (root / "decision=clean").mkdir(parents=True)
    (root / "a.jsonl").write_text('{"id": 1}\n{"id": 2}\n\n{"id": 3}\n')
    (root / "b.csv").write_text('id,text\n1,"two\nlines"\n2,x\n', encoding="utf-8-sig")
    pq.write_table(pa.table({"id": ["x", "y"]}), root / "decision=clean" / "part-0.parquet")
    (root / ".part-0.parquet.crc").write_text("ignored")
    return root


def test_record_counts(dataset: Path):
    assert record_counts(dataset) == {"a.jsonl": 3, "b.csv": 2, "decision=clean/part-0.parquet": 2}


def test_verify_detects_one_changed_byte(dataset: Path):
    write_manifest(dataset, kind="test", records=7, licence="CC0-1.0", iaa={"kappa": 0.83})
    assert verify_manifest(dataset).ok
    path = dataset / "decision=clean" / "part-0.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    report = verify_manifest(dataset)
    assert (
        report.changed == ["decision=clean/part-0.parquet"]
        and not report.missing
        and not report.unlisted
    )


def test_verify_names_missing_and_unlisted(dataset: Path):
    write_manifest(dataset)
    (dataset / "a.jsonl").unlink()
    (dataset / "new.txt").write_text("x")
    report = verify_manifest(dataset)
    assert (report.missing, report.unlisted, report.ok) == (["a.jsonl"], ["new.txt"], False)


def test_manifest_ref_cites_source(dataset: Path):
    write_manifest(dataset, kind="filter-output", records=5, licence="CC-BY-4.0")
    ref = manifest_ref(dataset)
    assert ref["manifest_sha256"] == sha256_file(dataset / "manifest.json")
    assert (ref["kind"], ref["records"], ref["licence"]) == ("filter-output", 5, "CC-BY-4.0")
    assert manifest_ref(dataset / "nowhere")["manifest_sha256"] is None


def test_cli_write_and_verify(dataset: Path, tmp_path: Path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "x.jsonl").write_text("{}\n")
    write_manifest(src, kind="raw")
    assert (
        main(
            [
                "manifest",
                "write",
                str(dataset),
                "--kind",
                "training-set",
                "--licence",
                "CC0-1.0",
                "--kappa",
                "0.81",
                "--source",
                str(src),
            ]
        )
        == 0
    )
    m = read_manifest(dataset)
    assert m["records"] == 7 and m["iaa"] == {"kappa": 0.81} and m["sources"][0]["kind"] == "raw"
    assert main(["manifest", "verify", str(dataset)]) == 0
    assert "OK" in capsys.readouterr().out
    with open(dataset / "b.csv", "r+b") as fh:
        fh.seek(5)
        fh.write(b"Z")
    (dataset / "extra.bin").write_bytes(b"\0")
    assert main(["manifest", "verify", str(dataset)]) == 1
    err = capsys.readouterr().err
    assert "changed: b.csv" in err and "unlisted: extra.bin" in err
    assert main(["manifest", "verify", str(tmp_path / "none")]) == 1
    assert json.loads((dataset / "manifest.json").read_text())["kind"] == "training-set"


def test_nested_dataset_with_own_manifest_is_left_out(dataset: Path):
    write_manifest(dataset)
    nested = dataset / "report"
    nested.mkdir()
    (nested / "estimates.json").write_text("{}")
    write_manifest(nested, kind="review-report")
    assert verify_manifest(dataset).ok and verify_manifest(nested).ok
    (nested / "estimates.json").write_text("{ }")
    assert verify_manifest(dataset).ok and verify_manifest(nested).changed == ["estimates.json"]
