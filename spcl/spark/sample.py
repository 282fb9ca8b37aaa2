"""The review sample computed by Spark SQL, for filter outputs too big for one machine.

It returns exactly what ``spcl.review.sample.sample_dataset`` returns (the same plan, rows, keys and
schema): the stratum name and the sampling key are rebuilt as Spark columns, sizes come from
``spcl.review.sample.allocate`` on the driver, and only the sample is collected.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from spcl.io.outputs import check_complete
from spcl.io.schema import OUTPUT_SCHEMA
from spcl.review.sample import (
    NULL,
    SamplePlan,
    SampleSpec,
    allocate,
    finish_sample,
    sample_columns,
    sample_key_column,
)
from spcl.screen.heads import DEFAULT_OUTPUTS, heads_in


def _spark_stratum_column(spec: SampleSpec, heads: Sequence[str]) -> Any:
    """The stratum name as a Spark column, equal to ``stratum_name`` row by row; ``heads`` are the
    screen heads of the output's ``scores`` struct, in order (the first one's score makes the
    band)."""
    from pyspark.sql import functions as F

    parts = []
    for dim in spec.dimensions:
        if dim == "decision":
            value = F.col("decision")
        elif dim == "lang":
            value = F.coalesce(F.col("lang"), F.lit(NULL))
        elif dim == "category":
            value = F.coalesce(F.col("top_category"), F.lit(NULL))
        else:
            band = heads[0] if spec.bucket_by == "union" else spec.bucket_by
            score = F.col(f"scores.{band}").cast("double")
            edges = spec.bucket_edges
            expr = F.when(score.isNull() | F.isnan(score), F.lit(NULL)).when(
                score < F.lit(edges[0]), F.lit(f"<{edges[0]:g}")
            )
            for lo, hi in itertools.pairwise(edges):
                expr = expr.when(score < F.lit(hi), F.lit(f"{lo:g}-{hi:g}"))
            value = expr.otherwise(F.lit(f">={edges[-1]:g}"))
            if spec.bucket_by == "union":  # equal to union_bucket
                named = F.concat_ws(
                    "+",
                    *(
                        F.when(F.coalesce(F.col(f"scores.{h}_flag"), F.lit(False)), F.lit(h))
                        for h in heads
                    ),
                )
                flags = F.when(named == "", F.lit("none")).otherwise(named)
                value = F.when(score.isNull(), F.lit(NULL)).otherwise(
                    F.concat(flags, F.lit(":"), value)
                )
        parts.append(F.concat(F.lit(f"{dim}="), value))
    return F.concat_ws("|", *parts)


OVERSAMPLE = 2.0
SLACK = 100
"""Spark pre-filter: a stratum of ``N`` rows needing ``k`` keeps rows whose key falls in the lowest
``(OVERSAMPLE·k + SLACK) / N`` of the key space before ranking; a stratum left short is redone
whole.
"""


def key_threshold(k: int, population: int) -> str:
    """Upper bound on a 16-hex-digit key prefix so that about ``OVERSAMPLE·k + SLACK`` rows pass.

    ``"g"`` (above every hex digit) when the whole stratum must be ranked.
    """
    share = (OVERSAMPLE * k + SLACK) / max(population, 1)
    return "g" if share >= 1.0 else format(int(share * 16**16), "016x")


def sample_spark(
    spark: Any, path: str | Path, spec: SampleSpec, *, allow_incomplete: bool = False
) -> tuple[SamplePlan, pa.Table]:
    """The same sample as ``sample_dataset``, computed by Spark for outputs too big for one machine.

    Keys are Spark's ``sha2(concat(seed, ':', id), 256)``; sizes come from ``allocate`` on the
    driver. Rows whose key prefix is above the stratum's ``key_threshold`` are dropped first (keys
    are uniform, so a stratum keeps about ``2k`` rows instead of being sorted whole), then each
    stratum keeps rows ranked ``<= size`` by ``(key, id)``. Bottom-k is exact: a stratum with fewer
    than ``k`` survivors is ranked again without the threshold. Only the sample is collected to the
    driver.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    root = str(path)
    if not allow_incomplete:
        check_complete(root)
    if "://" in root and not root.startswith("file://"):
        paths = [f"{root}/decision=*"]
    else:  # local: name the partition folders (a glob makes Spark log a stack trace)
        paths = [
            str(p)
            for p in sorted(Path(root.removeprefix("file://")).glob("decision=*"))
            if p.is_dir()
        ]
    df = spark.read.option("basePath", root).parquet(*paths)
    df = df.where(F.col("decision").isin(list(spec.decisions)))
    fields = df.schema["scores"].dataType.fieldNames() if "scores" in df.columns else []
    heads = heads_in(fields) or list(DEFAULT_OUTPUTS.flags)
    df = df.withColumn("stratum", _spark_stratum_column(spec, heads))
    populations = {r["stratum"]: int(r["count"]) for r in df.groupBy("stratum").count().collect()}
    plan = SamplePlan(spec, populations, allocate(populations, spec))
    wanted = {s: k for s, k in plan.sizes.items() if k > 0}
    thresholds = {s: key_threshold(k, populations[s]) for s, k in wanted.items()}
    key = sample_key_column(df.columns)
    columns = sample_columns(df.columns)
    keyed = df.withColumn("sample_key", F.sha2(F.concat(F.lit(f"{spec.seed}:"), F.col(key)), 256))
    rank = F.row_number().over(Window.partitionBy("stratum").orderBy("sample_key", key))
    parts: list[pa.Table] = []
    todo = dict(wanted)
    while todo:
        limits = spark.createDataFrame(
            [(s, k, thresholds[s]) for s, k in sorted(todo.items())],
            "stratum string, size int, threshold string",
        )
        picked = (
            keyed.join(F.broadcast(limits), "stratum")
            .where(F.substring("sample_key", 1, 16) < F.col("threshold"))
            .withColumn("rank", rank)
            .where(F.col("rank") <= F.col("size"))
            .select(*columns, "stratum")
        )
        rows = picked.toArrow()
        got: dict[str, int] = {}
        for st in rows.column("stratum").to_pylist():
            got[st] = got.get(st, 0) + 1
        short = {s for s, k in todo.items() if got.get(s, 0) < k}
        if short:
            keep = pc.invert(
                pc.is_in(rows.column("stratum"), value_set=pa.array(sorted(short), pa.string()))
            )
            rows = rows.filter(keep)
        parts.append(rows)
        todo = {s: todo[s] for s in short if thresholds[s] != "g"}
        thresholds.update(dict.fromkeys(todo, "g"))
    if not parts:
        empty = pa.schema([pa.field(n, _sample_schema_type(n)) for n in (*columns, "stratum")])
        parts.append(empty.empty_table())
    rows = pa.concat_tables([t.cast(parts[0].schema) for t in parts])
    chosen: dict[str, list[str]] = {}
    for i, st in zip(rows.column(key).to_pylist(), rows.column("stratum").to_pylist(), strict=True):
        chosen.setdefault(st, []).append(i)
    table = rows.drop_columns(["stratum"]).cast(
        _sample_schema(rows.drop_columns(["stratum"]).schema)
    )
    return plan, finish_sample(table, plan, chosen)


def _sample_schema_type(name: str) -> pa.DataType:

    return pa.string() if name == "stratum" else OUTPUT_SCHEMA.field(name).type


def _sample_schema(found: pa.Schema) -> pa.Schema:
    """``SAMPLE_COLUMNS`` typed as in ``OUTPUT_SCHEMA`` (Spark returns nullable, partition as
    string)."""

    return pa.schema([pa.field(n, OUTPUT_SCHEMA.field(n).type) for n in found.names])
