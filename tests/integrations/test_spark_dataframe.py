"""``screen_dataframe`` on a DataFrame built in the test, in a session the test (the "user") owns.

The decisions must equal ``spcl filter``'s on the same records, every row must come back (bad ones
as quarantine with a reason), the user's session must keep its master and conf and stay alive, and
the flagged rows written by the one documented ``write.parquet`` line must be what ``spcl mask``
reads.
"""

from __future__ import annotations

import base64
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from spcl.integrations import SCREEN_COLUMNS
from spcl.integrations.spark import clean_rows, flagged_for_mask, screen_dataframe
from spcl.mask_stage import MaskJobConfig, run_mask_job
from tests.support.integration_corpus import BAD_REASONS, PLANTED, filter_verdicts, records, verdict
from tests.support.integration_corpus import settings as corpus_settings

pytestmark = pytest.mark.slow
USER_CONF = {
    "spark.sql.execution.arrow.maxRecordsPerBatch": "16",
    "spark.spcl.test.owner": "the-user",
}


@pytest.fixture(scope="module")
def spark():
    """The user's session: its own master, a small Arrow batch size, a conf key of its own."""
    if shutil.which("java") is None:
        pytest.skip("Spark needs java on PATH")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    leftover = SparkSession.getActiveSession()  # another test file's session in this xdist worker
    if leftover is not None:
        leftover.stop()
    builder = SparkSession.builder.master("local[2]").appName("spcl-test-dataframe")
    for key, value in {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        **USER_CONF,
    }.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    yield session
    session.stop()


@pytest.fixture(scope="module")
def recs() -> list[dict[str, Any]]:
    # a string column holds no numbers
    return [r for r in records() if not isinstance(r["text"], int)]


@pytest.fixture(scope="module")
def expected(
    recs: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    return filter_verdicts(recs, tmp_path_factory.mktemp("filter"), corpus_settings())


@pytest.fixture(scope="module")
def screened(spark, recs: list[dict[str, Any]]):
    df = spark.createDataFrame(
        [(r["id"], r["text"], i) for i, r in enumerate(recs)],
        "id string, text string, crawl_order long",
    ).repartition(3)
    return screen_dataframe(df, settings=corpus_settings()).cache()


def test_decisions_equal_filter_and_every_row_comes_back(spark, screened, recs, expected) -> None:
    rows = [r.asDict(recursive=True) for r in screened.collect()]
    assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in recs)
    assert screened.columns == ["id", "text", "crawl_order", *SCREEN_COLUMNS]
    assert {r["id"]: verdict(r) for r in rows} == expected
    by_id = {r["id"]: r for r in recs}
    assert all(r["text"] == by_id[r["id"]]["text"] for r in rows)  # the user's columns untouched
    assert {r["id"]: r["quarantine_reason"] for r in rows if r["decision"] == "quarantine"} == {
        k: v for k, v in BAD_REASONS.items() if k in by_id
    }
    assert len({r["row_key"] for r in rows}) == len(rows)
    # the user's session: same master, same conf, still running
    assert spark.sparkContext.master == "local[2]"
    assert {k: spark.conf.get(k) for k in USER_CONF} == USER_CONF
    assert spark.range(3).count() == 3


def test_clean_rows_and_the_flagged_rows_feed_spcl_mask(
    screened, expected, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = clean_rows(screened)
    assert clean.columns == ["id", "text", "crawl_order"]
    assert sorted(r["id"] for r in clean.collect()) == sorted(
        k for k, v in expected.items() if v["decision"] == "clean"
    )
    flagged_for_mask(screened).write.parquet(str(tmp_path / "flagged"))  # the README's one line
    flagged = {k for k, v in expected.items() if v["decision"] == "flagged"}
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(bytes(range(32))).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)
    metrics = run_mask_job(
        MaskJobConfig(
            str(tmp_path / "flagged"),
            str(tmp_path / "masked"),
            str(tmp_path / "vault"),
            names=False,
        )
    )
    assert metrics["documents"] == len(flagged) == metrics["masked"] + metrics["failed"]
    masked = [
        r
        for p in sorted((tmp_path / "masked" / "masked").glob("*.parquet"))
        for r in pq.read_table(p).to_pylist()
    ]
    failed = [
        r
        for p in sorted((tmp_path / "masked" / "failed").glob("*.parquet"))
        for r in pq.read_table(p).to_pylist()
    ]
    assert sorted(r["id"] for r in masked + failed) == sorted(flagged)
    email = next(r for r in masked if r["id"] == "pii-ja-email")
    assert "taro.yamada@mailbox.jp" in PLANTED["pii-ja-email"]
    assert "taro.yamada@mailbox.jp" not in email["masked_text"]


def test_non_string_text_missing_and_clashing_columns(spark) -> None:
    numbers = spark.createDataFrame([(1, 10), (2, None)], "id long, text long")
    rows = screen_dataframe(numbers, settings=corpus_settings()).orderBy("id").collect()
    assert [(r["id"], r["decision"], r["quarantine_reason"]) for r in rows] == [
        (1, "quarantine", "text_not_string"),
        (2, "quarantine", "missing_text_field"),
    ]
    derived = screen_dataframe(
        spark.createDataFrame([("週末は晴れ",)], "body string"),
        text_col="body",
        id_col=None,
        settings=corpus_settings(),
    ).collect()
    assert derived[0]["decision"] == "clean" and derived[0]["row_key"].startswith("r")
    with pytest.raises(ValueError, match="'lang'"):
        screen_dataframe(
            spark.createDataFrame([("1", "x", "ja")], "id string, text string, lang string")
        )
    with pytest.raises(ValueError, match="'doc_id'"):
        screen_dataframe(numbers, id_col="doc_id")


_NO_ENV_SCRIPT = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from pyspark.sql import SparkSession
from spcl.integrations.spark import screen_dataframe
s = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
df = s.createDataFrame([("a", "mail: taro.yamada@mailbox.com"), ("b", "週末は晴れ")],
                       ["id", "text"])
print(sorted((r["id"], r["decision"]) for r in screen_dataframe(df).collect()))
s.stop()
"""


def test_dataframe_api_runs_workers_on_this_interpreter_without_pyspark_python(
    tmp_path: Path,
) -> None:
    """No PYSPARK_PYTHON and a PATH whose python3 lacks spcl: workers still run (this interpreter),
    and a log line says which interpreter they use."""
    import subprocess

    if shutil.which("java") is None:
        pytest.skip("Spark needs java on PATH")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "python3").write_text("#!/bin/sh\necho 'not the spcl environment' >&2\nexit 1\n")
    (fake_bin / "python3").chmod(0o755)
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    }
    env["PATH"] = f"{fake_bin}:{os.path.dirname(shutil.which('java') or '')}:/usr/bin:/bin"
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    out = subprocess.run(
        [sys.executable, "-c", _NO_ENV_SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "[('a', 'flagged'), ('b', 'clean')]" in out.stdout
    assert "run this interpreter" in out.stderr and sys.executable in out.stderr
