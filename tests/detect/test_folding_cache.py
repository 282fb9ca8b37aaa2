"""The folding tables' cache is derived data: a file whose content differs from what the source
builds (a tampered or damaged cache that still looks well formed) is never used; the tables are
rebuilt and the file rewritten."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from spcl.detect import folding


@pytest.fixture(scope="module")
def built() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """The tables built from ``unicodedata`` (no cache)."""
    return folding._tables()


def test_the_pinned_digest_is_the_digest_of_a_fresh_build(built: tuple) -> None:
    assert folding.TABLES_DIGESTS[unicodedata.unidata_version] == folding.tables_digest(*built)


TAMPERS = {
    # a value split by U+200C would pass in clear
    "zwnj kept": lambda doc: doc["drop"].remove(0x200C),
    # Arabic-Indic 3 read as 7
    "digit remapped": lambda doc: doc["mapped"].__setitem__(str(0x0663), "7"),
    "mark forgotten": lambda doc: doc["marks"].remove(0xFE0F),
    "extra drop": lambda doc: doc["drop"].append(ord("0")),  # every ASCII zero vanishes
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_a_well_formed_but_tampered_cache_is_rebuilt(
    tmp_path: Path, built: tuple, tamper: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folding.cached_tables(tmp_path)
    [path] = tmp_path.glob("folding-*.json")
    doc = json.loads(path.read_text())
    TAMPERS[tamper](doc)
    path.write_text(json.dumps(doc))
    scans: list[int] = []
    real = folding._tables
    monkeypatch.setattr(folding, "_tables", lambda: scans.append(1) or real())
    assert folding.cached_tables(tmp_path) == built
    assert scans == [1]  # rebuilt from the source, not read from the file
    assert (
        folding.tables_digest(*folding._decode(json.loads(path.read_text()), folding._tables_key()))
        == folding.TABLES_DIGESTS[unicodedata.unidata_version]
    )  # and the file rewritten


def test_under_an_unpinned_unicode_version_the_cache_is_never_read(
    tmp_path: Path, built: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    folding.cached_tables(tmp_path)
    monkeypatch.setattr(folding, "TABLES_DIGESTS", {})
    scans: list[int] = []
    real = folding._tables
    monkeypatch.setattr(folding, "_tables", lambda: scans.append(1) or real())
    assert folding.cached_tables(tmp_path) == built
    assert scans == [1]
