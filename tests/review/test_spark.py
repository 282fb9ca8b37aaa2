"""The Spark sampling path draws exactly the plain-Python sample, whatever the partitioning."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from spcl.review.sample import SampleSpec, sample_dataset
from spcl.spark import sample
from spcl.spark.sample import sample_spark
from tests.support.review_rows import make_rows, write_output

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None:
        pytest.skip("Spark needs java on PATH")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("spcl-test-review")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.mark.parametrize("tight", [False, True], ids=["default", "tight-threshold"])
def test_spark_sample_equals_python_sample(spark, tmp_path: Path, monkeypatch, tight: bool):
    # pre-filter to about k rows per stratum: exercises the threshold and the short-stratum redo
    if tight:
        monkeypatch.setattr(sample, "OVERSAMPLE", 1.0)
        monkeypatch.setattr(sample, "SLACK", 0)
        assert sample.key_threshold(2, 80) < "1"
    rows = make_rows(500, seed=4)
    one = write_output(tmp_path / "one", rows, rows_per_file=1000)
    many = write_output(tmp_path / "many", rows, rows_per_file=23, shuffle_seed=11)
    for spec in (
        SampleSpec(n=90, seed=7),
        SampleSpec(per_stratum=2, seed=3, dimensions=("decision", "lang")),
    ):
        plan_py, table_py = sample_dataset(one, spec)
        for path in (one, many):
            plan_sp, table_sp = sample_spark(spark, path, spec)
            assert plan_sp.to_json() == plan_py.to_json()
            assert table_sp.column("id").to_pylist() == table_py.column("id").to_pylist()
            assert table_sp.column("stratum").to_pylist() == table_py.column("stratum").to_pylist()
            assert (
                table_sp.column("sample_key").to_pylist()
                == table_py.column("sample_key").to_pylist()
            )
            assert [(f.name, f.type) for f in table_sp.schema] == [
                (f.name, f.type) for f in table_py.schema
            ]
            assert table_sp.column("hits").to_pylist() == table_py.column("hits").to_pylist()
