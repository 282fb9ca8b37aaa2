"""Where a candidate value occurs in a source: its literal and its restricted variants.

This module is the single definition of "a value occurs in the source", shared by the contract parser
(``spcl.extract.contract``), the masker (``spcl.mask.masker``) and the evaluator's leak check:

- **Literal**: the NFC value itself.
- **PERSON variant**: the name with its spaces removed (2–6 characters), matched with at most two
  spaces/tabs/newlines (``" \\t\\r\\n\\u3000"``) between its characters: ``김가상`` also matches ``김 가 상``.
- **Numeric variant** (RRN, DOB, PHONE, ACCOUNT, CARD, ID): only when the value consists of digits and the
  known separators; its digits (ASCII or full-width) in order with at most three separators between any two
  digits: ``010-0000-1234`` also matches ``010 0000 1234`` and ``01000001234``. Letters are never
  dropped, so ``alias123456`` has no variant and never matches ``123456``.
- **Digit boundary**: a match that starts (ends) with a digit must not be preceded (followed) by a digit,
  so ``123456`` does not match inside ``91234567``. Literals and variants obey the same rule.
- **Whole words** (PERSON and REL, in ``scan(..., whole_words=True)``, what the masker uses): an occurrence
  counts only where it stands as a whole word (``spcl.mask.words.is_whole_word``: morpheme boundaries for
  Japanese, eojeol + particles for Korean, word boundaries for Latin text), so ``オプ`` never matches inside
  ``オプション``. A value that stands nowhere as a whole word is matched everywhere, as before (fail closed:
  a detector found it, so it is masked). Rule-hit types (identifiers) are never restricted.

Every pattern is a plain sequence with bounded gaps: matching is linear in the text length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from spcl.entity_types import DEFAULT_TYPES  # noqa: F401 - re-exported; the vocabulary lives there
from spcl.mask.words import is_whole_word
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
NUMERIC_TYPES: frozenset[str] = frozenset({"RRN", "SSN", "ITIN", "DOB", "PHONE", "ACCOUNT", "CARD", "ID"})
WHOLE_WORD_TYPES: frozenset[str] = frozenset({"PERSON", "REL"})
"""Types whose occurrences the masker replaces only where they stand as whole words (never rule-hit types)."""
PERSON_VARIANT_MIN, PERSON_VARIANT_MAX = 2, 6
PERSON_GAP_CHARS = " \t\r\n\u3000"
NUMERIC_SEPARATORS = " \t-./()\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uff0d"
_MAX_PERSON_GAP = 2
_MAX_NUMERIC_GAP = 3

_FULLWIDTH_TO_ASCII = str.maketrans("０１２３４５６７８９", "0123456789")
_NUMERIC_VALUE_CHARS = frozenset("0123456789０１２３４５６７８９+" + NUMERIC_SEPARATORS)


def _gap(chars: str, most: int) -> str:
    """A bounded run of ``chars``: ASCII ones in one class, each run of other code points on its own.

    Python's ``re`` compiles a class that mixes ASCII with scattered non-ASCII characters into a 64K-entry
    bitmap (≈0.5 ms per class, and a numeric variant has one gap per digit); a class of one contiguous run
    is cheap. The empty lookahead ``(?=)`` keeps the parser from merging the runs back into one class.
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


_PERSON_GAP = _gap(PERSON_GAP_CHARS, _MAX_PERSON_GAP)
_NUMERIC_GAP = _gap(NUMERIC_SEPARATORS, _MAX_NUMERIC_GAP)
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

    ``literal`` tells a literal from a variant; ``length`` is its nominal length (characters of the literal,
    or of the variant's compact form), used to order alternatives longest-first; ``first`` holds the
    characters a match can start with. ``kind`` (``literal``, ``numeric`` or ``person``) and ``key`` (the
    literal, the ASCII digits, the name without gaps) say which characters any match must start with, for
    the indexed scan (:func:`match_positions`).
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
        return (-self.length, 0 if self.literal else 1, type_rank(self.type), self.type, self.pattern)


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
    alts = [Alternative(type_, _bounded(re.escape(value), value[0], value[-1]), True, len(value), value[0],
                        "literal", value)]
    if type_ == "PERSON":
        compact = "".join(ch for ch in value if ch not in PERSON_GAP_CHARS)
        if PERSON_VARIANT_MIN <= len(compact) <= PERSON_VARIANT_MAX:
            body = _PERSON_GAP.join(re.escape(ch) for ch in compact)
            alts.append(Alternative(type_, _bounded(body, compact[0], compact[-1]), False, len(compact), compact[0],
                                    "person", compact))
    elif type_ in NUMERIC_TYPES and all(ch in _NUMERIC_VALUE_CHARS for ch in value):
        digits = [ch for ch in value if ch.isdigit()]
        if digits:
            body = _NUMERIC_GAP.join(_digit_class(d) for d in digits)
            first = _digit_class(digits[0])[1:-1]
            key = "".join(digits).translate(_FULLWIDTH_TO_ASCII)
            alts.append(Alternative(type_, _bounded(body, "0", "0"), False, len(digits), first, "numeric", key))
    return alts


def canonical_alternatives(candidates: Iterable[tuple[str, str]]) -> list[Alternative]:
    """Alternatives of all candidates, de-duplicated and in one canonical (longest-first) order.

    Candidates are normalized first; empty values are skipped. When several candidates produce the same
    pattern, the literal one wins, then the type with the higher fixed priority. The result does not
    depend on the order of ``candidates``.
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

    Group ``i + 1`` holds alternative ``i``'s match at that position (zero-width lookaheads, so overlapping
    occurrences are all seen in a single left-to-right scan). A lookahead on the possible first characters
    skips positions where nothing can start.
    """
    firsts = sorted(set("".join(a.first for a in alts)))
    guard = "(?=[" + "".join(re.escape(ch) for ch in firsts) + "])"
    return re.compile(guard + "".join(f"(?:(?=({a.pattern})))?" for a in alts))


INDEXED_SCAN_FROM = 32
"""From this many alternatives on, :func:`match_positions` indexes them by their first characters instead
of trying every one at every position (one regex with a lookahead per alternative is quadratic in their
number); below it, the single regex is faster. Both give the same matches."""
_KEY_CHARS = 12
_FULLWIDTH_DIGITS = frozenset("０１２３４５６７８９")
_PERSON_GAP_SET = frozenset(PERSON_GAP_CHARS)
_NUMERIC_GAP_SET = frozenset(NUMERIC_SEPARATORS)


class ScanBudgetExceeded(RuntimeError):
    """A document needs more span-search work than ``work_budget`` allows (it must fail closed)."""


def _regex_positions(text: str, alts: tuple[Alternative, ...]) -> list[tuple[int, list[tuple[int, int]]]]:
    hits: list[tuple[int, list[tuple[int, int]]]] = []
    n = len(alts)
    for m in scan_regex(alts).finditer(text):
        if m.lastindex is None:  # the guard only checks the first character
            continue
        ends = [(i, m.end(i + 1)) for i in range(n) if m.end(i + 1) >= 0]
        hits.append((m.start(), ends))
    return hits


def _text_key(text: str, pos: int, kind: str) -> str:
    """The first (up to ``_KEY_CHARS``) characters a match of an alternative of ``kind`` at ``pos`` would
    spell: the raw text (literal), its ASCII digits with separator runs skipped (numeric), its characters
    with name gaps skipped (person). Skips are never shorter than the pattern's own, so a match's key is a
    prefix of this."""
    if kind == "literal":
        return text[pos:pos + _KEY_CHARS]
    numeric = kind == "numeric"
    gaps, most = (_NUMERIC_GAP_SET, _MAX_NUMERIC_GAP) if numeric else (_PERSON_GAP_SET, _MAX_PERSON_GAP)
    out: list[str] = []
    i, n = pos, len(text)
    while i < n and len(out) < _KEY_CHARS:
        ch = text[i]
        if numeric:
            if "0" <= ch <= "9":
                out.append(ch)
            elif ch in _FULLWIDTH_DIGITS:
                out.append(chr(ord(ch) - ord("０") + ord("0")))
            else:
                break
        elif ch in gaps:
            break
        else:
            out.append(ch)
        i += 1
        skipped = 0
        while i < n and skipped <= most and text[i] in gaps:
            i += 1
            skipped += 1
        if skipped > most:
            break
    return "".join(out)


_DIGIT = re.compile(r"\d")  # exactly the regex's own idea of a digit, for the boundaries


def _match_end(alt: Alternative, text: str, pos: int) -> int:
    """Where ``alt``'s pattern, matched at ``pos``, ends (-1: no match) — without the regex.

    Each pattern is deterministic (gap characters never occur in the value's own characters), so walking
    the key while skipping at most the allowed gap run gives the regex's one possible match.
    """
    key = alt.key
    n = len(text)
    if alt.kind == "literal":
        if not text.startswith(key, pos):
            return -1
        end = pos + len(key)
        left, right = key[0].isdigit(), key[-1].isdigit()
    else:
        numeric = alt.kind == "numeric"
        gaps, most = (_NUMERIC_GAP_SET, _MAX_NUMERIC_GAP) if numeric else (_PERSON_GAP_SET, _MAX_PERSON_GAP)
        i = pos
        for j, want in enumerate(key):
            if j:
                skipped = 0
                while i < n and skipped < most and text[i] in gaps:
                    i += 1
                    skipped += 1
            if i >= n:
                return -1
            ch = text[i]
            if not (ch == want or (numeric and ch == chr(ord(want) - ord("0") + ord("０")))):
                return -1
            i += 1
        end = i
        left, right = (True, True) if numeric else (key[0].isdigit(), key[-1].isdigit())
    if left and pos > 0 and _DIGIT.match(text, pos - 1):
        return -1
    if right and end < n and _DIGIT.match(text, end):
        return -1
    return end


@lru_cache(maxsize=64)
def _alt_index(alts: tuple[Alternative, ...]) -> tuple[dict[tuple[str, str], list[int]], dict[str, list[int]],
                                                      frozenset[str]]:
    """Alternatives by ``(kind, key prefix)``, the key lengths in use per kind, and their first characters."""
    by_key: dict[tuple[str, str], list[int]] = {}
    lengths: dict[str, set[int]] = {}
    for i, alt in enumerate(alts):
        key = alt.key[:_KEY_CHARS]
        by_key.setdefault((alt.kind, key), []).append(i)
        lengths.setdefault(alt.kind, set()).add(len(key))
    firsts = frozenset("".join(a.first for a in alts))
    return by_key, {k: sorted(v) for k, v in lengths.items()}, firsts


def _indexed_positions(text: str, alts: tuple[Alternative, ...],
                       budget: int | None) -> list[tuple[int, list[tuple[int, int]]]]:
    by_key, lengths, firsts = _alt_index(alts)
    hits: list[tuple[int, list[tuple[int, int]]]] = []
    work = 0
    for pos, ch in enumerate(text):
        if ch not in firsts:
            continue
        tried: list[int] = []
        for kind, sizes in lengths.items():
            key = _text_key(text, pos, kind)
            for size in sizes:
                if size > len(key):
                    break
                tried.extend(by_key.get((kind, key[:size]), ()))
        if not tried:
            continue
        work += len(tried)
        if budget is not None and work > budget:
            raise ScanBudgetExceeded(f"span search over {work} pattern tries (budget {budget})")
        ends = []
        for i in sorted(set(tried)):
            end = _match_end(alts[i], text, pos)
            if end >= 0:
                ends.append((i, end))
        if ends:
            hits.append((pos, ends))
    return hits


def match_positions(text: str, alts: list[Alternative] | tuple[Alternative, ...],
                    work_budget: int | None = None) -> list[tuple[int, list[tuple[int, int]]]]:
    """Every position of ``text`` where some alternative matches, with ``(index, end)`` of each one that
    does (indexes ascending), positions ascending — what one lookahead per alternative would capture.

    Many alternatives are indexed by the characters any match must start with, so each position tries only
    the few that can match there (linear in the text for distinct values); ``work_budget`` bounds the
    pattern tries of that search (:class:`ScanBudgetExceeded` past it).
    """
    alts = tuple(alts)
    if not alts:
        return []
    if len(alts) < INDEXED_SCAN_FROM:
        return _regex_positions(text, alts)
    return _indexed_positions(text, alts, work_budget)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """At ``start``, the best alternative that matches: its index, end and type."""

    start: int
    end: int
    index: int
    type: str


def scan(text: str, alts: list[Alternative], whole_words: bool = False,
         eojeol_start: frozenset[str] = frozenset(), work_budget: int | None = None) -> list[Occurrence]:
    """For every position of ``text`` where an alternative matches, the winning alternative there.

    The winner is the longest actual match; ties go to literal over variant, then type priority, then the
    canonical order of ``alts``. With ``whole_words``, an alternative of a ``WHOLE_WORD_TYPES`` type takes
    part only where its match is a whole word — unless it is a whole word nowhere in ``text``, in which case
    every match counts (fail closed). An alternative whose pattern is in ``eojeol_start`` (a model's names)
    also counts where it starts a Korean eojeol (``spcl.mask.words.starts_korean_word``: ``소지섭하는듯``).
    ``work_budget``: see :func:`match_positions`.
    """
    if not alts:
        return []
    hits = match_positions(text, alts, work_budget)
    restricted = {i for i, a in enumerate(alts) if a.type in WHOLE_WORD_TYPES} if whole_words else set()
    if restricted:
        from spcl.mask.words import is_whole_word, starts_korean_word

        whole = {(start, i, end) for start, ends in hits for i, end in ends
                 if i in restricted and (is_whole_word(text, start, end) or (
                     alts[i].pattern in eojeol_start and starts_korean_word(text, start, end)))}
        restricted &= {i for _, i, _ in whole}  # a whole word nowhere: matched everywhere (fail closed)
    found: list[Occurrence] = []
    for start, ends in hits:
        best: tuple[tuple[int, int, int, int], int, int] | None = None
        for i, end in ends:
            if i in restricted and (start, i, end) not in whole:
                continue
            alt = alts[i]
            key = (start - end, 0 if alt.literal else 1, type_rank(alt.type), i)
            if best is None or key < best[0]:
                best = (key, i, end)
        if best is not None:
            found.append(Occurrence(start, best[2], best[1], alts[best[1]].type))
    return found


def scan_all(text: str, alts: list[Alternative]) -> list[tuple[int, int, int]]:
    """Every ``(start, end, index)`` where alternative ``alts[index]`` matches ``text`` (overlaps included)."""
    return [(start, end, i) for start, ends in match_positions(text, alts) for i, end in ends]


def occurrences_by_pair(pairs: Iterable[tuple[str, str]], text: str) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """For each normalized ``(type, value)``, every ``[start, end)`` where it or a variant occurs in NFC ``text``.

    One scan for all pairs (the same compiled regex as ``mask_text`` uses for the same candidates); at each
    start only the longest occurrence is listed. Pairs are normalized; empty values map to ``[]``.
    """
    norm = {(normalize_type(t), normalize_value(v)) for t, v in pairs}
    alts = canonical_alternatives(norm)
    index = {a.pattern: i for i, a in enumerate(alts)}
    by_alt: dict[int, list[tuple[str, str]]] = {}
    for pair in sorted(norm):
        for alt in _value_alternatives(*pair):
            by_alt.setdefault(index[alt.pattern], []).append(pair)
    longest: dict[tuple[str, str], dict[int, int]] = {pair: {} for pair in norm}
    for start, end, i in scan_all(text, alts):
        for pair in by_alt.get(i, ()):
            ends = longest[pair]
            ends[start] = max(end, ends.get(start, end))
    return {pair: sorted(ends.items()) for pair, ends in longest.items()}


@lru_cache(maxsize=4096)
def _value_alternatives(type_: str, value: str) -> tuple[Alternative, ...]:
    return tuple(alternatives(type_, value))


def find_occurrences(type_: str, value: str, text: str) -> list[tuple[int, int]]:
    """Every ``[start, end)`` where the value or one of its variants occurs (longest at each start).

    ``text`` must already be NFC; ``type_`` and ``value`` are normalized here.
    """
    return next(iter(occurrences_by_pair([(type_, value)], text).values()))


def required_occurrences(type_: str, value: str, text: str) -> list[tuple[int, int]]:
    """The occurrences the masker promises to cover: all of ``find_occurrences``, except that for
    ``WHOLE_WORD_TYPES`` only those standing as whole words (all of them when none does).

    >>> required_occurrences("PERSON", "オプ", "オプ: オプションのオプ")
    [(0, 2), (10, 12)]
    """
    occ = find_occurrences(type_, value, text)
    if normalize_type(type_) not in WHOLE_WORD_TYPES:
        return occ

    whole = [(s, e) for s, e in occ if is_whole_word(text, s, e)]
    return whole or occ


def occurs(type_: str, value: str, text: str) -> bool:
    """True when the value or one of its restricted variants occurs in the NFC ``text``."""
    alts = _value_alternatives(normalize_type(type_), normalize_value(value))
    if not alts:
        return False
    # the guard only checks the first character: a real occurrence has captured some group
    return any(m.lastindex is not None for m in scan_regex(alts).finditer(text))
