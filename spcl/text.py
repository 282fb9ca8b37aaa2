"""Text normalization (NFC) and a fast script-based language guess."""

from __future__ import annotations

import re
import unicodedata

LANGS: tuple[str, ...] = ("ja", "ko", "en", "other")

_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9d]")
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_LATIN = re.compile(r"[A-Za-z]")
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

    >>> guess_lang("今日は晴れです"), guess_lang("오늘은 맑아요"), guess_lang("It is sunny and warm")
    ('ja', 'ko', 'en')
    """
    sample = text[:_SAMPLE_CHARS]
    kana = len(_KANA.findall(sample))
    hangul = len(_HANGUL.findall(sample))
    if kana or hangul:
        return "ko" if hangul > kana else "ja"
    latin = len(_LATIN.findall(sample))
    if latin and latin * 2 >= len(_HAN.findall(sample)) and len(_EN_WORDS.findall(sample)) >= 1:
        return "en"
    return "other"
