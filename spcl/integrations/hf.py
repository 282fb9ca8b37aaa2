"""spcl over a Hugging Face ``datasets.Dataset`` (extra ``hf``): a batched ``map`` over the filter's
batch function.

``screen_dataset(ds)`` is ``ds.map(screen_map(...), batched=True, with_indices=True,
features=...)``: every row kept, the filter's columns (``spcl.integrations.rows.SCREEN_COLUMNS``)
added with fixed types. A row whose text is null, not a string, empty, too long or holds NUL comes
back ``quarantine`` with its reason. ``screen_map`` is the function itself, for a ``map`` call of
your own (pass ``features=screen_features(ds.features)`` so every batch gets the same column types).
Row positions are the dataset's row indices, so row keys are unique within the dataset; with
``num_proc`` each process loads the detectors and the model once.

The map function carries the screen model's identity (its version and a hash of its model card)
beside the settings, so ``datasets``' fingerprint — and so its cache — changes when the model or the
configuration changes: a cached result of another model is never returned.

``mask_dataset(ds, vault=...)`` masks as ``spcl mask`` does (``spcl.integrations.masking``): every
row kept, the screen's columns and :data:`~spcl.integrations.masking.MASK_COLUMNS` added, and the
text column replaced by the masked text for ``masked`` rows, left as it was for ``clean`` rows and
set to null for ``failed`` and ``quarantine`` rows (never released unmasked; ``mask_reason`` says
why).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spcl.config import Settings, load_settings
from spcl.extract.backends.registry import DEFAULT_BACKEND
from spcl.filter.batch import context_for, model_identity, resolve_model_path
from spcl.integrations.masking import MASK_COLUMNS, mask_options, masker_for
from spcl.integrations.rows import (
    SCREEN_COLUMNS,
    SCREEN_SCHEMA,
    check_columns,
    context,
    screen_columns,
    settings_json,
)
from spcl.mask_stage.schema import SPAN_TYPE

if TYPE_CHECKING:
    import datasets


_LOADED: dict[str, str] = {}  # settings JSON -> the model key its cached context was built with


def model_key(settings_js: str) -> str:
    """The screen model's identity for ``settings_js``: its version (``NAME@SHA12``) and a hash of
    its model card (thresholds included); ``"none"`` without a screen."""
    st = Settings.model_validate_json(settings_js)
    if not st.screen.enabled:
        return "none"
    ident = model_identity(st.screen.model)
    try:
        card = (resolve_model_path(st.screen.model) / "model_card.json").read_bytes()
    except OSError:
        card = b""
    return f"{ident['model_version']}#{hashlib.sha256(card).hexdigest()[:16]}"


def fresh_context(settings_js: str, key: str) -> Any:
    """The process's context for ``settings_js``, rebuilt when it was built for another model
    key."""
    if _LOADED.get(settings_js, key) != key:
        context_for.cache_clear()
    _LOADED[settings_js] = key
    return context(settings_js)


def _rows(
    text_col: str,
    id_col: str | None,
    batch: Mapping[str, list[Any]],
    indices: list[int] | None,
    who: str,
) -> tuple[int, list[Any] | None]:
    n = len(batch[text_col])
    first = indices[0] if indices else 0
    if indices and list(indices) != list(range(first, first + n)):
        raise ValueError(
            f"{who}: with_indices must give consecutive row indices (do not shuffle inside map)"
        )
    return first, (batch[id_col] if id_col is not None else None)


def _map_batch(
    settings_js: str,
    key: str,
    text_col: str,
    id_col: str | None,
    source: str,
    batch: Mapping[str, list[Any]],
    indices: list[int] | None = None,
) -> dict[str, list[Any]]:
    first, ids = _rows(text_col, id_col, batch, indices, "screen_map")
    added = screen_columns(batch[text_col], ids, fresh_context(settings_js, key), source, first)
    return {name: added.column(name).to_pylist() for name in SCREEN_COLUMNS}


def screen_map(
    text_col: str = "text",
    id_col: str | None = "id",
    settings: Settings | None = None,
    source: str = "dataset",
) -> Callable[..., dict[str, list[Any]]]:
    """The function for ``ds.map(fn, batched=True, with_indices=True)``: a dict of the
    :data:`SCREEN_COLUMNS` for each batch, one value per row in order (decision ``clean`` /
    ``flagged`` / ``quarantine``)."""
    js = settings_json(settings)
    return partial(_map_batch, js, model_key(js), text_col, id_col, source)


def screen_features(features: datasets.Features) -> datasets.Features:
    """``features`` with the screen's columns added (their Arrow types as the filter writes
    them)."""
    import datasets

    added = datasets.Features.from_arrow_schema(SCREEN_SCHEMA)
    return datasets.Features({**features, **added})


def screen_dataset(
    ds: datasets.Dataset,
    text_col: str = "text",
    id_col: str | None = "id",
    settings: Settings | None = None,
    batch_size: int = 1000,
    num_proc: int | None = None,
    source: str = "dataset",
) -> datasets.Dataset:
    """``ds`` with the filter's columns added, every row kept; ``ValueError`` when a column is
    missing or the dataset already has one of the added names."""
    check_columns(
        ds.column_names,
        text_col,
        id_col,
        "screen_dataset",
        "dataset",
        "ds.rename_column('lang', 'crawl_lang')",
    )
    return ds.map(
        screen_map(text_col, id_col, settings, source),
        batched=True,
        with_indices=True,
        batch_size=batch_size,
        num_proc=num_proc,
        features=screen_features(ds.features),
        desc="spcl screen",
    )


def _mask_batch(
    opts_js: str,
    settings_js: str,
    key: str,
    cols: tuple[str, str | None, str],
    batch: Mapping[str, list[Any]],
    indices: list[int] | None = None,
) -> dict[str, list[Any]]:
    text_col, id_col, source = cols  # the text column, the id column (or None) and the source name
    first, ids = _rows(text_col, id_col, batch, indices, "mask_dataset")
    fresh_context(settings_js, key)
    rows = masker_for(opts_js).mask(batch[text_col], ids, source, first)
    out: dict[str, list[Any]] = {
        name: [r.screen.get(name) for r in rows] for name in SCREEN_COLUMNS
    }
    out[text_col] = [r.text for r in rows]
    out["mask_status"] = [r.status for r in rows]
    out["mask_reason"] = [r.reason for r in rows]
    out["mask_spans"] = [r.spans for r in rows]
    out["vault_file"] = [r.vault_file for r in rows]
    return out


def mask_features(features: datasets.Features) -> datasets.Features:
    """``features`` with the screen's and the mask's columns added (their Arrow types)."""
    import datasets
    import pyarrow as pa

    added = pa.schema(
        [
            pa.field("mask_status", pa.string()),
            pa.field("mask_reason", pa.string()),
            pa.field("mask_spans", pa.list_(SPAN_TYPE)),
            pa.field("vault_file", pa.string()),
        ]
    )
    return datasets.Features(
        {**screen_features(features), **datasets.Features.from_arrow_schema(added)}
    )


def mask_dataset(
    ds: datasets.Dataset,
    vault: str | Path,
    *,
    text_col: str = "text",
    id_col: str | None = "id",
    settings: Settings | None = None,
    backend: str = DEFAULT_BACKEND,
    model: str | None = None,
    endpoint: str | None = None,
    options: dict[str, Any] | None = None,
    operators: dict[str, str] | list[str] | None = None,
    types: list[str] | None = None,
    batch_size: int = 256,
    num_proc: int | None = None,
    source: str = "dataset",
    run_id: str = "",
) -> datasets.Dataset:
    """``ds`` masked as ``spcl mask`` masks (see the module docstring): one ``mask_status`` per row
    (``clean``, ``masked``, ``failed``, ``quarantine``), mappings in the encrypted ``vault`` (key
    from ``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``), the ``rules`` backend unless another is
    named; ``ValueError`` for a missing or clashing column, an unknown type or operator."""
    check_columns(
        ds.column_names,
        text_col,
        id_col,
        "mask_dataset",
        "dataset",
        "ds.rename_column('lang', 'crawl_lang')",
    )
    clash = [c for c in MASK_COLUMNS if c in ds.column_names]
    if clash:
        raise ValueError(
            f"mask_dataset: the dataset already has {', '.join(map(repr, clash))}, which spcl adds"
        )
    st = settings if settings is not None else load_settings(None)
    opts = mask_options(
        str(vault),
        st,
        backend=backend,
        model=model,
        endpoint=endpoint,
        options=options,
        types=types,
        operators=operators,
        run_id=run_id,
    )
    js = settings_json(st)
    fn = partial(_mask_batch, opts.to_json(), js, model_key(js), (text_col, id_col, source))
    return ds.map(
        fn,
        batched=True,
        with_indices=True,
        batch_size=batch_size,
        num_proc=num_proc,
        features=mask_features(ds.features),
        desc="spcl mask",
    )
