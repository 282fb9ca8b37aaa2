"""The mask job: outputs, fail-closed paths, fallback, resume after a killed run, no values in
logs/metrics."""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.extract.backends import BackendUnavailable, Extraction, Extractor
from spcl.mask import reassemble_text
from spcl.mask.vault import open_vault
from spcl.mask_stage import (
    FAILED_SCHEMA,
    MASKED_SCHEMA,
    MaskJobConfig,
    MaskRunner,
    export_predictions,
    file_key,
    list_input_files,
    load_markers,
    run_mask_job,
)
from spcl.synth.pii import generate_records

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """Synthetic ko/ja/en documents with gold entities (the issue-4 generator, seed 42)."""
    recs = generate_records(seed=42)
    return recs["validation"][:60]


def write_flagged(folder: Path, records: list[dict], n_files: int) -> dict[str, dict]:
    """Write ``records`` as the filter job's flagged Parquet (id, text, lang) over ``n_files``
    files."""
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n_files):
        part = records[k::n_files]
        table = pa.table(
            {
                "id": [r["id"] for r in part],
                "decision": ["flagged"] * len(part),
                "text": [r["source_text"] for r in part],
                "lang": [r["lang"] for r in part],
            }
        )
        pq.write_table(table, folder / f"part-{k:05d}.parquet")
    return {r["id"]: r for r in records}


def read_dir(folder: Path) -> list[dict]:
    """All rows of the Parquet files in ``folder``."""
    rows: list[dict] = []
    for part in sorted(folder.glob("*.parquet")):
        rows += pq.read_table(part).to_pylist()
    return rows


def vault_record_ids(vault: Path) -> list[str]:
    """Ids of every record line in the vault's writer files (duplicates kept)."""
    ids: list[str] = []
    for path in sorted(vault.glob("*.jsonl")):
        ids += [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]
    return ids


class ScriptedExtractor(Extractor):
    """Test double (not a model): returns a fixed raw output or error per document, chosen by a
    function of the text. It stands in for a model whose exact output a test must control (malformed
    rows, think blocks, hallucinations); the real backends are tested in test_backends*.py."""

    name = "scripted"
    model = "scripted-v0"

    def __init__(self, answer, *, fail_after_batches: int | None = None):
        super().__init__()
        self.answer = answer
        self.batches = 0
        self.fail_after_batches = fail_after_batches

    def run(self, texts: list[str]) -> list[Extraction]:
        self.batches += 1
        if self.fail_after_batches is not None and self.batches > self.fail_after_batches:
            raise BackendUnavailable("scripted backend went away")
        out = []
        for text in texts:
            ans = self.answer(text)
            out.append(
                Extraction(error=ans[1])
                if isinstance(ans, tuple)
                else Extraction(raw=ans, generated_tokens=3)
            )
        return out


def cfg_for(tmp: Path, **kw) -> MaskJobConfig:
    """A job config under ``tmp``."""
    base = {
        "input": str(tmp / "in"),
        "output": str(tmp / "out"),
        "vault": str(tmp / "vault"),
        "batch_size": 16,
    }
    base.update(kw)
    return MaskJobConfig(**base)


def test_rules_job_masks_every_document_and_round_trips(
    tmp_path: Path, records: list[dict]
) -> None:
    docs = write_flagged(tmp_path / "in", records, 3)
    metrics = run_mask_job(cfg_for(tmp_path))
    masked = read_dir(tmp_path / "out" / "masked")
    failed = read_dir(tmp_path / "out" / "failed")
    assert sorted(r["id"] for r in masked + failed) == sorted(docs)
    assert metrics["documents"] == len(docs) == metrics["masked"] + metrics["failed"]
    assert (
        pq.read_schema(next((tmp_path / "out" / "masked").glob("*.parquet"))).names
        == MASKED_SCHEMA.names
    )
    vault = open_vault(tmp_path / "vault")
    for row in masked:
        assert (
            row["backend"] == "rules"
            and row["extracted_by"] == "rules"
            and row["fallback"] is False
        )
        assert row["prompt_version"] == "none" and row["model"].startswith("rules-")
        mapping = vault.get(row["row_key"], writer=row["vault_file"])
        source = docs[row["id"]]["source_text"]
        assert reassemble_text(row["masked_text"], mapping) == source
        assert row["n_entities"] == len(row["spans"])
        for span in row["spans"]:
            assert mapping[span["token"]] == source[span["start"] : span["end"]]
        assert sorted({s["type"] for s in row["spans"]}) == row["entity_types"]
    # the rules backend finds most planted values: the masked text no longer holds them
    gold = [(e["original"], docs[r["id"]]) for r in masked for e in docs[r["id"]]["entities"]]
    leaked = [
        v for v, d in gold if v in next(m["masked_text"] for m in masked if m["id"] == d["id"])
    ]
    assert len(leaked) <= 0.1 * len(gold)
    for key in (
        "parse_success_rate",
        "hallucination_rate",
        "latency_seconds",
        "generated_tokens_per_second",
        "docs_per_second",
        "entities_per_type",
    ):
        assert key in metrics
    assert metrics["parse_success_rate"] == 1.0 and metrics["hallucination_rate"] == 0.0
    assert set(metrics["latency_seconds"]) == {"p50", "p90", "p99"}
    assert json.loads((tmp_path / "out" / "metrics.json").read_text()) == metrics


def test_fail_closed_reasons_and_think_blocks(tmp_path: Path) -> None:
    src = {
        "d-ok": "연락처 010-1234-5678 김가상",
        "d-think": "メールは yamada@mailbox.com です",
        "d-halluc": "Call 010-2222-3333 now",
        "d-halluc-only": "Nothing personal here at all",
        "d-chatter": "Sure! Here is a document with 010-9999-8888",
        "d-timeout": "연락처 010-4444-5555",
        "d-foreign": "abc 010-7777-6666",
        "d-rule-type": "xyz 010-7777-6666",
    }
    answers = {
        "d-ok": "PERSON\t김가상\nPHONE\t010-1234-5678\n",
        "d-think": (
            "<think>the user wants PII; 010-0000-0000 is not here</think>EMAIL\tyamada@mailbox.com"
        ),
        "d-halluc": "PHONE\t010-2222-3333\nPERSON\tJohn Invented\n",
        "d-halluc-only": "PERSON\tJohn Invented\n",
        "d-chatter": "I found a phone number in the document.",
        "d-timeout": ("error", "timeout"),
        # a type the contract does not know, its value not in the source
        "d-foreign": "ORG\tAcme Corp\n",
        "d-rule-type": "SSN\txyz\n",  # a rule detector's type name: masked as its own type
    }
    by_text = {t: answers[i] for i, t in src.items()}
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": list(src), "text": list(src.values())}), tmp_path / "in" / "a.parquet"
    )
    metrics = run_mask_job(cfg_for(tmp_path), extractor=ScriptedExtractor(lambda t: by_text[t]))
    masked = {r["id"]: r for r in read_dir(tmp_path / "out" / "masked")}
    failed = {r["id"]: r["reason"] for r in read_dir(tmp_path / "out" / "failed")}
    assert set(masked) == {"d-ok", "d-think", "d-halluc", "d-rule-type"}
    assert failed == {
        "d-halluc-only": "hallucinated_only",
        "d-chatter": "unparseable_output",
        "d-timeout": "timeout",
        "d-foreign": "no_valid_rows",
    }
    assert masked["d-rule-type"]["masked_text"] == "[SSN_1] [PHONE_1]"  # a type of its own
    assert masked["d-ok"]["masked_text"] == "연락처 [PHONE_1] [PERSON_1]"
    assert masked["d-think"]["masked_text"] == "メールは [EMAIL_1] です"
    assert masked["d-halluc"]["masked_text"] == "Call [PHONE_1] now"
    assert (
        pq.read_schema(next((tmp_path / "out" / "failed").glob("*.parquet"))).names
        == FAILED_SCHEMA.names
    )
    assert metrics["failed_reasons"] == {
        "hallucinated_only": 1,
        "no_valid_rows": 1,
        "timeout": 1,
        "unparseable_output": 1,
    }
    # 7 outputs, 4 parsed; checked rows: ok 2, think 1, halluc 2, halluc-only 1, rule-type 1 → 2
    # hallucinated of 7
    assert metrics["parse_success_rate"] == pytest.approx(4 / 7)
    assert metrics["hallucination_rate"] == pytest.approx(2 / 7)
    # failed documents never reach the vault, masked ones do (keyed by their row keys)
    assert sorted(open_vault(tmp_path / "vault").ids()) == sorted(
        r["row_key"] for r in masked.values()
    )


def test_fallback_rules_is_marked(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a", "b"], "text": ["tel 010-1234-5678", "mail x@mailbox.com"]}),
        tmp_path / "in" / "p.parquet",
    )
    ex = ScriptedExtractor(
        lambda t: ("e", "output_truncated") if "tel" in t else "EMAIL\tx@mailbox.com"
    )
    metrics = run_mask_job(cfg_for(tmp_path, fallback="rules"), extractor=ex)
    masked = {r["id"]: r for r in read_dir(tmp_path / "out" / "masked")}
    assert masked["a"]["fallback"] is True and masked["a"]["extracted_by"] == "rules"
    assert masked["a"]["backend"] == "scripted" and masked["a"]["masked_text"] == "tel [PHONE_1]"
    assert masked["b"]["fallback"] is False and masked["b"]["extracted_by"] == "scripted"
    assert metrics["masked_by_fallback"] == 1 and metrics["failed"] == 0


def test_null_text_and_missing_columns(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a", "b"], "text": [None, "nothing"]}), tmp_path / "in" / "p.parquet"
    )
    run_mask_job(cfg_for(tmp_path))
    assert {r["id"]: r["reason"] for r in read_dir(tmp_path / "out" / "failed")} == {"a": "no_text"}
    bad = tmp_path / "bad"
    (bad / "in").mkdir(parents=True)
    pq.write_table(pa.table({"doc": ["a"]}), bad / "in" / "p.parquet")
    from spcl.mask_stage import MaskJobError

    with pytest.raises(MaskJobError, match="no 'id' and 'text'"):
        run_mask_job(cfg_for(bad))


def test_backend_going_away_stops_the_job_and_a_rerun_finishes_exactly_once(
    tmp_path: Path, records
) -> None:
    docs = write_flagged(tmp_path / "in", records, 4)
    from spcl.extract.backends.rules_backend import RulesExtractor

    rules = RulesExtractor()
    # 60 docs / 4 files = 15 per file, batch 4 → 4 batches per file: dies in the middle of the
    # second file
    crashing = ScriptedExtractor(lambda t: rules.run([t])[0].raw, fail_after_batches=6)
    with pytest.raises(BackendUnavailable):
        run_mask_job(cfg_for(tmp_path, batch_size=4), extractor=crashing)
    assert len(load_markers(tmp_path / "out")) == 1
    # the unfinished file left nothing in place
    assert len(list((tmp_path / "vault").glob("*.jsonl"))) == 1
    metrics = run_mask_job(cfg_for(tmp_path, batch_size=4))
    assert metrics["run"]["files_skipped"] == 1 and metrics["run"]["files_processed"] == 3
    ids = [
        r["id"]
        for r in read_dir(tmp_path / "out" / "masked") + read_dir(tmp_path / "out" / "failed")
    ]
    assert sorted(ids) == sorted(docs)
    vault_ids = vault_record_ids(tmp_path / "vault")
    assert len(vault_ids) == len(set(vault_ids))
    staging = tmp_path / "vault" / "_staging"
    assert not staging.exists() or not any(staging.iterdir())


def test_rerun_of_a_finished_job_skips_everything(tmp_path: Path, records) -> None:
    write_flagged(tmp_path / "in", records[:12], 2)
    first = run_mask_job(cfg_for(tmp_path))
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "out").rglob("*.parquet")}
    second = run_mask_job(cfg_for(tmp_path))
    assert second["run"] == {
        **second["run"],
        "files_processed": 0,
        "files_skipped": 2,
        "documents": 0,
    }
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "out").rglob("*.parquet")} == stamps
    assert second["documents"] == first["documents"] == 12


def test_killed_subprocess_run_resumes_without_loss_or_duplicates(tmp_path: Path, records) -> None:
    # 240 docs over 12 files
    many = [dict(r, id=f"{r['id']}-{k}") for k in range(4) for r in records]
    docs = write_flagged(tmp_path / "in", many, 12)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPCL_VAULT_KEY": base64.b64encode(KEY).decode()}
    cmd = [
        sys.executable,
        "-m",
        "spcl.cli",
        "mask",
        "--input",
        str(tmp_path / "in"),
        "--output",
        str(tmp_path / "out"),
        "--vault",
        str(tmp_path / "vault"),
        "--backend",
        "rules",
        "--batch-size",
        "4",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done_dir = tmp_path / "out" / "_done"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if done_dir.exists() and any(done_dir.glob("*.json")):
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the job finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    finished = len(load_markers(tmp_path / "out"))
    assert 1 <= finished < 12
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["run"]["files_skipped"] == finished and metrics["documents"] == len(docs)
    ids = [
        r["id"]
        for r in read_dir(tmp_path / "out" / "masked") + read_dir(tmp_path / "out" / "failed")
    ]
    assert sorted(ids) == sorted(docs)  # every document exactly once
    masked_keys = {r["row_key"] for r in read_dir(tmp_path / "out" / "masked")}
    vault_ids = vault_record_ids(tmp_path / "vault")
    # one vault record per masked document, no duplicates
    assert sorted(vault_ids) == sorted(masked_keys)
    assert not (tmp_path / "out" / "_tmp").exists() or not any(
        (tmp_path / "out" / "_tmp").iterdir()
    )


def test_no_raw_value_in_logs_metrics_or_failed(
    tmp_path: Path, records, caplog: pytest.LogCaptureFixture
) -> None:
    docs = write_flagged(tmp_path / "in", records[:20], 2)
    values = {e["original"] for r in docs.values() for e in r["entities"]}
    caplog.set_level(logging.DEBUG)
    ex = ScriptedExtractor(lambda t: ("e", "timeout") if "@" in t else "PERSON\tnot-there\n")
    run_mask_job(cfg_for(tmp_path), extractor=ex)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPCL_VAULT_KEY": base64.b64encode(KEY).decode()}
    out2 = tmp_path / "out2"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "-v",
            "mask",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(out2),
            "--vault",
            str(tmp_path / "vault2"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0
    texts = [
        caplog.text,
        proc.stdout,
        proc.stderr,
        (tmp_path / "out" / "metrics.json").read_text(),
        (out2 / "metrics.json").read_text(),
    ]
    texts += [json.dumps(read_dir(tmp_path / "out" / "failed"), ensure_ascii=False)]
    texts += [p.read_text() for p in (tmp_path / "out" / "_done").glob("*.json")]
    # encrypted: no clear values
    texts += [p.read_text() for p in (tmp_path / "vault").glob("*.jsonl")]
    for blob in texts:
        for value in values:
            assert value not in blob
    assert "not-there" not in caplog.text


def test_wrong_vault_key_and_unknown_backend_fail_before_work(
    tmp_path: Path, records, monkeypatch
) -> None:
    write_flagged(tmp_path / "in", records[:4], 1)
    run_mask_job(cfg_for(tmp_path))
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(bytes(32)).decode())
    from spcl.mask.vault import VaultKeyError

    with pytest.raises(VaultKeyError):
        run_mask_job(cfg_for(tmp_path, output=str(tmp_path / "other")))
    with pytest.raises(ValueError, match="unknown backend"):
        MaskRunner(cfg_for(tmp_path, backend="nope"), vault_key=KEY)


def test_cli_unreachable_endpoint_is_a_clear_error(tmp_path: Path, records, capsys) -> None:
    from spcl.cli import main

    write_flagged(tmp_path / "in", records[:2], 1)
    rc = main(
        [
            "mask",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "out"),
            "--vault",
            str(tmp_path / "vault"),
            "--backend",
            "openai",
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--retries",
            "0",
        ]
    )
    assert rc == 1
    assert (
        "cannot reach the OpenAI-compatible endpoint http://127.0.0.1:9/v1"
        in capsys.readouterr().err
    )
    assert not list((tmp_path / "out" / "masked").glob("*.parquet"))
    rc = main(
        [
            "mask",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "out"),
            "--vault",
            str(tmp_path / "vault"),
            "--backend",
            "openai",
            "--model",
            "m",
        ]
    )
    assert rc == 2


def test_predictions_export_feeds_the_evaluator(tmp_path: Path, records) -> None:
    from spcl.evaluate.masking import evaluate_masking

    docs = write_flagged(tmp_path / "in", records, 2)
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in docs.values()))
    run_mask_job(cfg_for(tmp_path))
    n = export_predictions(tmp_path / "out", tmp_path / "vault", tmp_path / "pred.jsonl")
    assert n == len(docs)
    result = evaluate_masking(gold, tmp_path / "pred.jsonl")
    assert result["entity"]["f1"] > 0.8
    assert result["tokenization"]["round_trip_rate"] == 1.0


def test_input_listing_and_file_keys(tmp_path: Path) -> None:
    (tmp_path / "a" / "decision=flagged").mkdir(parents=True)
    for name in (
        "a/decision=flagged/part-0.parquet",
        "a/part-0.parquet",
        "a/_tmp.parquet",
        "a/.x.parquet",
    ):
        pq.write_table(pa.table({"id": ["x"], "text": ["y"]}), tmp_path / name)
    files = list_input_files(tmp_path / "a")
    assert [f.relative_to(tmp_path / "a").as_posix() for f in files] == [
        "decision=flagged/part-0.parquet",
        "part-0.parquet",
    ]
    keys = {file_key(f, tmp_path / "a") for f in files}
    assert len(keys) == 2 and all(k.startswith("part-0-") for k in keys)


@pytest.mark.slow
def test_spark_job_matches_python_engine_and_resumes(tmp_path: Path, records) -> None:
    """jobs/mask.py (Spark local[2]) finishes a half-done output; its rows equal the plain
    engine's."""
    docs = write_flagged(tmp_path / "in", records, 4)
    from spcl.extract.backends.rules_backend import RulesExtractor

    rules = RulesExtractor()
    crashing = ScriptedExtractor(lambda t: rules.run([t])[0].raw, fail_after_batches=1)
    with pytest.raises(BackendUnavailable):
        run_mask_job(cfg_for(tmp_path, output=str(tmp_path / "spark")), extractor=crashing)
    assert len(load_markers(tmp_path / "spark")) == 1
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SPCL_VAULT_KEY": base64.b64encode(KEY).decode(),
        "PYSPARK_PYTHON": sys.executable,
    }
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "jobs" / "mask.py"),
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "spark"),
            "--vault",
            str(tmp_path / "vault"),
            "--batch-size",
            "16",
            "--master",
            "local[2]",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((tmp_path / "spark" / "metrics.json").read_text())
    assert metrics["run"]["engine"] == "spark" and metrics["run"]["files_processed"] == 3
    assert metrics["documents"] == len(docs) and metrics["model"] == "mixed"
    assert metrics["models_in_output"] == ["rules-v1", "scripted-v0"]
    run_mask_job(
        cfg_for(tmp_path, output=str(tmp_path / "plain"), vault=str(tmp_path / "vault-plain"))
    )
    spark_rows = {r["id"]: r for r in read_dir(tmp_path / "spark" / "masked")}
    plain_rows = {r["id"]: r for r in read_dir(tmp_path / "plain" / "masked")}
    assert sorted(spark_rows) == sorted(plain_rows) == sorted(docs)
    for doc_id, row in plain_rows.items():
        assert spark_rows[doc_id]["masked_text"] == row["masked_text"]

        # found_by may differ: one file was done by the scripted backend (its rows are "extractor" +
        # "names")
        def strip(spans: list[dict]) -> list[dict]:
            return [{k: v for k, v in sp.items() if k != "found_by"} for sp in spans]

        assert strip(spark_rows[doc_id]["spans"]) == strip(row["spans"])
    vault_ids = vault_record_ids(tmp_path / "vault")
    assert sorted(vault_ids) == sorted(r["row_key"] for r in spark_rows.values())


@pytest.mark.slow
def test_spark_job_whose_tasks_cannot_start_is_a_one_line_error(
    tmp_path: Path, records, capsys
) -> None:
    """Executors that cannot build their backend stop the Spark job: exit 1 with one line,
    nothing committed."""
    from spcl.cli import main

    write_flagged(tmp_path / "in", records[:4], 1)
    rc = main(
        [
            "mask",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "out"),
            "--vault",
            str(tmp_path / "vault"),
            "--engine",
            "spark",
            "--master",
            "local[1]",
            "--backend",
            "transformers",
            "--model",
            str(tmp_path / "no-such-model"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "the Spark job stopped" in err and "Traceback" not in err
    assert not list((tmp_path / "out" / "masked").glob("*.parquet"))
