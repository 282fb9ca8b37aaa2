"""The forms a candidate value may take in a source: its type's rank and checks, the literal and the
restricted PERSON and numeric variants (:class:`Alternative`), and one regular expression over them.
``spcl.mask.variants`` finds them in a text (see its docstring for the rules).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from spcl.text import normalize

# When one value is predicted with several types, the first type here wins (no semantic guessing).
TYPE_PRIORITY: tuple[str, ...] = (
    "RRN",
    "SSN",
    "ITIN",
    "ID",
    "CARD",
    "ACCOUNT",
    "CREDENTIAL",
    "PHONE",
    "EMAIL",
    "IP",
    "DOB",
    "PERSON",
    "ADDRESS",
    "REL",
)
NUMERIC_TYPES: frozenset[str] = frozenset(
    {"RRN", "SSN", "ITIN", "DOB", "PHONE", "ACCOUNT", "CARD", "ID"}
)
WHOLE_WORD_TYPES: frozenset[str] = frozenset({"PERSON", "REL"})
"""Types whose occurrences the masker replaces only where they stand as whole words (never
rule-hit types)."""
PERSON_VARIANT_MIN, PERSON_VARIANT_MAX = 2, 6
PERSON_GAP_CHARS = " \t\r\n\u3000"
NUMERIC_SEPARATORS = " \t-./()\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uff0d"
MAX_PERSON_GAP = 2
MAX_NUMERIC_GAP = 3

_FULLWIDTH_TO_ASCII = str.maketrans("０１２３４５６７８９", "0123456789")
_NUMERIC_VALUE_CHARS = frozenset("0123456789０１２３４５６７８９+" + NUMERIC_SEPARATORS)


def _gap(chars: str, most: int) -> str:
    """A bounded run of ``chars``: ASCII ones in one class, each run of other code points on its
    own.

    Python's ``re`` compiles a class that mixes ASCII with scattered non-ASCII characters into a
    64K-entry bitmap (≈0.5 ms per class, and a numeric variant has one gap per digit); a class of
    one contiguous run is cheap. The empty lookahead ``(?=)`` keeps the parser from merging the runs
    back into one class.
    """
    ascii_chars = "".join(ch for ch in chars if ord(ch) < 128)
    items = ["[" + re.escape(ascii_chars) + "]"]
    others = sorted({ord(ch) for ch in chars if ord(ch) >= 128})
    runs: list[list[int]] = []
    for cp in others:
        if runs and cp == runs[-1][1] + 1:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp])
    for lo, hi in runs:
        body = re.escape(chr(lo)) if lo == hi else f"[{re.escape(chr(lo))}-{re.escape(chr(hi))}]"
        items.append(body + "(?=)")
    return "(?:" + "|".join(items) + ")" + f"{{0,{most}}}"


_PERSON_GAP = _gap(PERSON_GAP_CHARS, MAX_PERSON_GAP)
_NUMERIC_GAP = _gap(NUMERIC_SEPARATORS, MAX_NUMERIC_GAP)
_TYPE_RE = re.compile(r"[A-Z][A-Z0-9_]*")


def normalize_type(type_: str) -> str:
    """A candidate type as compared everywhere: trimmed and upper-cased."""
    return type_.strip().upper()


def normalize_value(value: str) -> str:
    """A candidate value as compared everywhere: NFC and trimmed."""
    return normalize(value).strip()


def type_rank(type_: str) -> int:
    """Position of ``type_`` in the fixed priority (types not listed rank after all listed ones)."""
    try:
        return TYPE_PRIORITY.index(type_)
    except ValueError:
        return len(TYPE_PRIORITY)


def check_type_name(type_: str) -> None:
    """Raise ``ValueError`` unless ``type_`` can name a token ``[TYPE_n]`` (``[A-Z][A-Z0-9_]*``)."""
    if not _TYPE_RE.fullmatch(type_):
        raise ValueError(f"type {type_!r} cannot name a token: use [A-Z][A-Z0-9_]*")


@dataclass(frozen=True, slots=True)
class Alternative:
    """One way a candidate can appear: a regex ``pattern`` (with digit boundaries) for ``type``.

    ``literal`` tells a literal from a variant; ``length`` is its nominal length (characters of the
    literal, or of the variant's compact form), used to order alternatives longest-first; ``first``
    holds the characters a match can start with. ``kind`` (``literal``, ``numeric`` or ``person``)
    and ``key`` (the literal, the ASCII digits, the name without gaps) say which characters any
    match must start with, for the indexed scan (:func:`match_positions`).
    """

    type: str
    pattern: str
    literal: bool
    length: int
    first: str
    kind: str = "literal"
    key: str = ""

    def sort_key(self) -> tuple[int, int, int, str, str]:
        """Longest first, literal before variant, then type priority, then the pattern itself."""
        return (
            -self.length,
            0 if self.literal else 1,
            type_rank(self.type),
            self.type,
            self.pattern,
        )


def _bounded(body: str, first: str, last: str) -> str:
    left = r"(?<!\d)" if first.isdigit() else ""
    right = r"(?!\d)" if last.isdigit() else ""
    return left + body + right


def _digit_class(ch: str) -> str:
    ascii_digit = ch.translate(_FULLWIDTH_TO_ASCII)
    return "[" + ascii_digit + chr(ord(ascii_digit) - ord("0") + ord("０")) + "]"


def alternatives(type_: str, value: str) -> list[Alternative]:
    """The literal and restricted-variant alternatives of one normalized ``(type, value)``.

    >>> [a.literal for a in alternatives("PERSON", "김가상")]
    [True, False]
    >>> [a.literal for a in alternatives("ACCOUNT", "alias123456")]
    [True]
    """
    if not value:
        return []
    alts = [
        Alternative(
            type_,
            _bounded(re.escape(value), value[0], value[-1]),
            True,
            len(value),
            value[0],
            "literal",
            value,
        )
    ]
    if type_ == "PERSON":
        compact = "".join(ch for ch in value if ch not in PERSON_GAP_CHARS)
        if PERSON_VARIANT_MIN <= len(compact) <= PERSON_VARIANT_MAX:
            body = _PERSON_GAP.join(re.escape(ch) for ch in compact)
            alts.append(
                Alternative(
                    type_,
                    _bounded(body, compact[0], compact[-1]),
                    False,
                    len(compact),
                    compact[0],
                    "person",
                    compact,
                )
            )
    elif type_ in NUMERIC_TYPES and all(ch in _NUMERIC_VALUE_CHARS for ch in value):
        digits = [ch for ch in value if ch.isdigit()]
        if digits:
            body = _NUMERIC_GAP.join(_digit_class(d) for d in digits)
            first = _digit_class(digits[0])[1:-1]
            key = "".join(digits).translate(_FULLWIDTH_TO_ASCII)
            alts.append(
                Alternative(
                    type_, _bounded(body, "0", "0"), False, len(digits), first, "numeric", key
                )
            )
    return alts


def canonical_alternatives(candidates: Iterable[tuple[str, str]]) -> list[Alternative]:
    """Alternatives of all candidates, de-duplicated and in one canonical (longest-first) order.

    Candidates are normalized first; empty values are skipped. When several candidates produce the
    same pattern, the literal one wins, then the type with the higher fixed priority. The result
    does not depend on the order of ``candidates``.
    """
    best: dict[str, Alternative] = {}
    for type_raw, value_raw in candidates:
        type_ = normalize_type(type_raw)
        value = normalize_value(value_raw)
        if not value:
            continue
        for alt in alternatives(type_, value):
            have = best.get(alt.pattern)
            if have is None or (0 if alt.literal else 1, type_rank(alt.type), alt.type) < (
                0 if have.literal else 1,
                type_rank(have.type),
                have.type,
            ):
                best[alt.pattern] = alt
    return sorted(best.values(), key=Alternative.sort_key)


@lru_cache(maxsize=4096)
def scan_regex(alts: tuple[Alternative, ...]) -> re.Pattern[str]:
    """One regex that, at every position where any alternative matches, captures each one that does.

    Group ``i + 1`` holds alternative ``i``'s match at that position (zero-width lookaheads, so
    overlapping occurrences are all seen in a single left-to-right scan). A lookahead on the
    possible first characters skips positions where nothing can start.
    """
    firsts = sorted(set("".join(a.first for a in alts)))
    guard = "(?=[" + "".join(re.escape(ch) for ch in firsts) + "])"
    return re.compile(guard + "".join(f"(?:(?=({a.pattern})))?" for a in alts))
