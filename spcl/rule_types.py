"""The rule-detector registry: each type is declared once, as one :class:`RuleType` row, and every
table that used to be kept by hand is derived from :data:`RULE_TYPES`.

Derived here or from here: ``spcl.config.PII_TYPES``, the per-type fields of ``PolicySettings`` and
the default context words of ``DetectSettings.context`` (per language, overridable in
``conf/*.yaml``), ``spcl.detect.DETECTORS`` (the detector class, imported by name),
``spcl.detect.TYPE_PRIORITY`` and the numeric-cluster set (a detector with ``find_in`` is numeric),
``spcl.entity_types.RULE_HIT_TYPES`` and ``DEFAULT_TYPES`` (the entity vocabulary), and the
generalize ladders' type coverage (``spcl.generalize.ladders``). This module imports nothing from
spcl, so the configuration can read it without importing the detectors.

Adding a detector is one module: it defines the detector class (``find(text) -> list[Hit]``, built
with the ``DetectSettings``) and a ``RULE_TYPES`` tuple of rows, and is named in the
``SPCL_DETECTORS`` environment variable (comma-separated module names; set it for the driver and the
Spark workers alike). Such a module is imported while the configuration is being built, so at its
top it imports only this module (``Hit`` and ``RuleType`` live here); it reads its context words
with :func:`context_pattern` from the settings it is given.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import TypedDict

LANGUAGES: tuple[str, ...] = ("ja", "ko", "en")
"""Languages a detector may declare (its text languages and the keys of its context words)."""

LADDERS: tuple[str, ...] = ("label", "date", "address")
"""How ``spcl generalize`` treats a type: ``label`` (no truthful part of the value an attacker
cannot invert: the type's label), ``date`` (month, year, decade) or ``address`` (street, district,
city …)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One rule detection: a PII ``type`` at the half-open span ``[start, end)`` of the NFC text.

    ``validated`` is the validator's three-way answer: ``True`` (check digit or structure
    confirmed), ``False`` (shown not to be valid) or ``None`` (cannot tell, e.g. a post-2020 Korean
    RRN or a type with no checksum). ``detector`` names the detector and its version, e.g.
    ``"rrn_kr@1"``.
    """

    type: str
    start: int
    end: int
    validated: bool | None
    detector: str


class HitRow(TypedDict):
    """A :class:`Hit` as one entry of a filter output's ``hits`` column (what ``spcl mask`` reads
    back; a reader still guards against a malformed entry)."""

    type: str
    start: int
    end: int
    validated: bool | None
    detector: str


@dataclass(frozen=True, slots=True)
class RuleType:
    """One rule-detector type, declared once.

    ``entity``: the entity type the mask stage tokenizes it as; ``detector``: ``"module:Class"`` of
    its detector; ``rank``: the last tie-breaker between overlapping hits (lower wins);
    ``languages``: the text languages it is meant for (``detect.languages`` switches the others
    off); ``context``: its default context words per language (``detect.context.<TYPE>.<lang>``
    overrides them; a space in a word matches one optional white-space character, case is ignored);
    ``ladder``: how generalization treats it (:data:`LADDERS`).
    """

    name: str
    entity: str
    detector: str
    rank: int
    languages: tuple[str, ...] = LANGUAGES
    context: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    ladder: str = "label"


_BUILTIN: tuple[RuleType, ...] = (
    RuleType("PHONE", "PHONE", "spcl.detect.phone:PhoneDetector", 8),
    RuleType("EMAIL", "EMAIL", "spcl.detect.mail:EmailDetector", 7),
    RuleType(
        "RRN",
        "RRN",
        "spcl.detect.ids:RrnDetector",
        0,
        context={"ko": ("주민", "등록 번호", "외국인"), "en": ("rrn", "resident")},
    ),
    RuleType(
        "MYNUMBER",
        "RRN",
        "spcl.detect.ids:MyNumberDetector",
        1,
        context={"ja": ("マイナンバー", "個人番号"), "ko": ("마이넘버",), "en": ("my number",)},
    ),
    RuleType("CARD", "CARD", "spcl.detect.ids:CardDetector", 4),
    RuleType(
        "ACCOUNT",
        "ACCOUNT",
        "spcl.detect.account:AccountDetector",
        11,
        context={
            "ko": (
                "계좌",
                "은행",
                "입금",
                "송금",
                "이체",
                "예금주",
                "농협",
                "신협",
                "수협",
                "새마을금고",
                "우체국",
                "뱅크",
            ),
            "ja": (
                "口座",
                "銀行",
                "普通",
                "当座",
                "支店",
                "振込",
                "振り込み",
                "信用金庫",
                "ゆうちょ",
                "名義",
            ),
            "en": ("account", "acct", "bank"),
        },
    ),
    RuleType("DOB", "DOB", "spcl.detect.dob:DobDetector", 13, ladder="date"),
    RuleType("POSTAL", "ADDRESS", "spcl.detect.location:PostalDetector", 14),
    RuleType("ADDRESS", "ADDRESS", "spcl.detect.location:AddressDetector", 15, ladder="address"),
    RuleType(
        "SSN",
        "SSN",
        "spcl.detect.us:SsnDetector",
        2,
        context={
            "en": ("ssn", "social security", "soc sec", "soc. sec"),
            "ko": ("사회 보장",),
            "ja": ("社会保障", "ソーシャル"),
        },
    ),
    RuleType(
        "ITIN",
        "ITIN",
        "spcl.detect.us:ItinDetector",
        3,
        context={"en": ("itin", "taxpayer", "tax id"), "ja": ("納税者",), "ko": ("납세자",)},
    ),
    RuleType("IBAN", "ACCOUNT", "spcl.detect.iban:IbanDetector", 5),
    RuleType("IP", "IP", "spcl.detect.network:IpDetector", 12),
    RuleType("CREDENTIAL", "CREDENTIAL", "spcl.detect.credentials:CredentialDetector", 6),
    RuleType(
        "PASSPORT",
        "ID",
        "spcl.detect.documents:PassportDetector",
        9,
        context={"en": ("passport",), "ko": ("여권",), "ja": ("旅券", "パスポート")},
    ),
    RuleType(
        "DRIVER_LICENSE",
        "ID",
        "spcl.detect.documents:DriverLicenseDetector",
        10,
        context={
            "en": (
                "driver's license",
                "drivers license",
                "driver license",
                "driver's licence",
                "drivers licence",
                "driver licence",
                "driving license",
                "driving licence",
                "license no",
                "license number",
                "license #",
                "licence no",
                "licence number",
                "licence #",
            ),
            "ko": ("운전 면허", "면허 번호"),
            "ja": ("運転免許", "免許証", "免許番号"),
        },
    ),
)

_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def check_rows(rows: Iterable[RuleType]) -> tuple[RuleType, ...]:
    """``rows`` as a tuple, or ``ValueError`` naming the first row that is malformed or
    registered twice."""
    out: list[RuleType] = []
    seen: set[str] = set()
    for row in rows:
        if not isinstance(row, RuleType):
            raise ValueError(f"a registry row must be a RuleType, got {type(row).__name__}")
        if not _NAME.fullmatch(row.name) or not _NAME.fullmatch(row.entity):
            raise ValueError(
                f"rule type {row.name!r}: names and entity types are upper-case identifiers"
            )
        if row.name in seen:
            raise ValueError(f"rule type {row.name!r} is registered twice")
        if ":" not in row.detector:
            raise ValueError(f"rule type {row.name}: detector must be 'module:Class'")
        bad = sorted((set(row.languages) | set(row.context)) - set(LANGUAGES))
        if bad or not row.languages or not set(row.context) <= set(row.languages):
            raise ValueError(
                f"rule type {row.name}: languages and context keys must be among {list(LANGUAGES)} "
                "and context keys among its languages"
            )
        if row.ladder not in LADDERS:
            raise ValueError(f"rule type {row.name}: ladder must be one of {list(LADDERS)}")
        seen.add(row.name)
        out.append(row)
    return tuple(out)


def context_pattern(
    words_by_lang: Mapping[str, Iterable[str]], languages: Iterable[str]
) -> re.Pattern[str] | None:
    """One case-insensitive pattern of the context ``words_by_lang`` of ``languages``, or None when
    there are none.

    Each word is literal except that a space matches one optional white-space character.

    >>> context_pattern({"en": ["tax id", "taxpayer"], "ko": ["납세자"]}, ["en"]).pattern
    'tax(?:\\\\s?id|payer)'
    >>> bool(context_pattern({"en": ["tax id"]}, ["en"]).search("TAXID 12"))
    True
    """
    words = [w for lang in languages for w in words_by_lang.get(lang, ())]
    if not words:
        return None
    trie: dict = {}
    # one trie over the words' characters: the alternation branches once per shared prefix
    for w in words:
        node = trie
        for ch in w.lower():
            node = node.setdefault(ch, {})
        node[""] = {}
    return re.compile(_trie_regex(trie), re.IGNORECASE)


def _trie_regex(node: dict) -> str:
    """The regex of one trie node: longer continuations first, so a match is the longest word at
    its start."""
    branches = [
        (r"\s?" if ch == " " else re.escape(ch)) + _trie_regex(child)
        for ch, child in node.items()
        if ch
    ]
    branches.sort(key=lambda b: (-len(b), b))
    if "" in node:
        branches.append("")
    if not branches or branches == [""]:
        return ""
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"


def context_gates(
    words_by_lang: Mapping[str, Iterable[str]], languages: Iterable[str]
) -> tuple[str, ...]:
    """A few lower-case substrings one of which every match of :func:`context_pattern` holds, for
    cheap ``in`` gates: a greedy cover of the words by their substrings of 2-5 characters (the most
    words first, then the longer, then a word's start).

    >>> context_gates({"en": ["driver's license", "driving licence", "license no"],
    ...                "ja": ["免許証", "運転免許"]}, ["en", "ja"])
    ('licen', '免許')
    """
    words = list(
        dict.fromkeys(w.lower() for lang in languages for w in words_by_lang.get(lang, ()))
    )
    subs: dict[str, set[int]] = {}
    starts: set[str] = set()
    for i, w in enumerate(words):
        for piece in w.split(" "):
            for k in range(min(2, len(piece)), min(5, len(piece)) + 1):
                for j in range(len(piece) - k + 1):
                    subs.setdefault(piece[j : j + k], set()).add(i)
            starts.update(piece[:k] for k in range(1, 6))
    gates: list[str] = []
    left = set(range(len(words)))
    while left:
        best = max(subs, key=lambda s: (len(subs[s] & left), len(s), s in starts, s))
        gates.append(best)
        left -= subs[best]
    return tuple(gates)


def _plugin_modules() -> list[str]:
    # only the environment: scanning installed packages' entry points would cost every import
    # ~0.1-0.2 s
    return list(
        dict.fromkeys(
            n.strip() for n in os.environ.get("SPCL_DETECTORS", "").split(",") if n.strip()
        )
    )


def _plugin_rows() -> list[RuleType]:
    rows: list[RuleType] = []
    for name in _plugin_modules():
        module = import_module(name.partition(":")[0])
        rows += getattr(module, "RULE_TYPES", ())
    return rows


RULE_TYPES: tuple[RuleType, ...] = check_rows((*_BUILTIN, *_plugin_rows()))
"""Every rule-detector type, in the order the detectors run and the configuration lists them: the
built-in rows, then those of the modules named in ``SPCL_DETECTORS``."""

BY_NAME: dict[str, RuleType] = {t.name: t for t in RULE_TYPES}
"""The registry row of each rule type."""

PII_TYPES: tuple[str, ...] = tuple(t.name for t in RULE_TYPES)
"""Types the rule detectors can report (``spcl.detect``)."""

DEFAULT_CONTEXT: dict[str, dict[str, tuple[str, ...]]] = {
    t.name: {lang: tuple(t.context[lang]) for lang in t.languages if lang in t.context}
    for t in RULE_TYPES
    if t.context
}
"""The registered context words, type → language → words (the defaults of ``detect.context``)."""
