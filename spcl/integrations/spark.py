"""Screen a Spark DataFrame the user already has: ``mapInArrow`` over the filter's per-batch
function.

``screen_dataframe(df)`` returns ``df`` with the filter's output columns added
(``spcl.integrations.rows. SCREEN_COLUMNS``: decision, reasons, hits, scores, lang, row key, ...);
every input row comes back exactly once, a row that cannot be screened as ``quarantine`` with its
reason. It runs in the session ``df`` belongs to — the user's master and conf win; spcl neither
creates nor stops a session. As in the filter job, the adapter is a module-level function bound with
``functools.partial`` to serialized settings, so each Python worker builds its detectors and model
once (``spcl.filter.batch.context_for``) and reuses them for every batch.

Row keys: ``source`` (default ``"dataframe"``) and a position ``partition << 33 | row in partition``
(the layout of Spark's ``monotonically_increasing_id``), so keys are unique within one screened
DataFrame and stable across runs over the same partitioning.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

import pyarrow as pa

from spcl.config import Settings
from spcl.filter.batch import context_for
from spcl.integrations.rows import (
    SCREEN_COLUMNS,
    SCREEN_SCHEMA,
    check_columns,
    screen_columns,
    settings_json,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("spcl.integrations.spark")

PARTITION_SHIFT = 33
"""Positions are ``partition << 33 | row``: room for 8 G rows per partition (Spark's own id
layout)."""

MASK_COLUMNS: tuple[str, ...] = ("id", "text", "lang", "hits", "reasons", "row_key")
"""What ``spcl mask`` reads from its input Parquet (``spcl.mask_stage.inputs.READ_COLUMNS``)."""


def _large(field: pa.Field) -> pa.Field:
    """``field`` with string → large_string, also inside lists and structs (lists stay lists: Spark
    reads no large_list), for a session with ``spark.sql.execution.arrow.useLargeVarTypes``."""
    t = field.type
    if pa.types.is_string(t):
        t = pa.large_string()
    elif pa.types.is_list(t):
        t = pa.list_(_large(t.value_field))
    elif pa.types.is_struct(t):
        t = pa.struct([_large(t.field(i)) for i in range(t.num_fields)])
    return field.with_type(t)


def screen_arrow(
    settings_js: str,
    text_col: str,
    id_col: str | None,
    source: str,
    large_types: bool,
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: each batch passed through with the screen's columns appended (same rows,
    same order)."""
    from pyspark import TaskContext

    ctx = context_for(settings_js)
    task = TaskContext.get()
    position = (task.partitionId() if task is not None else 0) << PARTITION_SHIFT
    schema = pa.schema([_large(f) for f in SCREEN_SCHEMA]) if large_types else SCREEN_SCHEMA
    for batch in batches:
        ids = batch.column(id_col).to_pylist() if id_col is not None else None
        added = screen_columns(batch.column(text_col).to_pylist(), ids, ctx, source, position)
        position += batch.num_rows
        columns = [
            *batch.columns,
            *(col.cast(f.type) for col, f in zip(added.columns, schema, strict=True)),
        ]
        yield pa.RecordBatch.from_arrays(columns, schema=pa.schema([*batch.schema, *schema]))


def _choose_this_interpreter() -> bool:
    """At import, before the user's session exists: workers default to this interpreter
    (``PYSPARK_PYTHON`` unset and no SparkContext yet), as ``spcl filter`` does. True when spcl set
    it."""
    if os.environ.get("PYSPARK_PYTHON"):
        return False
    try:
        from pyspark import SparkContext
    except ImportError:
        return False
    if SparkContext._active_spark_context is not None:
        return False
    os.environ["PYSPARK_PYTHON"] = sys.executable
    return True


_SET_BY_SPCL = _choose_this_interpreter()


def worker_python(session: SparkSession) -> str:
    """The interpreter the session's Python workers run, made this one where nobody chose one.

    Importing this module sets ``PYSPARK_PYTHON`` to the running interpreter when it is unset and no
    Spark session exists yet (Spark would otherwise start ``python3`` from ``PATH``, usually not the
    environment spcl is installed in, and workers die with ``ModuleNotFoundError``). A session made
    before the import, in local mode, is switched to this interpreter (DataFrames it built from
    Python objects before that keep the old one). A choice of the user's (``PYSPARK_PYTHON``,
    ``spark.pyspark.python``) stands. Each case is logged; on a cluster, where this machine's path
    may not exist on the executors, a warning says what to set.
    """
    sc = session.sparkContext
    current = str(getattr(sc, "pythonExec", "python3"))
    local = str(sc.master).startswith("local")
    user = session.conf.get("spark.pyspark.python", None)
    if user:
        return str(user)
    if current == sys.executable:
        if _SET_BY_SPCL:
            (log.info if local else log.warning)(
                "Spark Python workers run this interpreter (%s), chosen by spcl because"
                " PYSPARK_PYTHON was unset%s",
                sys.executable,
                (
                    ""
                    if local
                    else (
                        f"; on master {sc.master} set PYSPARK_PYTHON to the executors' "
                        "interpreter if this path does not exist there"
                    )
                ),
            )
        return current
    if os.environ.get("PYSPARK_PYTHON") and not _SET_BY_SPCL:
        return current  # the user's choice
    if local:
        sc.pythonExec = sys.executable
        log.info(
            "Spark Python workers use this interpreter (%s): PYSPARK_PYTHON is not set (DataFrames"
            " built from Python objects before this call keep %r; set PYSPARK_PYTHON before"
            " creating the session)",
            sys.executable,
            current,
        )
        return sys.executable
    log.warning(
        "Spark Python workers will run %r (PYSPARK_PYTHON is not set) on master %s: set"
        " PYSPARK_PYTHON or spark.pyspark.python to an interpreter that has spcl installed on every"
        " executor",
        current,
        sc.master,
    )
    return current


def screen_dataframe(
    df: DataFrame,
    text_col: str = "text",
    id_col: str | None = "id",
    settings: Settings | None = None,
    source: str = "dataframe",
) -> DataFrame:
    """``df`` with the filter's columns added (:data:`SCREEN_COLUMNS`), lazily, one output row per
    input row.

    ``decision`` is what ``spcl filter`` decides for the same id and text; rows whose text is null,
    not a string, empty, too long or holds NUL are ``quarantine`` with ``quarantine_reason``.
    ``id_col=None`` derives ids from source and position, as the filter does for records without
    one. ``settings`` default to the shipped config. Workers run this interpreter unless
    ``PYSPARK_PYTHON`` says otherwise (:func:`worker_python`). Raises ``ValueError`` when a column
    is missing or ``df`` already has one of the added names (rename it first).
    """
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StructType

    check_columns(
        df.columns,
        text_col,
        id_col,
        "screen_dataframe",
        "DataFrame",
        "e.g. df.withColumnRenamed('lang', 'crawl_lang')",
    )
    worker_python(df.sparkSession)
    conf = df.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")
    large = str(conf).lower() == "true"
    adapter = partial(screen_arrow, settings_json(settings), text_col, id_col, source, large)
    schema = StructType([*df.schema.fields, *from_arrow_schema(SCREEN_SCHEMA).fields])
    return df.mapInArrow(adapter, schema)


def _by_position(screened: DataFrame) -> tuple[DataFrame, list[str], dict[str, str], list[int]]:
    """``screened`` with every column renamed ``_spcl_<i>`` by position, the original names, the new
    name of each :data:`SCREEN_COLUMNS` entry (its last exact occurrence) and the positions of the
    caller's own columns.

    Spark resolves names case-insensitively by default: a caller's ``LANG`` and the added ``lang``
    are one name to it, and dropping or selecting ``lang`` by name would take the caller's column
    too. Positions are never ambiguous.
    """
    names = list(screened.columns)
    last = {name: i for i, name in enumerate(names)}
    missing = [c for c in SCREEN_COLUMNS if c not in last]
    if missing:
        raise ValueError(f"not a screened DataFrame: no column {', '.join(map(repr, missing))}")
    ours = {last[c] for c in SCREEN_COLUMNS}
    renamed = screened.toDF(*(f"_spcl_{i}" for i in range(len(names))))
    return (
        renamed,
        names,
        {c: f"_spcl_{last[c]}" for c in SCREEN_COLUMNS},
        [i for i in range(len(names)) if i not in ours],
    )


def _user_column(names: list[str], user: list[int], wanted: str) -> str:
    """The positional name of the caller's column ``wanted`` (an exact match first, then ignoring
    case)."""
    for exact in (True, False):
        for i in user:
            if names[i] == wanted or (not exact and names[i].lower() == wanted.lower()):
                return f"_spcl_{i}"
    raise ValueError(f"no column {wanted!r} among the caller's columns")


def clean_rows(screened: DataFrame) -> DataFrame:
    """The ``clean`` rows of a screened DataFrame with only the caller's own columns (ready to
    keep): every one of them, in order, under its own name and unchanged — also one whose name
    differs from an added column only in case (``LANG`` beside ``lang``)."""
    from pyspark.sql import functions as F

    renamed, names, ours, user = _by_position(screened)
    kept = renamed.where(F.col(ours["decision"]) == "clean").select(*(f"_spcl_{i}" for i in user))
    return kept.toDF(*(names[i] for i in user))


def flagged_for_mask(
    screened: DataFrame, text_col: str = "text", id_col: str | None = "id"
) -> DataFrame:
    """The ``flagged`` rows in the columns ``spcl mask`` reads (:data:`MASK_COLUMNS`); write them
    with ``.write.parquet(folder)`` and run ``spcl mask --input folder``. Where a row has no id, its
    row key is the id.
    """
    from pyspark.sql import functions as F

    renamed, names, ours, user = _by_position(screened)
    key = F.col(ours["row_key"])
    doc_id = (
        F.coalesce(F.col(_user_column(names, user, id_col)).cast("string"), key)
        if id_col is not None
        else key
    )
    flagged = renamed.where(F.col(ours["decision"]) == "flagged")
    return flagged.select(
        doc_id.alias("id"),
        F.col(_user_column(names, user, text_col)).alias("text"),
        *(F.col(ours[c]).alias(c) for c in ("lang", "hits", "reasons", "row_key")),
    )
