"""Real text cut into passages: consecutive sentences joined up to a length, kept when mostly one
language."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[。．.!?！？])\s*")
_SCRIPT_CHARS = {
    "ja": re.compile(r"[\u3040-\u30ff]"),
    "ko": re.compile(r"[\uac00-\ud7a3]"),
    "en": re.compile(r"[A-Za-z]"),
}


def passages(text: str, lang: str, min_chars: int = 80, max_chars: int = 600) -> list[str]:
    """Consecutive sentences joined into passages of ``min_chars``–``max_chars`` that are mostly
    ``lang``.

    >>> passages("A short one. " * 20, "en", min_chars=40, max_chars=100)[0]
    'A short one. A short one. A short one. A short one. A short one. A short one. A short one.'
    """
    out, current = [], ""
    for sentence in _SENTENCE_END.split(text):
        if len(current) + len(sentence) > max_chars and current:
            out.append(current.strip())
            current = ""
        current += sentence + " "
    if current.strip():
        out.append(current.strip())
    script = _SCRIPT_CHARS[lang]
    return [p for p in out if len(p) >= min_chars and len(script.findall(p)) * 4 >= len(p)]
