"""What the tier embeds of a document: the whole text (cut at ``max_chars``), or the sentences
around the screen's trigger words (a sentence holding a category term of the lexicon, with one
sentence either side), joined in document order and cut at ``max_chars``; a document without a
trigger sentence falls back to its whole text."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

TRIGGER_KINDS: tuple[str, ...] = ("MEDICAL", "CRIME", "DISABILITY", "OTHER")
MODES: tuple[str, ...] = ("whole", "window")
_SENTENCE_END = re.compile(r"(?<=[。．！？!?])|(?<=[.;])(?=\s)|\n+")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (ends: 。．！？!? ; a full stop or semicolon before a space; line
    breaks), stripped, empty ones dropped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


class Triggers:
    """The category terms per language, matched as substrings (ja/ko) or whole words,
    case-insensitively (Latin script terms)."""

    def __init__(self, lexicon: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
        self.patterns: dict[str, re.Pattern[str]] = {}
        for lang, table in lexicon.items():
            terms = sorted(
                {t for kind in TRIGGER_KINDS for t in table.get(kind, ()) if t.strip()},
                key=lambda t: (-len(t), t),
            )
            if not terms:
                continue
            parts = [
                rf"(?<!\w){re.escape(t)}(?!\w)" if t.isascii() else re.escape(t) for t in terms
            ]
            self.patterns[lang] = re.compile("|".join(parts), re.IGNORECASE)

    def hit(self, sentence: str, lang: str | None) -> bool:
        """True when ``sentence`` holds a term of ``lang`` (of every language when ``lang`` has
        none)."""
        pat = self.patterns.get(lang or "")
        if pat is not None:
            return pat.search(sentence) is not None
        return any(p.search(sentence) is not None for p in self.patterns.values())


def tier_input(
    text: str, lang: str | None, mode: str, max_chars: int, triggers: Triggers | None
) -> str:
    """The encoder input of one document (see the module docstring)."""
    if mode == "whole" or triggers is None:
        return text[:max_chars]
    if mode != "window":
        raise ValueError(f"unknown tier input mode {mode!r} (known: {', '.join(MODES)})")
    sents = split_sentences(text)
    marked = [i for i, s in enumerate(sents) if triggers.hit(s, lang)]
    if not marked:
        return text[:max_chars]
    keep = sorted({j for i in marked for j in (i - 1, i, i + 1) if 0 <= j < len(sents)})
    return " ".join(sents[j] for j in keep)[:max_chars]
