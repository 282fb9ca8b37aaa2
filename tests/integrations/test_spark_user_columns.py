"""Every column a user brings to ``screen_dataframe`` reaches every output unchanged — also one
whose name differs from a column spcl adds only in case (Spark resolves names case-insensitively by
default)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from spcl.integrations import SCREEN_COLUMNS
from spcl.integrations.spark import clean_rows, flagged_for_mask, screen_dataframe
from tests.support.integration_corpus import settings as corpus_settings

pytestmark = pytest.mark.slow

ROWS = [
    ("a", "週末は晴れでした。", "ja-JP", "Decision-A", 1),
    ("b", "연락처 010-1234-5678 로 전화 주세요. 김민수 드림", "ko-KR", "Decision-B", 2),
    ("c", "오늘은 날씨가 좋다.", None, "Decision-C", 3),
]
SCHEMA = "id string, text string, LANG string, Decision string, Row_Key long"


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None:
        pytest.skip("Spark needs java on PATH")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    leftover = SparkSession.getActiveSession()
    if leftover is not None:
        leftover.stop()
    session = (
        SparkSession.builder.master("local[1]")
        .appName("spcl-test-user-columns")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_columns_named_like_added_ones_survive_every_output(spark) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    screened = screen_dataframe(df, settings=corpus_settings())
    assert screened.columns == [*df.columns, *SCREEN_COLUMNS]
    by_id = {r[0]: r for r in screened.collect()}  # by position: names are ambiguous here
    assert {k: tuple(r[:5]) for k, r in by_id.items()} == {r[0]: r for r in ROWS}

    clean = clean_rows(screened)
    assert clean.columns == df.columns
    kept = {tuple(r) for r in clean.collect()}
    assert kept and kept <= set(ROWS)
    decision = {k: r[len(ROWS[0]) + SCREEN_COLUMNS.index("decision")] for k, r in by_id.items()}
    assert {r[0] for r in kept} == {k for k, d in decision.items() if d == "clean"}

    flagged = flagged_for_mask(screened)
    assert flagged.columns == ["id", "text", "lang", "hits", "reasons", "row_key"]
    rows = flagged.collect()
    assert {r["id"] for r in rows} == {k for k, d in decision.items() if d == "flagged"}
    assert all(r["text"] == by_id[r["id"]][1] for r in rows)
