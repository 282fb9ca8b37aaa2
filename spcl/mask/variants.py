"""Where a candidate value occurs in a source: its literal and its restricted variants.

This module is the single definition of "a value occurs in the source", shared by the contract
parser (``spcl.extract.contract``), the masker (``spcl.mask.masker``) and the evaluator's leak
check:

- **Literal**: the NFC value itself.
- **PERSON variant**: the name with its spaces removed (2–6 characters), matched with at most two
  spaces/tabs/newlines (``" \\t\\r\\n\\u3000"``) between its characters: ``김가상`` also matches
  ``김 가 상``.
- **Numeric variant** (RRN, DOB, PHONE, ACCOUNT, CARD, ID): only when the value consists of digits
  and the known separators; its digits (ASCII or full-width) in order with at most three separators
  between any two digits: ``010-0000-1234`` also matches ``010 0000 1234`` and ``01000001234``.
  Letters are never dropped, so ``alias123456`` has no variant and never matches ``123456``.
- **Digit boundary**: a match that starts (ends) with a digit must not be preceded (followed) by a
  digit, so ``123456`` does not match inside ``91234567``. Literals and variants obey the same rule.
- **Whole words** (PERSON and REL, in ``scan(..., whole_words=True)``, what the masker uses): an
  occurrence counts only where it stands as a whole word (``spcl.mask.words.is_whole_word``:
  morpheme boundaries for Japanese, eojeol + particles for Korean, word boundaries for Latin text),
  so ``オプ`` never matches inside ``オプション``. A value that stands nowhere as a whole word is
  matched everywhere, as before (fail closed: a detector found it, so it is masked). Rule-hit types
  (identifiers) are never restricted.

Every pattern is a plain sequence with bounded gaps: matching is linear in the text length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from spcl.entity_types import DEFAULT_TYPES  # noqa: F401 - re-exported; the vocabulary lives there
from spcl.errors import RunFailed
from spcl.mask.variant_forms import (
    MAX_NUMERIC_GAP,
    MAX_PERSON_GAP,
)
from spcl.mask.variant_forms import (
    NUMERIC_SEPARATORS as NUMERIC_SEPARATORS,
)
from spcl.mask.variant_forms import (
    NUMERIC_TYPES as NUMERIC_TYPES,
)
from spcl.mask.variant_forms import (
    PERSON_GAP_CHARS as PERSON_GAP_CHARS,
)
from spcl.mask.variant_forms import (
    PERSON_VARIANT_MAX as PERSON_VARIANT_MAX,
)
from spcl.mask.variant_forms import (
    PERSON_VARIANT_MIN as PERSON_VARIANT_MIN,
)
from spcl.mask.variant_forms import (
    TYPE_PRIORITY as TYPE_PRIORITY,
)
from spcl.mask.variant_forms import (
    WHOLE_WORD_TYPES as WHOLE_WORD_TYPES,
)
from spcl.mask.variant_forms import (  # re-exported: importers know these from here
    Alternative as Alternative,
)
from spcl.mask.variant_forms import (
    alternatives as alternatives,
)
from spcl.mask.variant_forms import (
    canonical_alternatives as canonical_alternatives,
)
from spcl.mask.variant_forms import (
    check_type_name as check_type_name,
)
from spcl.mask.variant_forms import (
    normalize_type as normalize_type,
)
from spcl.mask.variant_forms import (
    normalize_value as normalize_value,
)
from spcl.mask.variant_forms import (
    scan_regex as scan_regex,
)
from spcl.mask.variant_forms import (
    type_rank as type_rank,
)
from spcl.mask.words import is_whole_word, starts_korean_word

INDEXED_SCAN_FROM = 32
"""From this many alternatives on, :func:`match_positions` indexes them by their first characters
instead of trying every one at every position (one regex with a lookahead per alternative is
quadratic in their number); below it, the single regex is faster. Both give the same matches."""
_KEY_CHARS = 12
_FULLWIDTH_DIGITS = frozenset("０１２３４５６７８９")
_PERSON_GAP_SET = frozenset(PERSON_GAP_CHARS)
_NUMERIC_GAP_SET = frozenset(NUMERIC_SEPARATORS)


class ScanBudgetExceeded(RunFailed, RuntimeError):
    """A document needs more span-search work than ``work_budget`` allows (it must fail closed)."""


def _regex_positions(
    text: str, alts: tuple[Alternative, ...]
) -> list[tuple[int, list[tuple[int, int]]]]:
    hits: list[tuple[int, list[tuple[int, int]]]] = []
    n = len(alts)
    for m in scan_regex(alts).finditer(text):
        if m.lastindex is None:  # the guard only checks the first character
            continue
        ends = [(i, m.end(i + 1)) for i in range(n) if m.end(i + 1) >= 0]
        hits.append((m.start(), ends))
    return hits


def _text_key(text: str, pos: int, kind: str) -> str:
    """The first (up to ``_KEY_CHARS``) characters a match of an alternative of ``kind`` at ``pos``
    would spell: the raw text (literal), its ASCII digits with separator runs skipped (numeric), its
    characters with name gaps skipped (person). Skips are never shorter than the pattern's own, so a
    match's key is a prefix of this."""
    if kind == "literal":
        return text[pos : pos + _KEY_CHARS]
    numeric = kind == "numeric"
    gaps, most = (
        (_NUMERIC_GAP_SET, MAX_NUMERIC_GAP) if numeric else (_PERSON_GAP_SET, MAX_PERSON_GAP)
    )
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

    Each pattern is deterministic (gap characters never occur in the value's own characters), so
    walking the key while skipping at most the allowed gap run gives the regex's one possible match.
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
        gaps, most = (
            (_NUMERIC_GAP_SET, MAX_NUMERIC_GAP) if numeric else (_PERSON_GAP_SET, MAX_PERSON_GAP)
        )
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
def _alt_index(
    alts: tuple[Alternative, ...],
) -> tuple[dict[tuple[str, str], list[int]], dict[str, list[int]], frozenset[str]]:
    """Alternatives by ``(kind, key prefix)``, the key lengths in use per kind, and their first
    characters."""
    by_key: dict[tuple[str, str], list[int]] = {}
    lengths: dict[str, set[int]] = {}
    for i, alt in enumerate(alts):
        key = alt.key[:_KEY_CHARS]
        by_key.setdefault((alt.kind, key), []).append(i)
        lengths.setdefault(alt.kind, set()).add(len(key))
    firsts = frozenset("".join(a.first for a in alts))
    return by_key, {k: sorted(v) for k, v in lengths.items()}, firsts


def _indexed_positions(
    text: str, alts: tuple[Alternative, ...], budget: int | None
) -> list[tuple[int, list[tuple[int, int]]]]:
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


def match_positions(
    text: str, alts: list[Alternative] | tuple[Alternative, ...], work_budget: int | None = None
) -> list[tuple[int, list[tuple[int, int]]]]:
    """Every position of ``text`` where some alternative matches, with ``(index, end)`` of each one
    that does (indexes ascending), positions ascending — what one lookahead per alternative would
    capture.

    Many alternatives are indexed by the characters any match must start with, so each position
    tries only the few that can match there (linear in the text for distinct values);
    ``work_budget`` bounds the pattern tries of that search (:class:`ScanBudgetExceeded` past it).
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


def scan(
    text: str,
    alts: list[Alternative],
    whole_words: bool = False,
    eojeol_start: frozenset[str] = frozenset(),
    work_budget: int | None = None,
) -> list[Occurrence]:
    """For every position of ``text`` where an alternative matches, the winning alternative there.

    The winner is the longest actual match; ties go to literal over variant, then type priority,
    then the canonical order of ``alts``. With ``whole_words``, an alternative of a
    ``WHOLE_WORD_TYPES`` type takes part only where its match is a whole word — unless it is a whole
    word nowhere in ``text``, in which case every match counts (fail closed). An alternative whose
    pattern is in ``eojeol_start`` (a model's names) also counts where it starts a Korean eojeol
    (``spcl.mask.words.starts_korean_word``: ``소지섭하는듯``). ``work_budget``: see
    :func:`match_positions`.
    """
    if not alts:
        return []
    hits = match_positions(text, alts, work_budget)
    restricted = (
        {i for i, a in enumerate(alts) if a.type in WHOLE_WORD_TYPES} if whole_words else set()
    )
    if restricted:
        whole = {
            (start, i, end)
            for start, ends in hits
            for i, end in ends
            if i in restricted
            and (
                is_whole_word(text, start, end)
                or (alts[i].pattern in eojeol_start and starts_korean_word(text, start, end))
            )
        }
        # a whole word nowhere: matched everywhere (fail closed)
        restricted &= {i for _, i, _ in whole}
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
    """Every ``(start, end, index)`` where alternative ``alts[index]`` matches ``text`` (overlaps
    included)."""
    return [(start, end, i) for start, ends in match_positions(text, alts) for i, end in ends]


def occurrences_by_pair(
    pairs: Iterable[tuple[str, str]], text: str
) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """For each normalized ``(type, value)``, every ``[start, end)`` where it or a variant occurs in
    NFC ``text``.

    One scan for all pairs (the same compiled regex as ``mask_text`` uses for the same candidates);
    at each start only the longest occurrence is listed. Pairs are normalized; empty values map to
    ``[]``.
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
