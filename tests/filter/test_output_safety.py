"""Issue 21 (third hostile pass), the filter's side: --overwrite removes only what a filter run
wrote, other jobs keep out of filter outputs, a full disk or read-only folder is one line, workers
ignore a `spcl` folder in the working folder, checks run before Spark starts, user-controlled
strings cannot forge a log line."""

from __future__ import annotations

import base64
import errno
import io
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spcl.cli import main as cli_main
from spcl.io.writers import file_key
from tests.support.paths import ROOT
from tests.support.records import doc_line, write_lines


def crawl(folder: Path, n: int = 6) -> Path:
    """One JSONL file of plain records (every one lands in decision=clean) under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_lines(
        folder / "a.jsonl", [doc_line(f"d{i}", f"평범한 문장 {i} 입니다.") for i in range(n)]
    )
    return folder


def filt(*args: str, engine: str = "python") -> int:
    master = ["--master", "local[2]"] if engine == "spark" else []
    return cli_main(["filter", "--engine", engine, *master, "--no-screen", *args])


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


# item 1: --overwrite removes only what a filter run wrote
# -------------------------------------------------


def test_overwrite_refuses_a_folder_holding_anything_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = crawl(tmp_path / "in")
    out = tmp_path / "precious"
    out.mkdir()
    (out / "important.txt").write_text("keep me")
    (out / "sub").mkdir()
    (out / "sub" / "x.jsonl").write_text("{}\n")
    assert filt("-i", str(src), "-o", str(out), "--overwrite") == 2
    err = one_line_error(capsys)
    assert "did not write" in err and "refusing to --overwrite" in err
    assert (out / "important.txt").read_text() == "keep me" and (out / "sub" / "x.jsonl").exists()
    assert sorted(p.name for p in out.iterdir()) == ["important.txt", "sub"]


def test_foreign_entries_know_every_name_a_filter_run_writes(tmp_path: Path) -> None:
    from spcl.io.outputs import foreign_entries

    out = tmp_path / "out"
    names = [
        "decision=clean/part-0123456789abcdef.parquet",
        "decision=flagged/part-0123456789abcdef-00003.parquet",
        "decision=quarantine/.part-0123456789abcdef-00001.parquet.inprogress",
        "stats.json",
        "manifest.json",
        ".manifest.json.123.0a1b2c3d",
        "report.html",
        "report/scores.png",
        "report/facts.json",
        "report/manifest.json",
    ]
    for name in names:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(b"")
    assert foreign_entries(str(out)) == []
    for stray in (
        "decision=clean/part-x.parquet",
        "report/notes.txt",
        "masked/part-0.parquet",
        "stats.json.bak",
    ):
        (out / stray).parent.mkdir(parents=True, exist_ok=True)
        (out / stray).write_bytes(b"")
        assert foreign_entries(str(out)) == [
            str(out / stray if "/" not in stray or "masked" not in stray else out / "masked")
        ]
        (out / stray).unlink()
        if stray.startswith("masked"):
            (out / "masked").rmdir()


def test_overwrite_replaces_a_previous_run_and_keeps_what_is_not_the_filters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = crawl(tmp_path / "in")
    out = tmp_path / "out"
    assert filt("-i", str(src), "-o", str(out)) == 0
    # spcl report's derived view: the filter's to replace
    (out / "report.html").write_text("<html></html>")
    # a killed task's
    (out / "decision=clean" / ".part-0123456789abcdef.parquet.inprogress").write_bytes(b"")
    assert filt("-i", str(src), "-o", str(out), "--overwrite") == 0
    assert not (out / "report.html").exists()
    assert json.loads((out / "stats.json").read_text())["counts"]["clean"] == 6
    # a file that is not a part file inside a decision folder is not the filter's either
    (out / "decision=clean" / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert filt("-i", str(src), "-o", str(out), "--overwrite") == 2
    assert "notes.txt" in one_line_error(capsys)
    assert (out / "decision=clean" / "notes.txt").read_text() == "mine" and (
        out / "stats.json"
    ).exists()


def test_mask_and_generalize_refuse_a_vault_or_output_inside_a_filter_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(bytes(range(32))).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)
    out = tmp_path / "out"
    assert filt("-i", str(crawl(tmp_path / "in")), "-o", str(out)) == 0
    flagged = str(out / "decision=clean")  # any Parquet of the filter output will do as input
    outside = tmp_path / "elsewhere"
    for command in ("mask", "generalize"):
        for output, vault in (
            (out / "masked", outside / "vault"),
            (outside / "masked", out / "vault"),
            (outside / "masked", out / "deep" / "vault"),
        ):
            assert (
                cli_main(
                    [command, "--input", flagged, "--output", str(output), "--vault", str(vault)]
                )
                == 2
            )
            err = one_line_error(capsys)
            assert "filter output folder" in err and "refusing" in err, err
        assert sorted(p.name for p in out.iterdir()) == [
            "decision=clean",
            "manifest.json",
            "stats.json",
        ]
        assert not outside.exists()
    # a filter --overwrite of a folder that holds another job's outputs refuses instead of deleting
    # them
    (out / "vault").mkdir()
    (out / "vault" / "mask-0.jsonl").write_text("{}\n")
    assert filt("-i", str(tmp_path / "in"), "-o", str(out), "--overwrite") == 2
    assert (out / "vault" / "mask-0.jsonl").exists()


# item 9: checks that need no Spark run before Spark starts
# -----------------------------------------------


def test_existing_output_is_refused_before_spark_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import spcl.spark.session as session

    def no_spark(*args: object, **kw: object) -> None:
        raise AssertionError("Spark was started")

    monkeypatch.setattr(session, "build_session", no_spark)
    src = crawl(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "x").write_text("keep me")
    assert filt("-i", str(src), "-o", str(out), engine="spark") == 2
    assert "--overwrite" in one_line_error(capsys)
    assert filt("-i", str(src), "-o", str(out), "--overwrite", engine="spark") == 2
    assert "did not write" in one_line_error(capsys)
    assert (out / "x").read_text() == "keep me"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("not an input")
    assert filt("-i", str(tmp_path / "notes"), "-o", str(tmp_path / "o2"), engine="spark") == 1
    assert "no readable input files" in one_line_error(capsys)


# item 7: a full disk or a read-only folder: one line, exit 1, nothing half-written presented as
# complete -----


def _full_disk_parts(out: Path, source: Path) -> None:
    """Make every part file the filter writes for ``source`` a link to /dev/full: writes fail
    with ENOSPC."""
    key = file_key(os.path.realpath(source))
    for decision in ("clean", "flagged", "quarantine"):
        folder = out / f"decision={decision}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f".part-{key}.parquet.inprogress").symlink_to("/dev/full")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("engine", ["python", pytest.param("spark", marks=pytest.mark.slow)])
def test_a_full_disk_is_one_line(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = crawl(tmp_path / "in")
    out = tmp_path / "out"
    _full_disk_parts(out, src / "a.jsonl")
    import spcl.filter.driver as driver

    monkeypatch.setattr(driver, "clear_filter_output", lambda output: None)  # keep the links
    monkeypatch.setattr(driver, "foreign_entries", lambda output: [])
    assert filt("-i", str(src), "-o", str(out), "--overwrite", engine=engine) == 1
    err = one_line_error(capsys)
    assert "No space left on device" in err and ".inprogress" in err and str(out) in err, err
    assert not (out / "stats.json").exists() and not (out / "manifest.json").exists()


def test_stats_and_manifest_are_never_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = crawl(tmp_path / "in")
    out = tmp_path / "out"
    real_fsync = os.fsync
    calls = []

    def full_at_manifest(fd: int) -> None:  # the disk fills up while the manifest is written
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_at_manifest)
    assert filt("-i", str(src), "-o", str(out)) == 1
    err = one_line_error(capsys)
    assert f"cannot write {out}/manifest.json: No space left on device (ENOSPC)" in err, err
    assert not (out / "manifest.json").exists()  # not a 0-byte or partial file
    # no temporary left behind
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []
    from spcl.io.outputs import IncompleteOutput, check_complete

    with pytest.raises(IncompleteOutput, match=r"no manifest\.json"):
        check_complete(out)


def _deny_writes_under(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make ``folder`` read-only: chmod when that binds (not root), else refuse writes under it
    in this process."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        folder.chmod(0o500)
        return
    inside = str(folder.resolve())
    err = errno.EROFS

    def denied(path: object) -> bool:
        return os.path.realpath(os.fspath(path)).startswith(inside)  # type: ignore[arg-type]

    real_open, real_mkdir, real_io_open = os.open, os.mkdir, io.open

    def os_open(path, flags, *a, **kw):  # type: ignore[no-untyped-def]
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and denied(path):
            raise OSError(err, os.strerror(err), os.fspath(path))
        return real_open(path, flags, *a, **kw)

    def mkdir(path, *a, **kw):  # type: ignore[no-untyped-def]
        if denied(path):
            raise OSError(err, os.strerror(err), os.fspath(path))
        return real_mkdir(path, *a, **kw)

    def io_open(file, mode="r", *a, **kw):  # type: ignore[no-untyped-def]
        if isinstance(file, (str, os.PathLike)) and any(c in mode for c in "wax+") and denied(file):
            raise OSError(err, os.strerror(err), os.fspath(file))
        return real_io_open(file, mode, *a, **kw)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr("builtins.open", io_open)


def test_a_read_only_vault_or_output_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(bytes(range(32))).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)
    filtered = tmp_path / "filtered"
    assert filt("-i", str(crawl(tmp_path / "in")), "-o", str(filtered)) == 0
    flagged = str(filtered / "decision=clean")
    ro = tmp_path / "ro"
    _deny_writes_under(monkeypatch, ro)
    capsys.readouterr()
    cases = [
        ["mask", "--input", flagged, "--output", str(tmp_path / "m"), "--vault", str(ro / "vault")],
        ["mask", "--input", flagged, "--output", str(ro / "m"), "--vault", str(tmp_path / "v1")],
        [
            "generalize",
            "--input",
            flagged,
            "--output",
            str(tmp_path / "g"),
            "--vault",
            str(ro / "vault"),
        ],
        [
            "filter",
            "--engine",
            "python",
            "--no-screen",
            "-i",
            str(tmp_path / "in"),
            "-o",
            str(ro / "f"),
        ],
        [
            "annotate",
            "--input",
            str(tmp_path / "in" / "a.jsonl"),
            "--output",
            str(ro / "a"),
            "--teacher",
            "openai:t1@http://127.0.0.1:9/v1",
            "--teacher",
            "openai:t2@http://127.0.0.1:9/v1",
        ],
    ]
    for args in cases:
        assert cli_main(args) == 1, args
        err = one_line_error(capsys)
        assert re.match(
            rf"spcl {args[0]}: cannot (write|access) {re.escape(str(ro))}/\S*: "
            r"(Read-only file system \(EROFS\)|Permission denied \(EACCES\))$",
            err.strip(),
        ), err


# item 8: workers import the installed spcl, whatever the working folder
# -----------------------------------


@pytest.mark.slow
def test_spark_workers_ignore_a_spcl_folder_in_the_working_folder_and_progress_is_drawn(
    tmp_path: Path,
) -> None:
    src = crawl(tmp_path / "in")
    decoy = tmp_path / "cwd"
    (decoy / "spcl").mkdir(parents=True)
    (decoy / "spcl" / "__init__.py").write_text("raise ImportError('decoy spcl imported')\n")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYSPARK_PYTHON": sys.executable,
        "SPCL_PROGRESS": "1",
    }
    # -P: the driver itself does not import the decoy (as the installed `spcl` script does not)
    proc = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "spcl.cli",
            "filter",
            "-i",
            str(src),
            "-o",
            str(tmp_path / "out"),
            "--no-screen",
            "--master",
            "local[1]",
        ],
        cwd=decoy,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads((tmp_path / "out" / "stats.json").read_text())["counts"]["clean"] == 6
    # asked for (SPCL_PROGRESS=1; else a TTY only), a Spark run draws the filter's progress: files
    # and rows
    assert re.search(
        r"(^|\n)filter  1/1 files  6 docs  100% \[#+\]  .* in \d+:\d\d", proc.stderr
    ), proc.stderr[-2000:]


def test_a_worker_failure_is_one_line() -> None:
    from spcl.spark.errors import task_failure_line

    class Py4JJavaError(Exception):
        pass

    Py4JJavaError.__module__ = "py4j.protocol"
    trace = (
        "An error occurred while calling o80.collectToPython.\n: org.apache.spark.SparkException:"
        " Job aborted\n"
        + (
            "\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages"
            "(DAGScheduler.scala:1)\n"
        )
        * 40
        + "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n  File"
        ' "/venv/pyspark/worker.py", line 1, in main\n    func = read_command(pickleSer,'
        " infile)\nImportError: cannot import name '__version__' from 'spcl' (unknown location)\n"
        + (
            "\tat org.apache.spark.api.python.BasePythonRunner.handlePythonException"
            "(PythonRunner.scala:1)\n"
        )
        * 40
    )
    line = task_failure_line(Py4JJavaError(trace))
    assert line is not None and "\n" not in line
    assert "ImportError: cannot import name '__version__' from 'spcl'" in line and "install" in line
    assert task_failure_line(ValueError("not Spark")) is None


# item 11: user-controlled strings cannot forge a log line
# ------------------------------------------------


def test_ids_and_paths_cannot_forge_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spcl.messages import OneLineFormatter, shown

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("spcl.test.forge")
    logger.addHandler(handler)
    try:
        logger.warning("refused id=%s", "doc-1\nINFO spcl: all 242 rows restored")
    finally:
        logger.removeHandler(handler)
    assert (
        stream.getvalue()
        == "WARNING spcl.test.forge: refused id=doc-1\\nINFO spcl: all 242 rows restored\n"
    )
    assert shown("住所 a\tb\x1b[0m\\") == "住所 a\\tb\\x1b[0m\\\\"
    out = tmp_path / "o\nspcl filter: done"
    out.mkdir()
    (out / "x").write_text("keep me")
    assert filt("-i", str(crawl(tmp_path / "in")), "-o", str(out)) == 2
    assert "o\\nspcl filter: done" in one_line_error(capsys)


# smaller: --text-field / --id-field
# --------------------------------------------------------------------------


def test_text_and_id_field_flags(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    write_lines(
        src / "a.jsonl",
        [json.dumps({"url": f"u{i}", "body": f"문장 {i}"}).encode() for i in range(4)],
    )
    out = tmp_path / "out"
    assert filt("-i", str(src), "-o", str(out), "--text-field", "body", "--id-field", "url") == 0
    from spcl.io.outputs import output_dataset

    rows = output_dataset(out).to_table(columns=["id", "decision"]).to_pylist()
    assert sorted(r["id"] for r in rows) == ["u0", "u1", "u2", "u3"]
    assert {r["decision"] for r in rows} == {"clean"}


# smaller: stats.json records the resolved model; spcl report finds its card from anywhere
# --------------------


def test_report_finds_the_model_card_outside_the_source_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spcl.report.facts import filter_facts

    src = crawl(tmp_path / "in")
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)  # not the source tree: "models/screen-default" does not exist here
    assert cli_main(["filter", "--engine", "python", "-i", str(src), "-o", str(out)]) == 0
    stats = json.loads((out / "stats.json").read_text())
    card = json.loads((ROOT / "models" / "screen-default" / "model_card.json").read_text())
    assert (
        Path(stats["model"]).is_absolute() and (Path(stats["model"]) / "model_card.json").is_file()
    )
    assert stats["model_version"] == f"screen-default@{card['model_sha256'][:12]}"
    facts = filter_facts(out)
    assert facts["scores"]["threshold_source"] == "model card"
    assert facts["scores"]["thresholds"] == {k: float(v) for k, v in card["thresholds"].items()}
    # an older output that recorded the model as a relative path finds the shipped card too
    stats["model"] = "models/screen-default"
    (out / "stats.json").write_text(json.dumps(stats))
    assert filter_facts(out)["scores"]["threshold_source"] == "model card"
