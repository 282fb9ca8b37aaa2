"""``spcl unmask``: restore the source text of masked rows from the vault (the user side of reversibility).

Each masked row names its vault file (``vault_file``) and row key; its mapping is decrypted from exactly that
file, the text is reassembled, and the round trip is checked: every span's token must map to the surface that
the restored text holds at the span's offsets. A row whose mapping is missing, stored twice in its file, or
fails the check is refused (named by id and row key, never by value) and not written.
Restored files hold clear text: they are written readable by the owner only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.mask import reassemble_text


@dataclass(slots=True)
class UnmaskReport:
    """Counts of restored and refused rows; ``refused`` lists ``(id, row_key, reason)``."""

    restored: int = 0
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    files: int = 0


def restore_row(row: dict[str, Any], vault: Any) -> str:
    """The source text of one masked row; raises ``ValueError`` with a reason code when it cannot be trusted."""
    from spcl.mask.vault import VaultError

    try:
        mapping = vault.get(row["row_key"], writer=row["vault_file"])
    except KeyError:
        raise ValueError("missing_mapping") from None
    except VaultError:
        raise ValueError("ambiguous_mapping") from None
    text = reassemble_text(row["masked_text"], mapping)
    pos_shift = 0
    for span in sorted(row["spans"] or [], key=lambda s: s["start"]):
        surface = mapping.get(span["token"])
        if surface is None or text[span["start"]:span["end"]] != surface:
            raise ValueError("roundtrip_mismatch")
        pos_shift += len(surface) - len(span["token"])
    if len(text) - len(row["masked_text"]) != pos_shift:
        raise ValueError("roundtrip_mismatch")
    return text


def unmask_output(masked: str | Path, vault_dir: str | Path, out: str | Path,
                  key: bytes | str | Path | None = None) -> UnmaskReport:
    """Restore every row under ``masked`` (a mask output folder or its ``masked/``) into ``out``/part-*.parquet."""
    from spcl.mask.vault import open_vault

    root = Path(masked)
    parts_dir = root / "masked" if (root / "masked").is_dir() else root
    parts = sorted(parts_dir.glob("*.parquet"))
    vault = open_vault(vault_dir, key)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    os.chmod(target, 0o700)
    report = UnmaskReport()
    for part in parts:
        table = pq.read_table(part)
        keep: list[int] = []
        texts: list[str] = []
        for i, row in enumerate(table.to_pylist()):
            try:
                texts.append(restore_row(row, vault))
                keep.append(i)
            except ValueError as err:
                report.refused.append((str(row.get("id")), str(row.get("row_key")), str(err)))
        restored = table.take(pa.array(keep, pa.int64())).append_column("text", pa.array(texts, pa.string()))
        dest = target / part.name
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            pq.write_table(restored, fh, compression="zstd")
        report.restored += len(keep)
        report.files += 1
    return report
