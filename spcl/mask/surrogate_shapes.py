"""Character shapes for surrogates: each character class (digit of a width, Latin letter of a case,
Hangul, hiragana, katakana, kanji), a random character of the same class, and the small helpers the
fakes of every type share.
"""

from __future__ import annotations

import random
import re

KO_GIVEN_SYLLABLES = "민서지현수준영예은도하유진성우연호경미혜정동나윤채시아"
_KANJI = "山田川本中村小林松井上木佐藤高橋伊渡辺加吉清水池前野原石森岡長谷部宮内大和花美子太郎一"
_HIRAGANA = (
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわ"
)
_KATAKANA = (
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワ"
)
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_FULL_DIGITS = "０１２３４５６７８９"
WORD = re.compile(r"\S+")


def is_hangul(ch: str) -> bool:
    """True for a precomposed Hangul syllable."""
    return "\uac00" <= ch <= "\ud7a3"


def is_kanji(ch: str) -> bool:
    """True for a CJK unified ideograph (or 々)."""
    return "\u4e00" <= ch <= "\u9fff" or ch == "々"


def digit_like(ch: str, d: int) -> str:
    """Digit ``d`` in the width of ``ch`` (ASCII or full-width)."""
    return _FULL_DIGITS[d] if "０" <= ch <= "９" else str(d)


def is_digit(ch: str) -> bool:
    """True for an ASCII or full-width digit."""
    return "0" <= ch <= "9" or "０" <= ch <= "９"


def digit_value(ch: str) -> int:
    """The value of an ASCII or full-width digit."""
    return ord(ch) - (0xFF10 if "０" <= ch <= "９" else 48)


def shape_fake(surface: str, rng: random.Random) -> str:
    """Each character replaced by a random one of its class (digit, upper, lower, Hangul, hiragana,
    katakana, kanji); anything else kept."""
    out = []
    for ch in surface:
        if is_digit(ch):
            out.append(digit_like(ch, rng.randrange(10)))
        elif "A" <= ch <= "Z":
            out.append(rng.choice(_UPPER))
        elif "a" <= ch <= "z":
            out.append(rng.choice(_LOWER))
        elif is_hangul(ch):
            out.append(chr(0xAC00 + rng.randrange(11172)))
        elif "\u3041" <= ch <= "\u309f":
            out.append(rng.choice(_HIRAGANA))
        elif "\u30a1" <= ch <= "\u30ff" and ch != "ー":
            out.append(rng.choice(_KATAKANA))
        elif is_kanji(ch):
            out.append(rng.choice(_KANJI))
        else:
            out.append(ch)
    return "".join(out)


def digits_of(surface: str) -> str:
    """The ASCII digits of ``surface``, in order."""
    return "".join(str(digit_value(ch)) for ch in surface if is_digit(ch))


def fresh_digits(rng: random.Random, n: int) -> str:
    """``n`` random ASCII digits."""
    return "".join(str(rng.randrange(10)) for _ in range(n))


def case_like(word: str, model: str) -> str:
    """``word`` in the case of ``model`` (all upper, all lower, or as is)."""
    if model.isupper():
        return word.upper()
    if model.islower():
        return word.lower()
    return word
