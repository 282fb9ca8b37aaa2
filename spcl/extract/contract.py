"""The extractor contract: ``TYPE<TAB>ORIGINAL`` lines, checked against the source.

``parse_extraction`` NFC-normalizes the source and each value, trims type and value (the type is
also upper-cased), removes complete ``<think>…</think>`` blocks, reads the lines that contain a tab
(type = text before the first tab, value = the rest), keeps allowed types with non-empty values,
de-duplicates ``(type, value)`` pairs, and keeps a candidate only if its literal or one of its
restricted variants occurs in the source (``spcl.mask.variants``, the same digit-boundary rule as
the masker).

What a model prints is not always what the prompt asked for, and a row dropped for its form would
release its value in clear as soon as another row of the answer matched. So the parser also reads
(the readings of a value: ``spcl.extract.printed_values``):

- a value in another compatibility form, case or spacing, or without the source's invisible
  characters (``spcl.mask.loose``): kept as the source's own surface(s) of it, so the masker
  replaces what the document holds; a value found as printed brings its other such forms too (``JOHN
  SMITH`` beside ``John Smith``; for PERSON and REL only whole words, and for a one-word value with
  a capital only forms that keep one: never ``brown`` for ``Brown``);
- a value followed by a further tab column the model added (a score, a note), without it; a value in
  quotes, backticks, emphasis or punctuation, without them; a value of a non-numeric type that is a
  list (``A, B``), item by item; a PERSON value without a title or suffix the source lacks (``Mr. A
  B``, ``A B Jr``; whole words only);
- a type behind list markers, emphasis, backticks or a trailing colon (``- PERSON``, ``**PERSON**``,
  ``PERSON:``) or under a common synonym (``NAME``, ``PHONE_NUMBER``, ``E-MAIL``:
  ``_TYPE_ALIASES``), and a line without a tab that starts with an allowed type followed by a colon,
  two or more spaces or a dash (``PERSON: 김가상``, ``PERSON 김가상``: a tab turned into spaces), or
  — written in capitals — by one space or none (``PERSON 鈴木 七夏``, ``PERSON田中 直人``);
- a row of a type it does not know whose value occurs in the source: read as the closest known type
  (``PHOEN`` → ``PHONE``) or else as the generic ``ID``, so the value is masked; where neither is
  allowed the document fails (``unknown_type_rows``) — such a value never vanishes while the
  document is released.

Only a value that occurs in no such form is hallucinated. A hallucinated row of a non-numeric type
that plausibly refers to text of the source — it shares a capitalised whole word of two or more
letters with the source (``Jonathan A. Smithers`` for ``Jonathan Smithers``), or two adjacent
kana/Han/Hangul characters (``김가산`` for ``김가상``) — is a *near-source* row
(``near_source_rows``): the model may have pointed at a name it copied wrongly, so the name would be
released in clear.

``parse_success`` is True when the output is empty (only whitespace once think blocks are removed)
or when at least one row matched the source and no row is near-source; anything else (chatter, only
hallucinated rows, only foreign types, a near-source row) is a failure, and the document must not be
released as clean (fail closed).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from spcl.entity_types import DEFAULT_TYPES, RULE_HIT_TYPES
from spcl.extract.printed_values import near_source, relocate
from spcl.mask.loose import loose_surfaces
from spcl.mask.variants import (
    WHOLE_WORD_TYPES,
    normalize_type,
    normalize_value,
    occurrences_by_pair,
    occurs,
)
from spcl.text import normalize

THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL)
REJECT_REASONS: tuple[str, ...] = ("type_not_allowed", "empty_value", "duplicate", "not_in_source")


@dataclass(slots=True)
class ParseResult:
    """What the parser kept and why it dropped the rest (counts only name reasons, never values).

    ``candidates``: accepted ``(TYPE, VALUE)`` pairs in output order. ``hallucinated_rows``:
    allowed-type, non-empty, de-duplicated rows whose value does not occur in the source.
    ``rows_read``: lines with a tab. ``lines_without_tab``: non-blank lines without a tab.
    ``rows_rejected``: reason → count, reasons in ``REJECT_REASONS``. ``checked_rows``:
    allowed-type, non-empty, de-duplicated rows (the denominator of the hallucination rate).
    ``near_source_rows``: hallucinated rows that share a name-like token with the source
    (``near_source``); any makes ``parse_success`` False. ``retyped_rows``: rows of a type the
    contract does not know, read as the closest known type (``PHOEN`` → ``PHONE``) or, failing that,
    as the generic ``ID``. ``unknown_type_rows``: rows of an unknown type that could not be retyped
    (no close type and ``ID`` not allowed) whose value occurs in the source; any makes
    ``parse_success`` False (the value must not be released in clear). A row of an unknown type
    whose value is not in the source is rejected as ``type_not_allowed``, as is a known type that is
    not allowed.
    """

    candidates: list[tuple[str, str]] = field(default_factory=list)
    hallucinated_rows: list[tuple[str, str]] = field(default_factory=list)
    parse_success: bool = True
    rows_read: int = 0
    lines_without_tab: int = 0
    rows_rejected: dict[str, int] = field(default_factory=dict)
    think_blocks: int = 0
    near_source_rows: int = 0
    retyped_rows: int = 0
    unknown_type_rows: int = 0

    @property
    def checked_rows(self) -> int:
        """Rows that reached the source check: accepted + hallucinated."""
        return len(self.candidates) + len(self.hallucinated_rows)

    def __repr__(self) -> str:  # never print values
        return (
            f"ParseResult(candidates={len(self.candidates)},"
            f" hallucinated={len(self.hallucinated_rows)}, parse_success={self.parse_success},"
            f" rows_read={self.rows_read}, near_source_rows={self.near_source_rows},"
            f" unknown_type_rows={self.unknown_type_rows}, rows_rejected={self.rows_rejected})"
        )


def _normalized_allowed(allowed_types: Iterable[str]) -> frozenset[str]:
    return frozenset(normalize_type(t) for t in allowed_types)


def check_candidates(
    rows: Iterable[tuple[str, str]],
    source: str,
    allowed_types: Iterable[str] = DEFAULT_TYPES,
    *,
    result: ParseResult | None = None,
) -> ParseResult:
    """Apply the contract's row rules (allowed type, non-empty, de-duplicated, in source) to ready
    rows.

    Used by ``parse_extraction`` and by the evaluator for predictions given as candidate lists.
    ``parse_success`` is set to True when no row was given or at least one row was accepted, and no
    hallucinated row is near the source (``near_source``).
    """
    res = result if result is not None else ParseResult()
    allowed = _normalized_allowed(allowed_types)
    text = normalize(source)
    rejected: Counter[str] = Counter(res.rows_rejected)
    seen: set[tuple[str, str]] = set()
    checked: list[tuple[str, str]] = []
    n_rows = 0
    for type_raw, value_raw in rows:
        n_rows += 1
        type_ = normalize_type(type_raw)
        value = normalize_value(value_raw)
        if type_ not in allowed:
            # a type the contract does not know, with a value the source holds, must never vanish:
            # read it as the closest known type (or the generic one), or fail the document closed
            if type_ in _KNOWN_NAMES or not value or not _in_source(value, text):
                rejected["type_not_allowed"] += 1
                continue
            known = _known_type(type_, allowed)
            if known is None:
                res.unknown_type_rows += 1
                rejected["type_not_allowed"] += 1
                continue
            res.retyped_rows += 1
            type_ = known
        if not value:
            rejected["empty_value"] += 1
            continue
        if (type_, value) in seen:
            rejected["duplicate"] += 1
            continue
        seen.add((type_, value))
        checked.append((type_, value))
    found = occurrences_by_pair(checked, text)  # one scan for all rows
    accepted: set[tuple[str, str]] = set()
    for pair in checked:
        # the source's own surfaces of the value in other forms (NFKC, case, spacing, invisible
        # characters): of a value printed loosely, and the other forms of one found as printed
        # (whole words only for PERSON/REL)
        if found[pair]:
            whole = pair[0] in WHOLE_WORD_TYPES
            # spacing: the variants'
            others = loose_surfaces(pair[1], text, whole_words=whole, unspaced=False)
            # "brown" is not "Brown"
            if whole and " " not in pair[1] and any(c.isupper() for c in pair[1]):
                others = [o for o in others if any(c.isupper() for c in o)]
            located = [pair, *((pair[0], s) for s in others)]
        else:
            located = relocate(pair[0], pair[1], text)
        if not located:
            res.hallucinated_rows.append(pair)
            rejected["not_in_source"] += 1
            res.near_source_rows += near_source(pair[0], pair[1], text)
            continue
        for p in located:
            if p not in accepted:
                accepted.add(p)
                res.candidates.append(p)
    res.rows_rejected = {k: rejected[k] for k in REJECT_REASONS if rejected[k]}
    res.parse_success = (
        (n_rows == 0 or bool(res.candidates))
        and not res.near_source_rows
        and not res.unknown_type_rows
    )
    return res


GENERIC_TYPE = "ID"
"""What a row of a type the contract does not know, and that resembles none, is masked as (when
allowed)."""


def _known_type(type_: str, allowed: frozenset[str]) -> str | None:
    """The allowed type a row of unknown ``type_`` is read as: the closest known type name or
    synonym (``PHOEN`` → ``PHONE``, ``EMIAL`` → ``EMAIL``), else :data:`GENERIC_TYPE`; ``None`` for
    a known type that is not allowed (switched off on purpose) or when the reading is not allowed
    either.

    >>> allowed = frozenset({"PHONE", "ID"})
    >>> _known_type("PHOEN", allowed), _known_type("CALL", allowed)
    ('PHONE', 'ID')
    """
    if type_ in _KNOWN_NAMES:
        return None
    close = difflib.get_close_matches(type_, sorted(_KNOWN_NAMES), n=1, cutoff=0.8)
    if close:
        known = _TYPE_ALIASES.get(close[0], close[0])
        return known if known in allowed else None
    return GENERIC_TYPE if GENERIC_TYPE in allowed else None


def _in_source(value: str, text: str) -> bool:
    """True when ``value`` (or a reading of it the parser accepts) occurs in ``text``."""
    return occurs(GENERIC_TYPE, value, text) or bool(relocate(GENERIC_TYPE, value, text))


_TYPE_DECORATION = re.compile(r"^(?:[-*•·]\s+|\d{1,3}[.)]\s*)?[\s*_`\"']*(.*?)[\s*_`\"':]*$")


_UNTABBED_ROW = re.compile(
    r"^\s*(?:[-*•·]\s+|\d{1,3}[.)]\s*)?[*_`]*([A-Za-z][A-Za-z0-9_]*)[*_`]*"
    r"(?:\s*:\s*|\s{2,}|\s+[-–—=]\s+)(\S.*)$"
)


_TYPE_ALIASES: dict[str, str] = {
    "NAME": "PERSON", "FULL_NAME": "PERSON", "PERSON_NAME": "PERSON", "PER": "PERSON",
    "PHONE_NUMBER": "PHONE", "TELEPHONE": "PHONE", "TEL": "PHONE", "MOBILE": "PHONE",
    "E_MAIL": "EMAIL", "EMAIL_ADDRESS": "EMAIL", "MAIL": "EMAIL",
    "DATE_OF_BIRTH": "DOB", "BIRTHDATE": "DOB", "BIRTH_DATE": "DOB", "BIRTHDAY": "DOB",
    "CREDIT_CARD": "CARD", "CARD_NUMBER": "CARD",
    "BANK_ACCOUNT": "ACCOUNT", "ACCOUNT_NUMBER": "ACCOUNT",
    "IP_ADDRESS": "IP", "PASSWORD": "CREDENTIAL", "STREET_ADDRESS": "ADDRESS",
}  # fmt: skip
_TYPE_ALIASES.update(
    {
        name: entity
        for name, entity in RULE_HIT_TYPES.items()
        if name != entity and name not in _TYPE_ALIASES
    }
)
"""Names a model uses for a type against the prompt (``NAME``, ``PHONE_NUMBER``, ``E-MAIL`` …, and
the rule detectors' type names: ``IBAN`` → ``ACCOUNT``, ``PASSPORT`` → ``ID``): read as the type."""

_KNOWN_NAMES: frozenset[str] = frozenset(DEFAULT_TYPES) | frozenset(_TYPE_ALIASES)
"""Every type name the parser knows (the types and their synonyms)."""

_ROW_LEAD = re.compile(r"^\s*(?:[-*•·]\s+|\d{1,3}[.)]\s*)?[*_`]*")
_NAME_CHAR = re.compile(r"[A-Za-z0-9_]")


def _glued_row(line: str, allowed: frozenset[str]) -> tuple[str, str] | None:
    """A row written as a known type name in capitals followed by one space or none, then the value
    (``PERSON 鈴木 七夏``, ``PERSON田中 直人``): ``(type, value)``, else ``None``. The longest known
    name that the line starts with wins; it must not run on into a longer word (``IDENTITY`` is no
    ``ID`` row).

    >>> (_glued_row("PERSON田中 直人", frozenset({"PERSON"})),
    ...  _glued_row("IDENTITY x", frozenset({"ID"})))
    (('PERSON', '田中 直人'), None)
    """
    lead = _ROW_LEAD.match(line)
    # the pattern matches any line (``lead`` is never None)
    rest = line[lead.end() :] if lead else line
    for name in _GLUED_NAMES:
        if not rest.startswith(name):
            continue
        after = rest[len(name) :]
        if after[:1] and _NAME_CHAR.match(after[0]) and not after[0].isdigit():
            continue
        value = after.lstrip("*_`").strip()
        type_ = _type_name(name)
        return (type_, value) if value and type_ in allowed else None
    return None


_GLUED_NAMES: tuple[str, ...] = tuple(sorted(_KNOWN_NAMES, key=lambda n: (-len(n), n)))


def _type_name(raw: str) -> str:
    """A printed type read through decoration and common synonyms (``**Phone number**:`` →
    ``PHONE``)."""
    name = re.sub(r"[\s-]+", "_", normalize_type(_TYPE_DECORATION.sub(r"\1", raw.strip())))
    return _TYPE_ALIASES.get(name, name)


def parse_extraction(
    raw: str, source: str, allowed_types: Iterable[str] = DEFAULT_TYPES
) -> ParseResult:
    """Parse an extractor's raw output into source-checked candidates.

    >>> raw = "<think>x</think>PERSON\\t김가상\\nACCOUNT\\talias123456\\n"
    >>> r = parse_extraction(raw, "김 가 상 123456")
    >>> r.candidates, r.hallucinated_rows, r.parse_success
    ([('PERSON', '김가상')], [('ACCOUNT', 'alias123456')], True)
    """
    res = ParseResult()
    res.think_blocks = len(THINK_RE.findall(raw))
    body = THINK_RE.sub("", raw)
    rows: list[tuple[str, str]] = []
    allowed = _normalized_allowed(allowed_types)
    for line in body.splitlines():
        if "\t" not in line:
            # a row whose tab became a colon, spaces or a dash still counts when it names an allowed
            # type
            m = _UNTABBED_ROW.match(line)
            glued = (
                None
                if m is not None and _type_name(m.group(1)) in allowed
                else _glued_row(line, allowed)
            )
            if m is not None and _type_name(m.group(1)) in allowed:
                rows.append((_type_name(m.group(1)), m.group(2)))
            elif glued is not None:  # PERSON 鈴木 七夏 / PERSON田中 直人
                rows.append(glued)
            elif line.strip():
                res.lines_without_tab += 1
            continue
        type_, value = line.split("\t", 1)
        # read through list markers, emphasis, backticks or a colon a model put around the type, and
        # synonyms
        rows.append((_type_name(type_), value))
    res.rows_read = len(rows)
    check_candidates(rows, source, allowed_types, result=res)
    res.parse_success = (
        (not body.strip() or bool(res.candidates))
        and not res.near_source_rows
        and not res.unknown_type_rows
    )
    return res
