"""The ``rules`` backend: rule detectors plus name finders that need no model, printing the TSV
contract.

- Rule hits from ``spcl.detect.find_pii`` are mapped onto the extractor types (``MYNUMBER`` →
  ``RRN``, ``POSTAL`` → ``ADDRESS``); hits a validator showed to be invalid (``validated=False``)
  are dropped.
- Person names: ``spcl.extract.names.find_person_names`` — unidic ``人名`` tags (Japanese),
  mecab-ko-dic ``인명`` tags and news-style honorific patterns (Korean), titles/cues/given names
  (English), plus the statistical NER models of the optional ``names`` extra where installed (GiNZA
  for Japanese, spaCy for English). A lone Korean surname keeps its title or honorific (``박씨``,
  ``김 의원``), because the masker masks every occurrence of a value and ``박`` alone would hit
  unrelated words.
- REL: kinship words of two or more characters that stand as whole words (``主人`` is no kin in
  ``主人公``; one-character words such as 妻 or 형 would mask unrelated words that contain them).

The output lists each ``(TYPE, value)`` once, in order of first appearance, as ``TYPE<TAB>value``
lines; a value across a line break is printed with one space for each run of whitespace (the
contract parser finds the source's own surface of it again).
"""

from __future__ import annotations

import logging
import re
import time

from spcl.detect import find_pii
from spcl.entity_types import DEFAULT_TYPES, RULE_HIT_TYPES
from spcl.extract.backends.base import Extraction, Extractor
from spcl.extract.names import find_person_names
from spcl.extract.names.en import en_name_spans
from spcl.extract.names.ja import ja_name_spans
from spcl.extract.names.ko import ko_name_spans
from spcl.mask.words import is_whole_word
from spcl.text import normalize

log = logging.getLogger("spcl.extract.rules")

RULES_VERSION = "rules-v1"
HIT_TYPE_MAP: dict[str, str] = RULE_HIT_TYPES
"""Rule-detector type → extractor type (defined once in ``spcl.entity_types``)."""

REL_WORDS: tuple[str, ...] = (
    # Korean
    "어머니", "아버지", "엄마", "아빠", "남편", "아내", "부인", "아들", "할머니", "할아버지",
    "손자", "손녀", "누나", "오빠", "언니", "동생", "남동생", "여동생", "시어머니", "시아버지",
    "장모", "장인", "며느리", "사위", "외할머니", "외할아버지", "배우자", "자녀", "딸아이",
    # Japanese
    "母親", "父親", "息子", "祖母", "祖父", "長男", "長女", "次男", "次女", "義母", "義父",
    "配偶者", "お母さん", "お父さん", "主人", "家内", "嫁",
    # English
    "mother", "father", "husband", "daughter", "brother", "sister", "grandmother", "grandfather",
    "spouse", "wife",
)  # fmt: skip
_REL_RE = re.compile(
    "|".join(sorted((re.escape(w) for w in REL_WORDS if len(w) >= 2), key=len, reverse=True))
)


def ja_person_names(text: str) -> list[tuple[int, str]]:
    """Japanese person names (``spcl.extract.names.ja``): ``(offset, name)`` in text order.

    >>> [n for _, n in ja_person_names("山田太郎さんと佐藤さんは東京で会った。")]
    ['山田太郎', '佐藤']
    """
    return [(s, text[s:e]) for s, e in ja_name_spans(text)]


def ko_person_names(text: str) -> list[tuple[int, str]]:
    """Korean person names (``spcl.extract.names.ko``): ``(offset, name)`` in text order.

    >>> [n for _, n in ko_person_names("김모(33)씨와 A씨(42)는 박씨를 만났다")]
    ['김모', 'A씨', '박씨']
    """
    return [(s, text[s:e]) for s, e in ko_name_spans(text)]


def en_person_names(text: str) -> list[tuple[int, str]]:
    """English person names after a title or a cue phrase (``spcl.extract.names.en``).

    >>> [n for _, n in en_person_names("Please call Dr. Jane Roe; my name is Sam Lee.")]
    ['Jane Roe', 'Sam Lee']
    """
    return [(s, text[s:e]) for s, e in en_name_spans(text)]


_EXTRA_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # 16 digits in four groups: masked as a card even when the check digit fails (a typo is still a
    # card)
    ("CARD", re.compile(r"(?<!\d)\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?!\d)")),
    # North American numbers: (335) 555-0109, 676-555-0163
    # (area codes start with 2-9; toll-free 8XX codes are company numbers, not personal)
    (
        "PHONE",
        re.compile(
            r"(?<![\d(])(?:\((?!8(?:00|33|44|55|66|77|88))[2-9]\d{2}\)\s?|"
            r"(?!8(?:00|33|44|55|66|77|88))[2-9]\d{2}[-.])\d{3}[-.]\d{4}(?!\d)"
        ),
    ),
    # Korean road-name addresses whose building number is glued to a particle (…솔내로 56로 이사했)
    (
        "ADDRESS",
        re.compile(
            r"(?:서울특별시|부산광역시|대구광역시|인천광역시|광주광역시|대전광역시|울산광역시|"
            r"세종특별자치시|경기도|강원도|강원특별자치도|충청북도|충청남도|전라북도|"
            r"전북특별자치도|전라남도|경상북도|경상남도|제주특별자치도)"
            r"(?:\s[가-힣]{1,6}[시군구]){1,2}\s[가-힣0-9]{1,10}(?:로|길)"
            r"\s\d{1,4}(?:-\d{1,4})?(?!\d)"
        ),
    ),
    # English street addresses: 158 Sample Street, Apt 2, Fairview (any run of up to 16 whitespace
    # characters between the parts, so a CRLF or an indented wrapped line keeps the city inside the
    # value)
    (
        "ADDRESS",
        re.compile(
            r"(?<![\dA-Za-z])\d{1,5}\s{1,16}[A-Z][a-z]+(?:\s{1,16}[A-Z][a-z]+)?\s{1,16}"
            r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Lane|Ln\.?|Court|Ct\.?|Drive|Dr\.?|"
            r"Boulevard|Blvd\.?|Way|Place|Pl\.?)(?![A-Za-z])"
            r"(?:,\s{1,16}(?:Apt|Suite|Unit|#)\.?\s{0,16}\w+)?"
            r"(?:,\s{1,16}[A-Z][a-z]+(?:\s{1,16}[A-Z][a-z]+)?)?"
        ),
    ),
)
# apartment building and unit after a Korean address
_KO_UNIT = re.compile(r"\s?\d{1,4}동\s?\d{1,5}호")
_WHITESPACE_RUN = re.compile(r"\s+")
_ACCOUNT_CUE = re.compile(r"account|acct|계좌|口座|은행|銀行")


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e in spans)


def rules_rows(text: str, types: tuple[str, ...] = DEFAULT_TYPES) -> list[tuple[str, str]]:
    """The ``(TYPE, value)`` rows the rules backend prints for one NFC text, in order of first
    appearance."""

    text = normalize(text)
    allowed = set(types)
    found: list[tuple[int, str, str]] = []
    taken: list[tuple[int, int]] = []
    for h in find_pii(text):
        type_ = HIT_TYPE_MAP.get(h.type)
        if type_ is None or h.validated is False:
            continue
        end = h.end
        if h.type == "MYNUMBER" and _ACCOUNT_CUE.search(text, max(0, h.start - 40), h.start):
            # a 12-digit number after an account cue is an account, whatever its checksum
            type_ = "ACCOUNT"
        if type_ == "ADDRESS" and (unit := _KO_UNIT.match(text, end)):
            end = unit.end()
        found.append((h.start, type_, text[h.start : end]))
        taken.append((h.start, end))
    for type_, pattern in _EXTRA_RULES:
        for m in pattern.finditer(text):
            end = m.end()
            if type_ == "ADDRESS" and (unit := _KO_UNIT.match(text, end)):
                end = unit.end()
            if not _overlaps(taken, m.start(), end):
                found.append((m.start(), type_, text[m.start() : end]))
                taken.append((m.start(), end))
    if "PERSON" in allowed:
        found += [(start, "PERSON", text[start:end]) for start, end in find_person_names(text)]
    if "REL" in allowed:
        found += [
            (m.start(), "REL", m.group())
            for m in _REL_RE.finditer(text)
            if is_whole_word(text, m.start(), m.end())
        ]
    rows: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for _, type_, value in sorted(found, key=lambda f: f[0]):
        # one row per line: a value across a line break (or holding a tab) is printed with each run
        # of whitespace as one space, and the contract parser finds the source's own surface again
        # (``spcl.mask.loose``)
        value = (
            _WHITESPACE_RUN.sub(" ", value.strip())
            if ("\n" in value or "\t" in value or "\r" in value)
            else value.strip()
        )
        key = (type_, value)
        if type_ in allowed and value and key not in seen:
            seen.add(key)
            rows.append(key)
    return rows


def format_rows(rows: list[tuple[str, str]]) -> str:
    """Rows in the extractor contract: one ``TYPE<TAB>value`` line each."""
    return "".join(f"{t}\t{v}\n" for t, v in rows)


class RulesExtractor(Extractor):
    """Rule detectors and name finders behind the extractor interface (CPU, no model, no prompt)."""

    name = "rules"
    model = RULES_VERSION
    prompt_version = "none"

    def run(self, texts: list[str]) -> list[Extraction]:
        """Rows for each text; a detector exception fails only that document
        (``rules_error:<Type>``)."""
        results: list[Extraction] = []
        for text in texts:
            started = time.perf_counter()
            try:
                raw = format_rows(rules_rows(text, self.types))
                results.append(Extraction(raw=raw, seconds=time.perf_counter() - started))
            except Exception as err:  # one bad document must not stop the batch
                results.append(
                    Extraction(
                        error=f"rules_error:{type(err).__name__}",
                        seconds=time.perf_counter() - started,
                    )
                )
        return results
