"""Issue 15: never delete, re-read or double-count the input — one test per numbered item, both
engines.

Every test checks that the input files are untouched (SHA-256 of every file before and after), that
every input record is in exactly one output row, and that the message names the problem.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.cli import main as cli_main
from spcl.config import Settings, load_settings
from spcl.filter.job import FilterJob, JobError, UsageError, run_filter
from spcl.io.outputs import output_dataset
from spcl.io.record_rows import derive_id
from spcl.manifest import verify_manifest
from tests.support.records import doc_line, write_lines

ENGINES = ["python", pytest.param("spark", marks=pytest.mark.slow)]


def snapshot(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder`` (links not followed), by relative path."""
    out = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def corpus(folder: Path, files: int = 3, per_file: int = 30, prefix: str = "f") -> int:
    """``files`` JSONL files of ``per_file`` plain records each; returns the record count."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        write_lines(
            folder / f"{prefix}{f}.jsonl",
            [doc_line(f"{prefix}{f}-{i}", f"평범한 문장 {i} 입니다.") for i in range(per_file)],
        )
    return files * per_file


def settings() -> Settings:
    return load_settings(overrides={"screen.enabled": False})


def run(engine: str, inputs: list[Path | str], out: Path, **kw: object) -> dict:
    """Run the filter job in ``engine`` (Spark: local[2])."""
    master = "local[2]" if engine == "spark" else None
    return run_filter(
        FilterJob(tuple(str(i) for i in inputs), str(out), settings(), engine, master, **kw)
    )


def rows(out: Path) -> list[dict]:
    return output_dataset(out).to_table().to_pylist()


def assert_each_record_once(out: Path, stats: dict, expected: int) -> list[dict]:
    """Every input record in exactly one output row; stats, footers and manifest agree."""
    got = rows(out)
    keys = [(r["source"], r["position"]) for r in got]
    assert len(keys) == len(set(keys)) == expected
    assert len({r["row_key"] for r in got}) == expected
    rec = stats["reconciliation"]
    assert rec["ok"] and rec["input_records"] == rec["output_records"] == expected
    assert sum(stats["counts"].values()) == expected
    assert verify_manifest(out).ok
    return got


def cli(engine: str, *args: str) -> int:
    return cli_main(["filter", "--engine", engine, "--no-screen", *args])


# 1. --overwrite must never delete the input ------------------------------------------------------


@pytest.mark.parametrize("engine", ["python", "spark"])  # refused before Spark starts: fast in both
def test_1_overwrite_never_deletes_the_input(
    tmp_path: Path, engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    crawl = data / "crawl"
    corpus(crawl)
    (tmp_path / "link").symlink_to(crawl)
    before = snapshot(tmp_path)
    cases = [
        (crawl, crawl, " is input "),  # output == input
        (crawl, data, " contains input "),  # output contains the input
        (crawl, crawl / "out", " lies inside input "),  # output inside the input
        (tmp_path / "link", crawl, " is input "),  # the same folder through a symlink
        (f"{crawl}/*.jsonl", crawl, " contains input "),  # a glob matching files in that folder
        (f"{data}/*", crawl, " is input "),  # a glob matching that folder
        (f"file://{crawl}", data, " contains input "),  # a file: URL
    ]
    for inp, out, relation in cases:
        assert cli(engine, "-i", str(inp), "-o", str(out), "--overwrite") == 2, (inp, out)
        err = capsys.readouterr().err
        assert relation in err and "refusing" in err, err
        assert snapshot(tmp_path) == before
    assert not (crawl / "out").exists()


def test_1_remote_urls_are_compared_too() -> None:
    from spcl.io.inputs import UnsafeOutput, check_output

    with pytest.raises(UnsafeOutput, match="lies inside input"):
        check_output(["s3a://bucket/crawl/"], "s3://bucket/crawl/out")
    with pytest.raises(UnsafeOutput, match="contains input"):
        check_output(["s3a://bucket/crawl/*.jsonl.gz"], "s3a://bucket")
    # a sibling with a common prefix is fine
    check_output(["s3a://bucket/crawl"], "s3a://bucket/crawl-out")


def test_1_a_glob_guards_what_it_matches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spcl.io.inputs import UnsafeOutput, check_output

    corpus(tmp_path / "crawl")
    monkeypatch.chdir(tmp_path / "crawl")
    check_output(["*.jsonl"], "out")  # files in the working folder, output beside them: fine
    with pytest.raises(UnsafeOutput, match="lies inside input"):
        check_output(["**/*.jsonl"], "out")  # a recursive glob would read the output next time
    with pytest.raises(UnsafeOutput, match="contains input"):
        check_output(["*.jsonl"], ".")


# 2. output inside the input is never read back; .json side files are not records ------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_2_previous_output_is_not_read_back(
    tmp_path: Path, engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in"
    n = corpus(src)
    (src / "stats.json").write_text(json.dumps({"counts": {"clean": 90}}, indent=2))
    (src / "manifest.json").write_text(json.dumps({"files": {}}, indent=2))
    before = snapshot(src)
    assert cli(engine, "-i", str(src), "-o", str(src / "out2")) == 2
    assert "lies inside input" in capsys.readouterr().err
    assert not (src / "out2").exists()
    out = tmp_path / "out"
    stats = run(engine, [src], out)
    assert_each_record_once(out, stats, n)
    assert stats["skipped_file_reasons"] == {"spcl_side_file": 2}
    assert {Path(p).name for p in stats["skipped_files"]} == {"stats.json", "manifest.json"}
    assert snapshot(src) == before


# 3. overlapping inputs are read once --------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_3_overlapping_inputs_count_once(tmp_path: Path, engine: str) -> None:
    in1 = tmp_path / "in1"
    n = corpus(in1)
    (tmp_path / "alias.jsonl").symlink_to(in1 / "f0.jsonl")
    (in1 / "sub").mkdir()
    (in1 / "sub" / "again.jsonl").symlink_to(in1 / "f1.jsonl")
    before = snapshot(in1)
    out = tmp_path / "out"
    stats = run(engine, [in1, in1 / "f0.jsonl", tmp_path / "alias.jsonl", f"{in1}/*.jsonl"], out)
    got = assert_each_record_once(out, stats, n)
    assert stats["duplicate_input_files"] >= 4
    assert len(stats["input_files"]) == 3
    assert {r["source"] for r in got} == {str((in1 / f"f{i}.jsonl").resolve()) for i in range(3)}
    assert snapshot(in1) == before


# 5. content decides how a file is read, not its name ----------------------------------------------


def _content_corpus(folder: Path) -> tuple[int, bytes]:
    folder.mkdir()
    plain = [doc_line(f"p{i}", f"문장 {i} 입니다.") for i in range(500)]
    write_lines(folder / "plain-named.jsonl.gz", plain)  # plain text with a .gz name
    write_lines(
        folder / "gzip-named.jsonl", [doc_line(f"g{i}", f"글 {i}") for i in range(20)], gz=True
    )
    table = pa.table({"id": [f"q{i}" for i in range(7)], "text": [f"行 {i}" for i in range(7)]})
    pq.write_table(table, folder / "parquet-named.jsonl")
    broken = gzip.compress(b"\n".join(doc_line(f"b{i}", "x" * 50) for i in range(40)), mtime=0)
    broken = broken[:10] + b"\x00garbage\xff" * 20  # a gzip header, then nothing decodable
    (folder / "broken.jsonl.gz").write_bytes(broken)
    return 500 + 20 + 7 + 1, broken


@pytest.mark.parametrize("engine", ENGINES)
def test_5_content_not_extension(tmp_path: Path, engine: str) -> None:
    src = tmp_path / "in"
    n, broken = _content_corpus(src)
    before = snapshot(src)
    out = tmp_path / "out"
    stats = run(engine, [src], out)
    got = assert_each_record_once(out, stats, n)
    quarantined = [r for r in got if r["decision"] == "quarantine"]
    assert [r["quarantine_reason"] for r in quarantined] == ["truncated_or_corrupt_stream"]
    assert quarantined[0]["raw"] == broken  # the row carries the bytes it stands for
    ids = {r["id"] for r in got}
    assert {f"p{i}" for i in range(500)} | {f"g{i}" for i in range(20)} | {
        f"q{i}" for i in range(7)
    } <= ids
    assert snapshot(src) == before


def test_5_every_quarantine_row_carries_bytes_or_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import spcl.io.streams as readers

    src = tmp_path / "in"
    src.mkdir()
    packed = gzip.compress(
        b"\n".join(doc_line(f"t{i}", "y" * 80) for i in range(200)) + b"\n", mtime=0
    )
    (src / "cut.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    monkeypatch.setattr(readers, "MAX_RAW_FILE_BYTES", 100)
    out = tmp_path / "out"
    stats = run("python", [src], out)
    got = rows(out)
    q = [r for r in got if r["decision"] == "quarantine"]
    assert [r["quarantine_reason"] for r in q] == ["truncated_or_corrupt_stream_too_large_to_keep"]
    assert q[0]["raw"] is None and q[0]["source"].endswith("cut.jsonl.gz")
    assert stats["reconciliation"]["ok"]


def test_usage_errors_are_raised_before_anything_is_written(tmp_path: Path) -> None:
    src = tmp_path / "in"
    corpus(src)
    before = snapshot(tmp_path)
    with pytest.raises(UsageError):
        run("python", [src], src, overwrite=True)
    with pytest.raises(JobError, match="input not found"):
        run("python", [tmp_path / "nope"], tmp_path / "o")
    assert snapshot(tmp_path) == before


# 4. listing: no loops, every file whatever its name, unlistable entries reported ------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_4_listing_follows_no_loop_and_keeps_every_name(tmp_path: Path, engine: str) -> None:
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "up").symlink_to("..")  # a loop back to in/
    names = [
        "hash#1.jsonl",
        "a[1].jsonl",
        "b{x}.jsonl",
        "with space.jsonl",
        "pct%41.jsonl",
        "q?.jsonl",
    ]
    for k, name in enumerate(names):
        write_lines(
            src / "sub" / name if k % 2 else src / name,
            [doc_line(f"{k}-{i}", f"문서 {k} {i}") for i in range(3)],
        )
    (src / "dead.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    os.mkfifo(src / "pipe.jsonl")
    # skipped in a folder, read when named (Spark skips both)
    for hidden in ("_named.jsonl", ".named.jsonl"):
        write_lines(tmp_path / hidden, [doc_line(f"{hidden}-{i}", "숨은 파일") for i in range(2)])
    before = snapshot(src)
    out = tmp_path / "out"
    stats = run(engine, [src, tmp_path / "_named.jsonl", tmp_path / ".named.jsonl"], out)
    got = assert_each_record_once(out, stats, 3 * len(names) + 4)
    assert stats["counts"]["quarantine"] == 0
    assert sorted(Path(r["source"]).name for r in got) == sorted(
        [n for n in names for _ in range(3)] + ["_named.jsonl", ".named.jsonl"] * 2
    )
    skipped = {Path(p).name for p in stats["skipped_files"]}
    assert {"dead.jsonl", "pipe.jsonl"} <= skipped
    assert stats["skipped_file_reasons"]["not_a_file_or_broken_link"] == 2
    assert snapshot(src) == before


# 6. a UTF-8 byte order mark costs no record -------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_6_bom_keeps_the_first_record(tmp_path: Path, engine: str) -> None:
    src = tmp_path / "in"
    src.mkdir()
    lines = [doc_line(f"m{i}", f"本文 {i} です。") for i in range(5)]
    (src / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n")
    (src / "bom.jsonl.gz").write_bytes(gzip.compress(b"\xef\xbb\xbf" + b"\n".join(lines), mtime=0))
    (src / "bom-array.json").write_bytes(b"\xef\xbb\xbf[" + b",".join(lines) + b"]")
    before = snapshot(src)
    out = tmp_path / "out"
    stats = run(engine, [src], out)
    got = assert_each_record_once(out, stats, 15)
    assert stats["counts"]["quarantine"] == 0
    assert sorted(r["id"] for r in got) == sorted(f"m{i}" for i in range(5) for _ in range(3))
    first = [r for r in got if r["id"] == "m0" and r["source"].endswith("bom.jsonl")]
    assert first[0]["position"] == 3  # byte offsets still count the BOM
    assert snapshot(src) == before


# 7. ids: duplicates counted, non-string ids kept as strings, one row key per record, same in both
# engines


def _id_corpus(src: Path) -> None:
    src.mkdir()
    write_lines(
        src / "a.jsonl",
        [
            b'{"id": 7, "text": "int seven"}',
            b'{"id": "7", "text": "string seven"}',
            b'{"id": "dup", "text": "one"}',
            b'{"id": "dup", "text": "two"}',
            b'{"text": "no id"}',
            b'{"id": 7.5, "text": "float"}',
            b'{"id": [1, 2], "text": "list"}',
            b'{"id": true, "text": "bool"}',
        ],
    )
    write_lines(
        src / "b.jsonl", [b'{"id": "dup", "text": "three"}', b'{"id": "7", "text": "again"}']
    )


def test_7_ids_are_counted_kept_as_strings_and_keyed_uniquely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in"
    _id_corpus(src)
    before = snapshot(src)
    monkeypatch.chdir(tmp_path)
    stats = run("python", [Path("in")], Path("out"))  # relative paths: sources still absolute
    got = assert_each_record_once(tmp_path / "out", stats, 10)
    assert sorted(
        r["id"] for r in got if r["id"] != derive_id(r["source"], r["position"])
    ) == sorted(["7", "7", "7", "dup", "dup", "dup", "7.5", "[1,2]", "true"])
    assert (
        stats["duplicate_ids"] == 4 and stats["non_string_ids"] == 4 and stats["derived_ids"] == 1
    )
    assert all(Path(r["source"]).is_absolute() for r in got)
    assert snapshot(src) == before


@pytest.mark.slow
def test_7_both_engines_give_the_same_ids_and_row_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in"
    _id_corpus(src)
    monkeypatch.chdir(tmp_path)
    py = run("python", [Path("in")], Path("py"))
    import spcl.filter.job as fj

    monkeypatch.setattr(fj, "ARROW_ID_COUNT_ROWS", 0)  # duplicate ids counted by a Spark job here
    sp = run("spark", [src], tmp_path / "sp")
    key = ("id", "row_key", "source", "position", "decision")
    assert sorted(tuple(r[k] for k in key) for r in rows(tmp_path / "py")) == sorted(
        tuple(r[k] for k in key) for r in rows(tmp_path / "sp")
    )
    for k in ("duplicate_ids", "non_string_ids", "derived_ids", "counts"):
        assert py[k] == sp[k], k


def _shards_with_repeated_ids(src: Path) -> int:
    src.mkdir()
    for f in range(3):  # the same 40 ids in every shard, and each id twice within a shard
        write_lines(
            src / f"s{f}.jsonl",
            [
                (
                    doc_line(f"doc-{i % 40}", f"연락처 010-23{f}{i % 10}-{1000 + i} 문의")
                    if i % 3 == 0
                    else doc_line(f"doc-{i % 40}", f"평범한 문장 {f} {i}")
                )
                for i in range(80)
            ],
        )
    return 240


@pytest.mark.parametrize("engine", ENGINES)
def test_7_review_sample_counts_records_not_ids(
    tmp_path: Path, engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in"
    n = _shards_with_repeated_ids(src)
    out = tmp_path / "out"
    stats = run("python", [src], out)
    assert_each_record_once(out, stats, n)
    assert stats["duplicate_ids"] == n - 40
    before = snapshot(out)
    batch = tmp_path / "batch"
    assert (
        cli_main(
            [
                "review",
                "export",
                "--input",
                str(out),
                "--output",
                str(batch),
                "--n",
                "60",
                "--seed",
                "3",
                "--reviewers",
                "a,b",
                "--format",
                "csv",
                "--engine",
                engine,
            ]
        )
        == 0
    )
    import csv

    with open(batch / "sample.csv", encoding="utf-8-sig", newline="") as fh:
        sample = list(csv.DictReader(fh))
    assert len(sample) == 60 == len({r["row_key"] for r in sample})
    assert len({r["id"] for r in sample}) < 60  # repeated ids are in the sample as separate records
    for name in ("a", "b"):  # both reviewers label everything: agree measures 60 records
        path = batch / f"reviewer-{name}.csv"
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            filled = [
                {
                    **r,
                    "label": (
                        "SCPI" if r["decision"] == "flagged" or (name == "b" and k < 3) else "NONE"
                    ),
                }
                for k, r in enumerate(reader)
            ]
            fields = reader.fieldnames
        with open(path, "w", encoding="utf-8-sig", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=fields)
            writer.writeheader()
            writer.writerows(filled)
    capsys.readouterr()
    assert (
        cli_main(["review", "agree", str(batch / "reviewer-a.csv"), str(batch / "reviewer-b.csv")])
        == 0
    )
    assert "coverage: 60 of 60" in capsys.readouterr().out
    path = batch / "reviewer-b.csv"  # one record left unlabelled: refused, naming its id and row
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    head, first = lines[0].split(","), lines[1].split(",")
    first[head.index("label")] = ""
    path.write_text("\n".join([lines[0], ",".join(first), *lines[2:]]) + "\n", encoding="utf-8")
    assert cli_main(["review", "agree", str(batch / "reviewer-a.csv"), str(path)]) == 1
    assert (
        f"{first[head.index('id')]} (row {first[head.index('row_key')][:9]})"
        in capsys.readouterr().err
    )
    assert snapshot(out) == before


# 8. an unfinished output is refused unless asked for ----------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_8_incomplete_output_is_refused(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import spcl.filter.results as results
    from spcl.io.outputs import IncompleteOutput

    src = tmp_path / "in"
    n = corpus(src)
    out = tmp_path / "out"
    real_summarize = results.summarize

    # the run dies after writing every Parquet file
    def killed(*args: object, **kw: object) -> dict:
        raise KeyboardInterrupt

    monkeypatch.setattr(results, "summarize", killed)
    with pytest.raises(KeyboardInterrupt):
        run("python", [src], out)
    monkeypatch.setattr(results, "summarize", real_summarize)
    assert not (out / "stats.json").exists()
    before = snapshot(out)
    with pytest.raises(IncompleteOutput, match=r"no stats\.json"):
        output_dataset(out)
    assert output_dataset(out, allow_incomplete=True).count_rows() == n
    batch = tmp_path / "batch"
    args = [
        "review",
        "export",
        "--input",
        str(out),
        "--output",
        str(batch),
        "--n",
        "5",
        "--format",
        "csv",
        "--engine",
        engine,
    ]
    capsys.readouterr()
    assert cli_main(args) == 1
    err = capsys.readouterr().err
    assert "no stats.json" in err and "--allow-incomplete" in err and "Traceback" not in err
    assert not batch.exists()
    assert cli_main([*args, "--allow-incomplete"]) == 0
    assert snapshot(out) == before
    # a finished run whose manifest went missing is incomplete too
    done = tmp_path / "done"
    stats = run("python", [src], done)
    assert_each_record_once(done, stats, n)
    (done / "manifest.json").unlink()
    with pytest.raises(IncompleteOutput, match=r"no manifest\.json"):
        output_dataset(done)


# 9. agreement only over documents every reviewer labelled, or an honest refusal -------------------


def _review_file(path: Path, labels: dict[str, str]) -> Path:
    path.write_text(
        "id,label,categories,note\n" + "".join(f"{i},{lab},," + "\n" for i, lab in labels.items()),
        encoding="utf-8",
    )
    return path


def test_9_agree_refuses_partial_disjoint_empty_and_repeated_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = {f"d{i}": "SCPI" if i % 3 == 0 else "NONE" for i in range(12)}
    a = _review_file(tmp_path / "reviewer-a.csv", full)
    b = _review_file(
        tmp_path / "reviewer-b.csv", {k: v for k, v in full.items() if k not in ("d4", "d7")}
    )
    other = _review_file(tmp_path / "reviewer-c.csv", {f"x{i}": "NONE" for i in range(5)})
    empty = _review_file(tmp_path / "reviewer-d.csv", dict.fromkeys(full, ""))
    before = snapshot(tmp_path)

    def agree(*files: Path, extra: tuple[str, ...] = ()) -> tuple[int, str, str]:
        code = cli_main(
            [
                "review",
                "agree",
                *map(str, files),
                "--output",
                str(tmp_path / "agreement.json"),
                *extra,
            ]
        )
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    code, _, err = agree(a, b)  # different coverage: refused, naming the ids
    assert code == 1 and "d4" in err and "d7" in err and "--allow-partial" in err
    code, out, _ = agree(a, b, extra=("--allow-partial",))
    assert code == 0 and "coverage: 10 of 12" in out
    for files in ((a, other), (a, empty)):  # nothing in common: refused even with --allow-partial
        code, _, err = agree(*files, extra=("--allow-partial",))
        assert code == 1 and "no document is labelled by every reviewer" in err
    code, _, err = agree(a, a)
    assert code == 1 and "given twice" in err
    code, _, err = agree(a, tmp_path / "." / "reviewer-a.csv")
    assert code == 1 and "given twice" in err
    for line in err.splitlines():
        assert "Traceback" not in line
    (tmp_path / "agreement.json").unlink(missing_ok=True)
    assert snapshot(tmp_path) == before


# 10. one-line errors, not tracebacks --------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_10_one_line_errors(
    tmp_path: Path, engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in"
    n = corpus(src, files=2, per_file=10)
    (tmp_path / "afile").write_text("keep me")
    empty_screen = tmp_path / "empty-screen.yaml"
    empty_screen.write_text("screen:\ninput:\n  text_field: text\n")
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("input:\n  text_field: t\xe9xt\n".encode("latin-1"))
    wrong_field = tmp_path / "wrong-field.yaml"
    wrong_field.write_text("input:\n  text_field: body\n")
    before = snapshot(tmp_path)
    master = ["--master", "local[2]"] if engine == "spark" else []

    def filt(*args: str) -> tuple[int, str]:
        code = cli_main(["filter", "--engine", engine, *master, "-i", str(src), *args])
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return code, captured.err

    assert filt("-o", str(tmp_path / "o1"), "--conf", str(tmp_path))[0] == 2
    code, err = filt("-o", str(tmp_path / "o1"), "--conf", str(latin1))
    assert code == 2 and "not UTF-8" in err
    code, err = filt("-o", str(tmp_path / "afile"), "--no-screen", "--overwrite")
    assert code == 2 and "is an existing file" in err
    assert (tmp_path / "afile").read_text() == "keep me"
    code, err = filt("-o", str(tmp_path / "o2"), "--no-screen", "--conf", str(empty_screen))
    assert code == 0
    code, err = filt("-o", str(tmp_path / "o3"), "--no-screen", "--conf", str(wrong_field))
    assert (
        code == 1
        and "every one of 20 records was quarantined" in err
        and "input.text_field='body'" in err
    )
    stats = json.loads((tmp_path / "o3" / "stats.json").read_text())
    assert_each_record_once(tmp_path / "o3", stats, n)  # still written, every record in quarantine
    if engine == "python":
        with pytest.raises(SystemExit) as exit_info:
            cli_main(
                [
                    "review",
                    "export",
                    "--input",
                    str(tmp_path / "o2"),
                    "--output",
                    str(tmp_path / "b"),
                    "--n",
                    "0",
                ]
            )
        assert exit_info.value.code == 2 and "--n: 0 is not at least 1" in capsys.readouterr().err
    assert {k: v for k, v in snapshot(tmp_path).items() if k in before} == before


# 11. smaller: deep JSON, JSON arrays, non-string ids, a key file open to others -------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_11_deep_json_arrays_and_non_string_ids(tmp_path: Path, engine: str) -> None:
    src = tmp_path / "in"
    src.mkdir()
    deep = b'{"id": "deep", "text": "x", "meta": ' + b"[" * 3000 + b"]" * 3000 + b"}"
    write_lines(
        src / "deep.jsonl", [doc_line("ok-1", "평범한 문장"), deep, b"[" * 3000 + b"]" * 3000]
    )
    records = [{"id": i, "text": f"配列の要素 {i}"} for i in range(6)]
    (src / "pretty.json").write_text(
        json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    broken = (json.dumps(records, indent=2)[:-20]).encode()
    (src / "broken.json").write_bytes(broken)
    before = snapshot(src)
    out = tmp_path / "out"
    stats = run(engine, [src], out)
    got = assert_each_record_once(out, stats, 3 + 6 + 1)
    by_reason = {}
    for r in got:
        if r["decision"] == "quarantine":
            by_reason.setdefault(r["quarantine_reason"], []).append(r)
    assert sorted(by_reason) == ["malformed_json", "too_deep"]
    assert len(by_reason["too_deep"]) == 2 and by_reason["too_deep"][0]["raw"] in (
        deep,
        b"[" * 3000 + b"]" * 3000,
    )
    # the broken array, kept whole
    assert [r["raw"] for r in by_reason["malformed_json"]] == [broken]
    array_rows = sorted(
        (r["position"], r["id"]) for r in got if r["source"].endswith("pretty.json")
    )
    assert array_rows == [(i, str(i)) for i in range(6)]  # ids kept as strings
    assert stats["non_string_ids"] == 6
    assert snapshot(src) == before


def test_11_key_file_open_to_others_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from spcl.mask.vault import resolve_key, write_key_file

    key_file = write_key_file(tmp_path / "vault.key")
    with caplog.at_level("WARNING"):
        key = resolve_key(key_file)
    assert "accessible to group/others" not in caplog.text
    os.chmod(key_file, 0o644)
    with caplog.at_level("WARNING"):
        assert resolve_key(key_file) == key
    assert "accessible to group/others (mode 644)" in caplog.text and "chmod 600" in caplog.text
    assert key_file.read_text().strip() not in caplog.text
