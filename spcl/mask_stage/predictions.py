"""Reading a finished mask output back: masked rows, and ``spcl eval masking``'s predictions from
the vault."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from spcl.mask.tokens import TOKEN_RE
from spcl.mask.vault import open_vault

_VARIANT_NOISE = re.compile(r"[\s\-./()\u3000]")


def iter_masked(output: str | Path) -> Iterable[dict[str, Any]]:
    """Every masked row of an output folder (for tests and inspection)."""
    for part in sorted((Path(output) / "masked").glob("*.parquet")):
        yield from pq.read_table(part).to_pylist()


def _candidates_from_mapping(
    mapping: dict[str, str], token_re: re.Pattern[str], types: dict[str, str] | None = None
) -> list[list[str]]:
    """``[TYPE, surface]`` per token; a surface that is only a spacing/separator variant of an
    earlier one of the same type (``김 가 상`` after ``김가상``) is left out, since the masker found
    it from the same candidate. ``types``: the type of each replacement that is not a ``[TYPE_n]``
    token (a surrogate or keyed hash), from the row's spans."""
    seen: set[tuple[str, str]] = set()
    out: list[list[str]] = []
    for tok, surface in sorted(
        mapping.items(), key=lambda kv: (len(kv[1]) - len(_VARIANT_NOISE.sub("", kv[1])), kv[0])
    ):
        if token_re.fullmatch(tok):
            type_ = tok[1:].rsplit("_", 1)[0]
        elif types and tok in types:
            type_ = types[tok]
        else:
            continue
        key = (type_, _VARIANT_NOISE.sub("", surface))
        if key not in seen:
            seen.add(key)
            out.append([type_, surface])
    return out


def export_predictions(
    output: str | Path,
    vault_dir: str | Path,
    pred_path: str | Path,
    key: bytes | str | Path | None = None,
) -> int:
    """Write ``spcl eval masking``'s PRED.jsonl from a finished run: candidates from the vault's
    mappings.

    Masked documents give ``[TYPE, surface]`` for each token of their mapping; failed documents give
    no candidates and ``parse_success: false``. **The file holds values in clear** — use it on
    synthetic or gold data, never on a production corpus; it is created readable by its owner only
    (0600). Returns the number of records written.
    """
    vault = open_vault(vault_dir, key)
    n = 0
    # values in clear: created readable by the owner only (as review samples and restored text are)
    fd = os.open(pred_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode on O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        for row in iter_masked(output):
            rec = vault.record(row["row_key"], row["vault_file"])
            types = {sp["token"]: sp["type"] for sp in row.get("spans") or []}
            cands = _candidates_from_mapping(rec.mapping, TOKEN_RE, types)
            # the id itself, not its hash
            doc_id = rec.source_id if rec.source_id is not None else row["id"]
            fh.write(
                json.dumps(
                    {"id": doc_id, "candidates": cands, "parse_success": True}, ensure_ascii=False
                )
                + "\n"
            )
            n += 1
        for part in sorted((Path(output) / "failed").glob("*.parquet")):
            for doc_id in pq.read_table(part, columns=["id"]).column("id").to_pylist():
                if doc_id is None:
                    continue
                fh.write(
                    json.dumps({"id": doc_id, "candidates": [], "parse_success": False}) + "\n"
                )
                n += 1
    return n
