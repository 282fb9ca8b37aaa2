"""A benchmark corpus of real text: ~1.5 KB documents, one language each (a third each English,
Japanese, Korean).

Benchmarks on our own templates ran 1.5× more optimistic than on real text, so the filter and screen
benchmarks read real passages that install offline, assembled into documents by a seeded sampler:

- ``data/weak-none/libreoffice-help.jsonl`` (committed; real LibreOffice help passages, ja and ko,
  MPL-2.0);
- ``data/weak-english/english.jsonl`` (committed; real English help pages and e-mails, see its
  README);
- the real labelled sentences (``data/scpi-real-v1/labelled.jsonl``: news, Wikipedia,
  reviews), when present;
- the Japanese manual pages of Debian's ``manpages-ja`` (``/usr/share/man/ja``), when installed.

Passages repeat across documents (a few MB of real text make tens of thousands of documents);
tokenizer and model costs depend on the text's shape, not on whether a sentence was seen before.
"""

from __future__ import annotations

import gzip
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

from spcl.io.jsonl import read_jsonl_objects
from spcl.resources import SOURCE_ROOT

WEAK_NONE = SOURCE_ROOT / "data" / "weak-none" / "libreoffice-help.jsonl"
WEAK_ENGLISH = SOURCE_ROOT / "data" / "weak-english" / "english.jsonl"
SHARED_LABELLED = SOURCE_ROOT / "data" / "scpi-real-v1" / "labelled.jsonl"
MANPAGES_JA = Path("/usr/share/man/ja")
LANGS = ("en", "ja", "ko")
_ROFF_ESCAPE = re.compile(r"\\f[BIRP]|\\\(..|\\[-&e|^]|\\s[+-]?\d")


def _jsonl_passages(path: Path) -> Iterator[tuple[str, str]]:
    if not path.is_file():
        return
    for rec in read_jsonl_objects(path):
        if rec.get("lang") in LANGS and isinstance(rec.get("text"), str) and rec["text"].strip():
            yield rec["lang"], rec["text"].strip()


def _manpage_passages(root: Path, limit: int = 4000) -> Iterator[tuple[str, str]]:
    """Paragraphs of Japanese man pages (roff requests dropped, font escapes removed)."""
    if not root.is_dir():
        return
    count = 0
    for page in sorted(root.rglob("*.gz")):
        try:
            raw = gzip.decompress(page.read_bytes()).decode("utf-8", "replace")
        except (OSError, EOFError):
            continue
        para: list[str] = []
        for line in [*raw.splitlines(), ".PP"]:
            if line.startswith((".", "'")):
                text = " ".join(para).strip()
                if len(text) >= 60 and re.search(r"[\u3040-\u30ff]", text):
                    yield "ja", _ROFF_ESCAPE.sub("", text)
                    count += 1
                    if count >= limit:
                        return
                para = []
            else:
                para.append(line)


def passage_pools() -> dict[str, list[str]]:
    """Real passages by language from every source found here (sorted, so a seed fixes the
    corpus)."""
    pools: dict[str, set[str]] = {lang: set() for lang in LANGS}
    for source in (
        _jsonl_passages(WEAK_NONE),
        _jsonl_passages(WEAK_ENGLISH),
        _jsonl_passages(SHARED_LABELLED),
        _manpage_passages(MANPAGES_JA),
    ):
        for lang, text in source:
            pools[lang].add(text)
    return {lang: sorted(texts) for lang, texts in pools.items()}


def real_documents(n: int, seed: int = 0, target_bytes: int = 1500) -> Iterator[dict[str, Any]]:
    """``n`` documents ``{"id", "text", "lang"}`` of about ``target_bytes`` UTF-8 bytes, cycling
    en/ja/ko."""
    pools = passage_pools()
    missing = [lang for lang in LANGS if not pools[lang]]
    if missing:
        raise RuntimeError(
            f"no real passages for {', '.join(missing)} (is data/weak-none/ present?)"
        )
    rng = random.Random(seed)
    for i in range(n):
        lang = LANGS[i % len(LANGS)]
        parts: list[str] = []
        size = 0
        while size < target_bytes:
            passage = rng.choice(pools[lang])
            parts.append(passage)
            size += len(passage.encode("utf-8")) + 1
        text = " ".join(parts).encode("utf-8")[:target_bytes].decode("utf-8", "ignore").strip()
        yield {"id": f"real-{seed}-{i:07d}", "lang": lang, "text": text}


class CorpusSummary(TypedDict):
    """The sources found, and passages and characters per language."""

    sources: list[str]
    passages: dict[str, int]
    chars: dict[str, int]


def corpus_summary() -> CorpusSummary:
    """Passages and characters per language and which sources were found (for the benchmark's
    output)."""
    pools = passage_pools()
    return {
        "sources": [
            str(p) for p in (WEAK_NONE, WEAK_ENGLISH, SHARED_LABELLED, MANPAGES_JA) if p.exists()
        ],
        "passages": {lang: len(texts) for lang, texts in pools.items()},
        "chars": {lang: sum(len(t) for t in texts) for lang, texts in pools.items()},
    }
