"""spcl over a Hugging Face ``datasets.Dataset`` (extra ``hf``): a batched ``map`` over the filter's batch function.

``screen_dataset(ds)`` is ``ds.map(screen_map(...), batched=True, with_indices=True, features=...)``: every row
kept, the filter's columns (``spcl.integrations.rows.SCREEN_COLUMNS``) added with fixed types. A row whose text
is null, not a string, empty, too long or holds NUL comes back ``quarantine`` with its reason. ``screen_map``
is the function itself, for a ``map`` call of your own (pass ``features=screen_features(ds.features)`` so
every batch gets the same column types). Row positions are the dataset's row indices, so row keys are unique
within the dataset; with ``num_proc`` each process loads the detectors and the model once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from spcl.config import Settings
from spcl.integrations.rows import (
    SCREEN_COLUMNS,
    SCREEN_SCHEMA,
    check_columns,
    context,
    screen_columns,
    settings_json,
)

if TYPE_CHECKING:
    import datasets


def _map_batch(settings_js: str, text_col: str, id_col: str | None, source: str, batch: Mapping[str, list[Any]],
               indices: list[int] | None = None) -> dict[str, list[Any]]:
    n = len(batch[text_col])
    first = indices[0] if indices else 0
    if indices and list(indices) != list(range(first, first + n)):
        raise ValueError("screen_map: with_indices must give consecutive row indices (do not shuffle inside map)")
    ids = batch[id_col] if id_col is not None else None
    added = screen_columns(batch[text_col], ids, context(settings_js), source, first)
    return {name: added.column(name).to_pylist() for name in SCREEN_COLUMNS}


def screen_map(text_col: str = "text", id_col: str | None = "id", settings: Settings | None = None,
               source: str = "dataset") -> Callable[..., dict[str, list[Any]]]:
    """The function for ``ds.map(fn, batched=True, with_indices=True)``: a dict of the :data:`SCREEN_COLUMNS`
    for each batch, one value per row in order (decision ``clean`` / ``flagged`` / ``quarantine``)."""
    return partial(_map_batch, settings_json(settings), text_col, id_col, source)


def screen_features(features: datasets.Features) -> datasets.Features:
    """``features`` with the screen's columns added (their Arrow types as the filter writes them)."""
    import datasets

    added = datasets.Features.from_arrow_schema(SCREEN_SCHEMA)
    return datasets.Features({**features, **added})


def screen_dataset(ds: datasets.Dataset, text_col: str = "text", id_col: str | None = "id",
                   settings: Settings | None = None, batch_size: int = 1000, num_proc: int | None = None,
                   source: str = "dataset") -> datasets.Dataset:
    """``ds`` with the filter's columns added, every row kept; ``ValueError`` when a column is missing or the
    dataset already has one of the added names."""
    check_columns(ds.column_names, text_col, id_col, "screen_dataset", "dataset",
                  "ds.rename_column('lang', 'crawl_lang')")
    return ds.map(screen_map(text_col, id_col, settings, source), batched=True, with_indices=True,
                  batch_size=batch_size, num_proc=num_proc, features=screen_features(ds.features),
                  desc="spcl screen")
