"""Text normalization (NFC) and a fast script-based language guess."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

LANGS: tuple[str, ...] = ("ja", "ko", "en", "other")

_EN_WORDS = re.compile(r"(?i)(?<![a-z])(?:the|and|of|to|is|in|for|with|that|this|was|are)(?![a-z])")
_SAMPLE_CHARS = 1000


def normalize(text: str) -> str:
    """NFC form of ``text`` (returned as is when it is already NFC).

    >>> normalize("\u1100\u1161") == "\uac00"
    True
    """
    if unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def guess_lang(text: str) -> str:
    """Guess ``ja``, ``ko``, ``en`` or ``other`` from the scripts in the first 1,000 characters.

    Kana → ja, Hangul → ko (the more frequent script wins when both occur); Han without kana or
    Hangul → other (Chinese); Latin letters with common English function words → en.

    >>> (guess_lang("今日は晴れです"), guess_lang("오늘은 맑아요"),
    ...  guess_lang("It is sunny and warm"))
    ('ja', 'ko', 'en')
    """
    return guess_langs([text])[0]


_KANA_RANGES = ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9D))
_HANGUL_RANGES = ((0xAC00, 0xD7A3), (0x1100, 0x11FF), (0x3130, 0x318F))
_HAN_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF))
_LATIN_RANGES = ((0x41, 0x5A), (0x61, 0x7A))
_OTHER, _KANA_CLASS, _HANGUL_CLASS, _HAN_CLASS, _LATIN_CLASS = range(5)


def _script_table() -> np.ndarray:
    """Script class of every code point (the character classes of :func:`guess_lang`)."""
    table = np.full(0x110000, _OTHER, np.uint8)
    for cls, ranges in (
        (_KANA_CLASS, _KANA_RANGES),
        (_HANGUL_CLASS, _HANGUL_RANGES),
        (_HAN_CLASS, _HAN_RANGES),
        (_LATIN_CLASS, _LATIN_RANGES),
    ):
        for lo, hi in ranges:
            table[lo : hi + 1] = cls
    return table


_SCRIPT = _script_table()


def guess_langs(texts: Sequence[str]) -> list[str]:
    """:func:`guess_lang` of every text, the scripts counted for the whole batch at once with NumPy.

    >>> guess_langs(["今日は晴れです", "", "오늘은 맑아요", "It is sunny and warm", "天气很好"])
    ['ja', 'other', 'ko', 'en', 'other']
    """
    samples = [t[:_SAMPLE_CHARS] for t in texts]
    n = len(samples)
    if not n:
        return []
    cp = np.frombuffer("".join(samples).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lengths = np.fromiter(map(len, samples), np.int64, n)
    slot = np.repeat(np.arange(n, dtype=np.int64) * 5, lengths) + _SCRIPT[cp]
    counts = np.bincount(slot, minlength=5 * n).reshape(n, 5).tolist()
    out = []
    for (_, kana, hangul, han, latin), sample in zip(counts, samples, strict=True):
        if kana or hangul:
            out.append("ko" if hangul > kana else "ja")
        elif latin and latin * 2 >= han and _EN_WORDS.search(sample) is not None:
            out.append("en")
        else:
            out.append("other")
    return out
