"""Does the CPU masker break words? Masked real wrapped text, and the share of documents with a
token inside a word.

Documents (real text that installs offline, no person planted):

- ``man-ja`` / ``man-ko``: Japanese and Korean man pages of Debian ``manpages-ja`` /
  ``manpages-ko``, rendered by groff at 80 columns exactly as ``man`` shows them — lines wrap inside
  words (``読み込ま\\nれた``);
- ``help-ja`` / ``help-ko``: LibreOffice help pages (Debian ``libreoffice-help-ja``/``-ko``), their
  visible text; where those packages are not installed, the LibreOffice help passages of
  ``data/weak-none`` (the names CRF trains on 600 of them per language: their false rows are
  optimistic, their speed is not).

Each document goes through the CPU path of the mask stage (the ``rules`` backend's rows, then
``mask_text``). A masked span is **inside a word** when one of its edges cuts a word of the source,
judged here on its own (not with the masker's predicate): Latin letters or digits on both sides of
the edge; katakana on both sides (a katakana run is one word, whatever MeCab says); Hangul before
the start (an eojeol does not start there); Hangul after the end unless mecab-ko reads what follows
in the eojeol as particles/endings/copula/suffixes (the eojeol parsed with the word after it: alone,
``오디오의`` is read ``오디`` + ``오의``); kanji/kana edges that fall inside a unidic morpheme. Line
breaks between two Japanese characters are removed first (wrapping is no word boundary). The checker
uses nothing of ``spcl.mask`` beyond ``mask_text``, so it runs against an older tree too:
``PYTHONPATH=<tree> python tools/wrapped.py --limit 600``.

Reports numbers only: documents, masked documents, documents with a PERSON span (manuals name few
persons beyond their authors' credits: mostly over-redaction), masked documents with a token inside
a word (and the share), masked spans, spans inside a word, documents per second of rows + masking.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

MAN_JA = Path("/usr/share/man/ja")
MAN_KO = Path("/usr/share/man/ko")
HELP_JSONL = Path(__file__).resolve().parent.parent / "data/weak-none/libreoffice-help.jsonl"
_JA = r"\u3041-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff々ー"
_WRAP = re.compile(rf"(?<=[{_JA}])[ \t\u3000]*\n[ \t\u3000]*(?=[{_JA}])")
_KATA = re.compile(r"[\u30a1-\u30faー]")
_LATIN = re.compile(r"[0-9A-Za-z]")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_JA_CHAR = re.compile(rf"[{_JA}]")


def man_documents(
    root: Path = MAN_JA, limit: int = 600, lang: str = "ja"
) -> Iterator[tuple[str, str, str]]:
    """``(key, lang, text)`` of up to ``limit`` man pages of ``root`` in ``lang`` (``ja`` or ``ko``)
    rendered by groff (80 columns), by hashed name."""
    script = _JA_CHAR if lang == "ja" else _HANGUL
    pages = sorted(root.rglob("*.gz"), key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())
    count = 0
    for page in pages:
        if count >= limit:
            return
        try:
            raw = gzip.decompress(page.read_bytes())
        except (OSError, EOFError):
            continue
        if raw.lstrip().startswith(b".so"):
            continue
        out = subprocess.run(
            ["groff", "-Kutf8", "-Tutf8", "-mandoc", "-P-cbou"],
            input=raw,
            capture_output=True,
            env={"MANWIDTH": "80", "PATH": "/usr/bin:/bin"},
            timeout=60,
            check=False,
        )
        text = out.stdout.decode("utf-8", "replace")
        if script.search(text):
            count += 1
            yield f"man:{page.name}", lang, text


def help_documents(lang: str, limit: int = 600) -> Iterator[tuple[str, str, str]]:
    """``(key, lang, text)`` of up to ``limit`` LibreOffice help pages of ``lang`` (visible
    text), by hashed key."""
    from tools.datasets.detect_set import HELP, help_docs

    if (HELP / lang).is_dir():
        docs = sorted(help_docs(lang), key=lambda d: hashlib.sha256(d[0].encode()).hexdigest())
    else:  # the passages kept in data/weak-none (see the module docstring)
        rows = [json.loads(line) for line in HELP_JSONL.read_text("utf-8").splitlines()]
        docs = sorted(
            ((f"help:{r['id']}", r["text"]) for r in rows if r["lang"] == lang),
            key=lambda d: hashlib.sha256(d[0].encode()).hexdigest(),
        )
    for key, text in docs[:limit]:
        if len(text) >= 40:
            yield key, lang, text


class _Checker:
    """Judges span edges on the de-wrapped text (see the module docstring)."""

    def __init__(self, text: str) -> None:
        import fugashi

        removed = set()
        for m in _WRAP.finditer(text):
            removed.update(range(m.start(), m.end()))
        self.pos = []  # text offset → offset in the joined text
        j = 0
        for i in range(len(text) + 1):
            self.pos.append(j)
            if i < len(text) and i not in removed:
                j += 1
        self.joined = "".join(ch for i, ch in enumerate(text) if i not in removed)
        self.inside: set[int] = set()  # joined offsets strictly inside a unidic morpheme
        if _JA_CHAR.search(self.joined):
            at = 0
            for w in fugashi.Tagger()(self.joined):
                found = self.joined.find(w.surface, at)
                if found < 0:
                    continue
                self.inside.update(range(found + 1, found + len(w.surface)))
                at = found + len(w.surface)

    def _ko_tail_grammatical(self, end: int) -> bool:
        from mecab import MeCab

        s = self.joined
        a = end
        while a > 0 and _HANGUL.match(s[a - 1]):
            a -= 1
        b = end
        while b < len(s) and _HANGUL.match(s[b]):
            b += 1
        # the next word too: alone, mecab-ko reads 릴리스의 / 오디오의 with no boundary before 의
        c = b
        while c < len(s) and s[c] in " \t":
            c += 1
        while c < len(s) and not s[c].isspace():
            c += 1
        morphs = MeCab().parse(s[a:c])
        cut, tail = end - a, b - a
        if not any(m.span.end == cut for m in morphs):
            return False
        return all(
            all(p.startswith(("J", "E", "VCP", "XSN")) for p in m.feature.pos.split("+"))
            for m in morphs
            if cut <= m.span.start < tail
        )

    def cuts(self, start: int, end: int) -> bool:
        """Whether the span ``[start, end)`` of the text cuts a word at either edge."""
        s, (js, je) = self.joined, (self.pos[start], self.pos[end])
        for edge, is_start in ((js, True), (je, False)):
            if edge <= 0 or edge >= len(s):
                continue
            a, b = s[edge - 1], s[edge]
            if _LATIN.match(a) and _LATIN.match(b):
                return True
            if _KATA.match(a) and _KATA.match(b):
                return True
            if (
                _HANGUL.match(a)
                and _HANGUL.match(b)
                and (is_start or not self._ko_tail_grammatical(edge))
            ):
                return True
            if _JA_CHAR.match(a) and _JA_CHAR.match(b) and edge in self.inside:
                return True
        return False


def measure(docs: list[tuple[str, str, str]]) -> dict[str, dict[str, float | int]]:
    """Per group (``man-ja``, ``man-ko``, ``help-ja``, ``help-ko``): how many masked documents got a
    token inside a word."""
    from spcl.extract.backends.rules_backend import rules_rows
    from spcl.mask import mask_text
    from spcl.text import normalize

    out: dict[str, dict[str, float | int]] = {}
    for key, lang, raw in docs:
        group = f"{key.split(':')[0]}-{lang}"
        row = out.setdefault(
            group,
            {
                "documents": 0,
                "masked": 0,
                "masked_with_token_inside_word": 0,
                "spans": 0,
                "spans_inside_word": 0,
                "with_person_span": 0,
                "seconds": 0.0,
            },
        )
        text = normalize(raw)
        started = time.perf_counter()
        result = mask_text(text, rules_rows(text))
        row["seconds"] += time.perf_counter() - started
        row["documents"] += 1
        if not result.spans:
            continue
        check = _Checker(text)
        bad = sum(check.cuts(sp.start, sp.end) for sp in result.spans)
        row["masked"] += 1
        row["with_person_span"] += any(sp.type == "PERSON" for sp in result.spans)
        row["spans"] += len(result.spans)
        row["spans_inside_word"] += bad
        row["masked_with_token_inside_word"] += bool(bad)
    for row in out.values():
        masked = row["masked"]
        row["share_inside_word"] = (
            round(row["masked_with_token_inside_word"] / masked, 4) if masked else 0.0
        )
        row["docs_per_s"] = round(row["documents"] / row["seconds"], 1) if row["seconds"] else 0.0
        row["seconds"] = round(row["seconds"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python tools/wrapped.py [--limit N] [--docs CACHE.jsonl]``: print the per-group numbers
    as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=600, help="documents per group")
    ap.add_argument(
        "--docs",
        type=Path,
        default=None,
        help="cache of the rendered documents (written when missing, read when present)",
    )
    args = ap.parse_args(argv)
    if args.docs and args.docs.is_file():
        docs = [tuple(json.loads(line)) for line in args.docs.read_text("utf-8").splitlines()]
    else:
        docs = [
            *man_documents(limit=args.limit),
            *man_documents(MAN_KO, args.limit, "ko"),
            *help_documents("ja", args.limit),
            *help_documents("ko", args.limit),
        ]
        if args.docs:
            args.docs.write_text(
                "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), "utf-8"
            )
    print(json.dumps(measure(docs), indent=1))  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
