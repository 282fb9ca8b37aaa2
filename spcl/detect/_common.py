"""Shared regex fragments and context helpers for the rule detectors.

Boundaries are digit lookarounds, never ``\\b``: ``\\b`` fails when digits touch Hangul or kana
("전화01012345678로"). Every pattern here and in the detectors is linear-time: bounded quantifiers,
and separators that are required between repeated groups, so no input makes the engine backtrack
quadratically.
"""

from __future__ import annotations

import re
from typing import Any

from spcl.rule_types import context_gates, context_pattern

# Before a number: no digit or ASCII letter (product codes, hex), no "hex-" (UUID pieces) and no
# "digit." (IP addresses, versions, decimals). Hangul, kana, kanji, spaces and punctuation are fine.
NUM_LEFT = r"(?<![\dA-Za-z])(?<![\dA-Fa-f][-‐－])(?<!\d[.．])"
# After a number: no digit or ASCII letter, and the run does not continue with "-x" or ".digit".
NUM_RIGHT = r"(?![\dA-Za-z])(?![-‐－][\dA-Za-z])(?![.．]\d)"
# Digit-group separators: hyphens and dashes (ASCII, Unicode, full-width), dot, space.
SEP = r"[-‐‑‒–—−－.． ]"
# Separators allowed inside card / My Number groups.
GROUP_SEP = r"[-‐‑–−－ ]"

_NEGATIVE_CONTEXT = re.compile(
    r"주문\s?번호|송장|운송장|접수\s?번호|일련\s?번호|제품\s?번호|모델|특허|사업자|"
    r"order\s?(?:no|number|id|#)|invoice|tracking|isbn|issn|serial|patent|model|s/n|sku|"
    r"注文番号|伝票番号|お?問い?合わ?せ番号|受付番号|特許|製品番号|型番|法人番号",
    re.IGNORECASE,
)
NEGATIVE_WINDOW = 16


def window_has(pattern: re.Pattern[str], text: str, start: int, window: int) -> bool:
    """True when ``pattern`` occurs in the ``window`` characters before ``start`` (no copy of the
    text)."""
    return pattern.search(text, max(0, start - window), start) is not None


def after_has(pattern: re.Pattern[str], text: str, end: int, window: int) -> bool:
    """True when ``pattern`` matches right at ``end`` within ``window`` characters."""
    return pattern.match(text, end, min(len(text), end + window)) is not None


def negative_context(text: str, start: int) -> bool:
    """True when words before ``start`` say the number is an order, tracking, ISBN or serial
    number."""
    return window_has(_NEGATIVE_CONTEXT, text, start, NEGATIVE_WINDOW)


# A documentation example, not a person's value: "e.g. 03-1234-5678", "例えば…",
# "03-1234-5678のように", "예: …". Only a value its validator cannot confirm is dropped by it (a
# valid check digit stays found).
_EXAMPLE_BEFORE = re.compile(
    r"e\.\s?g\.|for example|for instance|example:|sample:|dummy|placeholder|test data|"
    r"例えば|たとえば|例[:：]|記入例|サンプル|ダミー|예[:：]|예를 들어|예시|샘플|더미",
    re.IGNORECASE,
)
_EXAMPLE_AFTER = re.compile(
    r"\s?(?:のように|のような|などの?形式|형식으로|처럼|\(?e\.g\.|\(?(?:example|sample|dummy|fake|"
    r"test)\)|(?:is|as) (?:an? )?(?:example|sample|dummy|placeholder|test (?:data|value|number)))",
    re.IGNORECASE,
)
EXAMPLE_WINDOW = 24


def example_context(text: str, start: int, end: int) -> bool:
    """True when words right around ``text[start:end]`` say it is a documentation example or test
    data.

    >>> example_context("例えば 03-1234-5678 と書く", 4, 16)
    True
    >>> example_context("03-1234-5678のように", 0, 12)
    True
    >>> example_context("電話 03-1234-5678 まで", 3, 15)
    False
    """
    return window_has(_EXAMPLE_BEFORE, text, start, EXAMPLE_WINDOW) or after_has(
        _EXAMPLE_AFTER, text, end, 32
    )


def vetoed(text: str, start: int, end: int, before: re.Pattern[str] | None, window: int) -> bool:
    """True when a detector's own veto words (``before``, within ``window`` characters before
    ``start``) or a documentation-example cue (:func:`example_context`) stand around
    ``text[start:end]``. Detectors ask this only for a value their validator cannot decide."""
    if before is not None and window_has(before, text, start, window):
        return True
    return example_context(text, start, end)


# the last text and its lower-cased copy (detectors of one document share it)
_LOWERED: list[str] = ["", ""]


def lowered(text: str) -> str:
    """``text.lower()``, computed once per document for the detectors that gate on lower-case cue
    words."""
    if _LOWERED[0] is not text:
        _LOWERED[0], _LOWERED[1] = text, text.lower()
    return _LOWERED[1]


NEVER = re.compile(r"(?!)")
"""A pattern that matches nowhere (a type whose context words are all switched off)."""


def context_regex(settings: Any, type_: str) -> re.Pattern[str]:
    """The context words of rule type ``type_`` in the languages of ``settings``
    (``DetectSettings``) as one case-insensitive pattern (:func:`spcl.rule_types.context_pattern`);
    :data:`NEVER` when there are none."""
    return context_pattern(settings.context.get(type_, {}), settings.languages) or NEVER


def context_cues(settings: Any, type_: str) -> tuple[str, ...]:
    """Lower-case substrings one of which every context-word match of ``type_`` holds (cheap
    gates)."""
    return context_gates(settings.context.get(type_, {}), settings.languages)
