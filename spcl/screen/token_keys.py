"""Token keys of the screen's hashed features: every token becomes a 64-bit key from integer arrays,
with no Python call per token (MeCab words and whole Latin words by a polynomial hash over code
points, word bigrams from neighbouring keys, character n-grams packed from code points), and
splitmix64 mixes them (see :mod:`spcl.screen.features`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_U64 = np.uint64
_P = _U64(0x100000001B3)  # odd multiplier of the polynomial word hash
_P_INV = _U64(pow(0x100000001B3, -1, 1 << 64))
_SALT_SP = _U64(0x5350000000000000)
_SALT_BI = _U64(0x9E3779B97F4A7C15)
_SALT_CHAR = _U64(0xC4A2000000000000)
_SALT_LATIN = _U64(0x1A71000000000000)
_LATIN_WORD = re.compile(r"[a-z0-9']+")
_SALT_JA = _U64(0x4A41000000000000)
_JA_CHAR_ORDERS = (1, 2)


def latin_words(text: str) -> str:
    """Lower-case Latin words (letters, digits, apostrophes) of ``text`` joined by single spaces.

    >>> latin_words("He was ARRESTED, then 김씨 left.")
    'he was arrested then left'
    """
    return _latin_words_of_lowered(text.lower())


def _latin_words_of_lowered(text: str) -> str:
    return " ".join(_LATIN_WORD.findall(text))


def mix64(keys: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser over a ``uint64`` array (wrap-around arithmetic)."""
    return _mix64_inplace(keys.astype(_U64, copy=True))


def _mix64_inplace(x: np.ndarray) -> np.ndarray:
    """:func:`mix64` overwriting ``x`` (a ``uint64`` array the caller owns), with one scratch
    buffer."""
    tmp = np.empty_like(x)
    with np.errstate(over="ignore"):
        for shift, mul in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
            np.right_shift(x, _U64(shift), out=tmp)
            x ^= tmp
            if mul is not None:
                x *= _U64(mul)
    return x


def _codepoints(joined: str) -> np.ndarray:
    return np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(_U64)


_POWERS_KEPT = 1 << 22
_powers_cache: list[np.ndarray] = []


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``_P**i`` and ``_P_INV**i`` (mod 2**64) for ``i < n``; the first ``_POWERS_KEPT`` are
    computed once."""
    if _powers_cache and _powers_cache[0].size >= n:
        return _powers_cache[0][:n], _powers_cache[1][:n]
    size = n if n > _POWERS_KEPT else min(_POWERS_KEPT, max(n, 1 << 16))
    out = []
    for base in (_P, _P_INV):
        arr = np.empty(size, _U64)
        arr[0] = 1
        arr[1:] = base
        with np.errstate(over="ignore"):
            out.append(np.cumprod(arr, dtype=_U64))
    if size <= _POWERS_KEPT:
        _powers_cache[:] = out
    return out[0][:n], out[1][:n]


_LATIN_CHAR = np.zeros(0x110000, bool)
_LATIN_CHAR[[ord(c) for c in "abcdefghijklmnopqrstuvwxyz0123456789'"]] = True


def latin_word_keys(lowered: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``word_keys([latin words of t for t in lowered])`` without building those strings: the runs
    of ``[a-z0-9']`` code points of each (lower-cased) text, hashed from prefix sums in one pass.

    >>> k, d = latin_word_keys(["he said: don't", "", "김씨 left"])
    >>> ok, od = word_keys(["he said don't", "", "left"])
    >>> d.tolist(), bool((k == ok).all() and (d == od).all())
    ([0, 0, 0, 2], True)
    """
    if not lowered:
        return np.zeros(0, _U64), np.zeros(0, np.int64)
    cp = np.frombuffer("\x00".join(lowered).encode("utf-32-le"), dtype=np.uint32)
    pos = np.flatnonzero(_LATIN_CHAR[cp])  # only the word characters are hashed (few in CJK text)
    if pos.size == 0:
        return np.zeros(0, _U64), np.zeros(0, np.int64)
    brk = np.flatnonzero(np.diff(pos) != 1) + 1  # a gap in the positions ends a word
    starts = np.concatenate(([0], brk))
    ends = np.concatenate((brk, [pos.size]))
    powers, inv = _powers(pos.size)
    with np.errstate(over="ignore"):
        term = (cp[pos].astype(_U64) + _U64(1)) * powers
        prefix = np.zeros(pos.size + 1, _U64)
        np.cumsum(term, dtype=_U64, out=prefix[1:])
        keys = (prefix[ends] - prefix[starts]) * inv[starts]
    return keys, _text_index(lowered, pos[starts])


def word_keys(wakati: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Keys of space-separated words, and the index of the text each word came from.

    A word's text index comes from its position, so a newline inside a text only separates words.

    >>> k, d = word_keys(["a bb a", "bb"])
    >>> d.tolist(), bool(k[0] == k[2]), bool(k[1] == k[3]), bool(k[0] == k[1])
    ([0, 0, 0, 1], True, True, False)
    """
    if not wakati:
        return np.zeros(0, _U64), np.zeros(0, np.int64)
    cp = _codepoints("\n".join(wakati))
    n = cp.size
    if n == 0:
        return np.zeros(0, _U64), np.zeros(0, np.int64)
    is_sep = (cp == 32) | (cp == 10)
    powers, inv = _powers(n)
    with np.errstate(over="ignore"):
        term = np.where(is_sep, _U64(0), (cp + _U64(1)) * powers)
        prefix = np.zeros(n + 1, _U64)
        np.cumsum(term, dtype=_U64, out=prefix[1:])
        edge = np.diff(np.concatenate(([0], (~is_sep).astype(np.int8), [0])))
        starts = np.flatnonzero(edge == 1)
        ends = np.flatnonzero(edge == -1)
        keys = (prefix[ends] - prefix[starts]) * inv[starts]
    return keys, _text_index(wakati, starts)


def _text_bounds(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Start offset of each text in ``sep.join(texts)`` (a one-character separator) and each
    text's length."""
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    return np.cumsum(lengths + 1) - (lengths + 1), lengths


def _text_index(texts: Sequence[str], positions: np.ndarray) -> np.ndarray:
    """Index of the text each position of ``sep.join(texts)`` (one-character separator) falls in."""
    starts, _ = _text_bounds(texts)
    return np.searchsorted(starts, positions, side="right").astype(np.int64) - 1


def bigram_keys(keys: np.ndarray, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keys of neighbouring pairs inside the same document."""
    if keys.size < 2:
        return np.zeros(0, _U64), np.zeros(0, np.int64)
    same = doc[1:] == doc[:-1]
    with np.errstate(over="ignore"):
        # a fresh array: mixed in place
        bk = _mix64_inplace(keys[:-1][same].astype(_U64, copy=False))
        bk *= _SALT_BI
        bk += keys[1:][same]
    return bk, doc[1:][same]


def char_ngram_keys(
    texts: Sequence[str], orders: Sequence[int], first_chars: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Keys of character n-grams (orders 1–3, 21 bits per code point) and their text index, by order
    then position. An n-gram never spans two texts; a NUL inside a text is an ordinary character.
    ``first_chars`` (a boolean table over code points) keeps only the n-grams whose first character
    it marks.

    >>> k, d = char_ngram_keys(["abc", "de"], (2,))
    >>> d.tolist(), int(k[0] ^ k[1]) != 0
    ([0, 0, 1], True)
    """
    if not texts or not orders:
        return np.zeros(0, _U64), np.zeros(0, np.int64)
    cp = np.frombuffer("\x00".join(texts).encode("utf-32-le"), dtype=np.uint32)
    starts, lengths = _text_bounds(texts)
    at = np.arange(cp.size) if first_chars is None else np.flatnonzero(first_chars[cp])
    doc = np.searchsorted(starts, at, side="right") - 1
    room = starts[doc] + lengths[doc] - at  # characters left in the text from each position
    out_k, out_d = [], []
    for n in orders:
        if not 1 <= n <= 3:
            continue
        ok = room >= n  # an n-gram never runs into the next text
        pos = at[ok]
        key = cp[pos].astype(_U64)
        for j in range(1, n):
            key = (key << _U64(21)) | cp[pos + j]
        out_k.append(key ^ (_SALT_CHAR + _U64(n)))
        out_d.append(doc[ok])
    if not out_k:
        return np.zeros(0, _U64), np.zeros(0, np.int64)
    return np.concatenate(out_k), np.concatenate(out_d).astype(np.int64)


def japanese_char_keys(
    texts: Sequence[str], orders: Sequence[int] = _JA_CHAR_ORDERS
) -> tuple[np.ndarray, np.ndarray]:
    """Keys of the character uni- and bigrams of Japanese texts (``mecab_dic="chars"``: no MeCab)
    and their text index: :func:`char_ngram_keys` in a key space of their own, so no Japanese token
    shares a column with a Korean or English one by construction.

    >>> k, d = japanese_char_keys(["東京", "京"])
    >>> d.tolist(), bool(k[1] == k[2]), bool(k[0] == k[1])
    ([0, 0, 1, 0], True, False)
    """
    k, d = char_ngram_keys(texts, orders)
    return k ^ _SALT_JA, d
