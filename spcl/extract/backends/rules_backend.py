"""The ``rules`` backend: rule detectors plus name finders that need no model, printing the TSV contract.

- Rule hits from ``spcl.detect.find_pii`` are mapped onto the extractor types (``MYNUMBER`` → ``RRN``,
  ``POSTAL`` → ``ADDRESS``); hits a validator showed to be invalid (``validated=False``) are dropped.
- Japanese person names: MeCab (fugashi + unidic-lite) ``名詞,固有名詞,人名`` tokens; adjacent
  surname + given-name tokens form one name. A lone surname or given name counts only before an honorific
  (さん, 様, 氏, 君, くん, ちゃん), which unidic tags as a suffix.
- Korean person names: mecab-ko-dic ``NNP`` tokens with the ``인명`` tag shaped like surname + 2–3
  syllables (python-mecab-ko, used where installed) and honorific patterns that work without it:
  ``김모(33)씨`` → ``김모``, ``김가상 씨`` → ``김가상``; a lone surname or letter keeps its honorific
  (``박씨``, ``A씨``), because the masker masks every occurrence of a value and ``박`` alone would hit unrelated words.
- English person names: a light heuristic — a title (Mr, Ms, Dr …) or a cue (``my name is``, ``named``)
  followed by capitalized words.
- REL: kinship words of two or more characters (the masker masks every occurrence of a value, so
  one-character words such as 妻 or 형 would also mask unrelated words that contain them).

The output lists each ``(TYPE, value)`` once, in order of first appearance, as ``TYPE<TAB>value`` lines.
"""

from __future__ import annotations

import logging
import re
import time
from functools import lru_cache
from typing import Any

from spcl.extract.backends.base import Extraction, Extractor
from spcl.mask.variants import DEFAULT_TYPES
from spcl.text import normalize

log = logging.getLogger("spcl.extract.rules")

RULES_VERSION = "rules-v1"
HIT_TYPE_MAP: dict[str, str] = {
    "PHONE": "PHONE",
    "EMAIL": "EMAIL",
    "RRN": "RRN",
    "MYNUMBER": "RRN",
    "CARD": "CARD",
    "ACCOUNT": "ACCOUNT",
    "DOB": "DOB",
    "POSTAL": "ADDRESS",
    "ADDRESS": "ADDRESS",
}
"""Rule-detector type → extractor type (see ``spcl.extract.prompt.TYPE_DESCRIPTIONS``)."""

_JA_HONORIFICS = ("さん", "様", "さま", "氏", "君", "くん", "ちゃん")
KO_SURNAMES = (
    "김이박최정강조윤장임한오서신권황안송류유전홍고문양손배백허남심노하곽성차주우구민진나지엄채원천방공현함변염여추"
    "도소석선설마길연위표명기반라왕금옥육인맹제모탁국어은편용예경봉사부가복태목형계피두감음빈동온호범좌팽승간상갈단견당"
)  # one syllable each
KO_COMPOUND_SURNAMES = ("남궁", "황보", "제갈", "선우", "독고", "사공", "서문")
_KO_SUR = "(?:" + "|".join(KO_COMPOUND_SURNAMES) + "|[" + KO_SURNAMES + "])"
_KO_FULL_NAME = re.compile(rf"{_KO_SUR}[가-힣]{{2,3}}")  # tagger names: surname + 2-3 syllables ("장군" is not one)
_KO_PARTICLE_AHEAD = r"(?=[의은는이가을를와과도께에,.)\s]|님|씨|$)"
_KO_CUES = "신청인|예금주|성명|이름|환자|보호자|담당자|고객|" + "|".join(
    ("어머니", "아버지", "엄마", "아빠", "남편", "아내", "부인", "아들", "딸", "할머니", "할아버지", "배우자", "동생",
     "누나", "오빠", "언니", "형", "손자", "손녀", "외할머니", "외할아버지", "며느리", "사위"))
_KO_NOT_NAMES = frozenset(_KO_CUES.split("|")) | frozenset(  # titles and roles that take 님/씨 like names
    ("고객님", "선생님", "선생", "사장", "부장", "과장", "차장", "팀장", "감독", "교수", "회장", "대표", "원장", "목사",
     "기사", "기자", "작가", "의사", "간호사", "주인", "손님", "어르신", "여사", "부모", "당신", "상대"))
_KO_AGE = r"\(\s?\d{1,3}(?:\s?세)?\s?\)"
_KO_PATTERNS: tuple[re.Pattern[str], ...] = (
    # 김모(33)씨, 김모 씨, 김모씨
    re.compile(rf"(?<![가-힣])({_KO_SUR}모)\s?(?:{_KO_AGE}\s?)?(?:씨|군|양)"),
    # A씨(42), B씨
    re.compile(r"(?<![A-Za-z])([A-Z]\s?씨)(?=\s?(?:\(|[은는이가의를와과도에,.\s]|$))"),
    # 김가상(33)씨 / 김가상 씨 / 김가상(33) / 김가상 님
    re.compile(rf"(?<![가-힣])({_KO_SUR}[가-힣]{{1,2}})\s?(?:{_KO_AGE}\s?(?:씨|군|양|님)?|씨|(?:고객)?님{_KO_PARTICLE_AHEAD})"),
    # 오예시(1978년 …), a name right before a parenthesis that opens with a digit
    re.compile(rf"(?<![가-힣])({_KO_SUR}[가-힣]{{1,2}})\(\d"),
    # a cue or a kinship word, then a name: 신청인 한유진의, 보호자: 아내 권하린, (예금주 조예시)
    re.compile(rf"(?:{_KO_CUES})\s?:?\s?(?!{_KO_CUES})({_KO_SUR}[가-힣]{{1,2}}){_KO_PARTICLE_AHEAD}"),
    # 박씨 (surname alone + 씨)
    re.compile(rf"(?<![가-힣])({_KO_SUR}\s?씨)(?=[은는이가의를와과도에게,.\s]|$)"),
)
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EN_TITLE = re.compile(
    r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?\s+((?:[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?)(?:\s+[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?){0,2})"
)
_EN_CUE = re.compile(
    r"\b(?:[Mm]y name is|[Nn]amed|[Nn]ame:|[Cc]ontact(?: person)?:|[Pp]atient:?|[Ss]incerely,|[Rr]egards,|"
    r"[Rr]efund|[Dd]ear|(?:mother|father|husband|wife|son|daughter|brother|sister|spouse|partner),)\s+"
    r"([A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})"
)
EN_GIVEN_NAMES = _words(
    """James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew Anthony
    Mark Donald Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward Jason Jeffrey Ryan
    Jacob Gary Nicholas Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Gregory Alexander Frank
    Patrick Raymond Jack Dennis Jerry Tyler Aaron Jose Adam Nathan Henry Douglas Zachary Peter Kyle Noah Ethan
    Jeremy Walter Christian Keith Roger Terry Austin Sean Gerald Carl Harold Dylan Arthur Lawrence Jordan Jesse
    Bryan Billy Bruce Gabriel Joe Logan Alan Juan Albert Willie Elijah Wayne Randy Vincent Liam Mason Lucas
    Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty Sandra Margaret
    Ashley Kimberly Emily Donna Michelle Carol Amanda Melissa Deborah Stephanie Dorothy Rebecca Sharon Laura
    Cynthia Amy Kathleen Angela Shirley Brenda Emma Anna Pamela Nicole Samantha Katherine Christine Helen Debra
    Rachel Carolyn Janet Maria Catherine Heather Diane Olivia Julie Joyce Victoria Ruth Virginia Lauren Kelly
    Christina Joan Evelyn Judith Andrea Hannah Megan Cheryl Jacqueline Martha Madison Teresa Gloria Sara Janice
    Ann Kathryn Abigail Sophia Frances Jean Alice Judy Isabella Julia Grace Amber Denise Danielle Marilyn
    Beverly Charlotte Natalie Theresa Diana Brittany Doris Kayla Alexis Lori Marie Ava Mia Harper Ella
    Morgan Jamie Avery Riley Casey Taylor Alex Sam Jordan Quinn Skyler Cameron Drew Reese Rowan Parker Peyton
    Kendall Hayden Emerson Finley Dakota Charlie Robin Jesse Blake Sage"""
)
_EN_NOT_SURNAME = _words("Street Avenue Road Lane Court Drive University Hospital Bank Inc Company")
_EN_GIVEN_FULL = re.compile(r"\b([A-Z][a-z]+)\s+([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b")
REL_WORDS: tuple[str, ...] = (
    # Korean
    "어머니", "아버지", "엄마", "아빠", "남편", "아내", "부인", "아들", "할머니", "할아버지", "손자", "손녀",
    "누나", "오빠", "언니", "동생", "남동생", "여동생", "시어머니", "시아버지", "장모", "장인", "며느리", "사위",
    "외할머니", "외할아버지", "배우자", "자녀", "딸아이",
    # Japanese
    "母親", "父親", "息子", "祖母", "祖父", "長男", "長女", "次男", "次女", "義母", "義父", "配偶者", "お母さん",
    "お父さん", "主人", "家内", "嫁",
    # English
    "mother", "father", "husband", "daughter", "brother", "sister", "grandmother", "grandfather", "spouse", "wife",
)  # fmt: skip
_REL_RE = re.compile("|".join(sorted((re.escape(w) for w in REL_WORDS if len(w) >= 2), key=len, reverse=True)))


@lru_cache(maxsize=1)
def _ja_tagger() -> Any:
    import fugashi

    return fugashi.Tagger()


@lru_cache(maxsize=1)
def _ko_tagger() -> Any | None:
    try:
        from mecab import MeCab
    except ImportError:
        log.info("python-mecab-ko is not installed: Korean names come from honorific patterns only")
        return None
    return MeCab()


def _is_ja_name(word: Any) -> bool:
    return bool(word.feature.pos2 == "固有名詞" and word.feature.pos3 == "人名")


def ja_person_names(text: str) -> list[tuple[int, str]]:
    """Japanese person names from unidic ``人名`` tags: ``(offset, name)`` in text order.

    >>> [n for _, n in ja_person_names("山田太郎さんと佐藤さんは東京で会った。")]
    ['山田太郎', '佐藤']
    """
    if not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text):
        return []
    words = list(_ja_tagger()(text))
    out: list[tuple[int, str]] = []
    pos = 0
    offsets: list[int] = []
    for w in words:  # offsets of each token's surface in the text (MeCab skips whitespace)
        found = text.find(w.surface, pos)
        offsets.append(found if found >= 0 else pos)
        pos = (found + len(w.surface)) if found >= 0 else pos
    i = 0
    while i < len(words):
        f = words[i].feature
        if _is_ja_name(words[i]):
            j = i
            parts = {f.pos4}
            while j + 1 < len(words) and _is_ja_name(words[j + 1]):
                j += 1
                parts.add(words[j].feature.pos4)
            start, end = offsets[i], offsets[j] + len(words[j].surface)
            nxt = words[j + 1].surface if j + 1 < len(words) else ""
            full = "姓" in parts and "名" in parts
            if full or nxt in _JA_HONORIFICS:
                out.append((start, text[start:end]))
            i = j + 1
        else:
            i += 1
    return out


def ko_person_names(text: str) -> list[tuple[int, str]]:
    """Korean person names: mecab-ko-dic ``인명`` tags (where installed) and honorific patterns.

    >>> [n for _, n in ko_person_names("김모(33)씨와 A씨(42)는 박씨를 만났다")]
    ['김모', 'A씨', '박씨']
    """
    if not re.search(r"[가-힣]", text):
        return []
    found: dict[int, str] = {}
    for pattern in _KO_PATTERNS:
        for m in pattern.finditer(text):
            found.setdefault(m.start(1), m.group(1))
    tagger = _ko_tagger()
    if tagger is not None:
        for m in tagger.parse(text):
            feat = m.feature
            if feat.pos == "NNP" and feat.semantic == "인명" and _KO_FULL_NAME.fullmatch(m.surface):
                found.setdefault(m.span.start, m.surface)
    # a pattern may start inside a tagger's name (or the reverse): keep the longest per overlap
    kept: list[tuple[int, str]] = []
    for start, name in sorted(found.items(), key=lambda kv: (kv[0], -len(kv[1]))):
        if name in _KO_NOT_NAMES:
            continue
        if kept and start < kept[-1][0] + len(kept[-1][1]):
            continue
        kept.append((start, name))
    return kept


def en_person_names(text: str) -> list[tuple[int, str]]:
    """English person names after a title or a cue phrase (a light heuristic).

    >>> [n for _, n in en_person_names("Please call Dr. Jane Roe; my name is Sam Lee.")]
    ['Jane Roe', 'Sam Lee']
    """
    found: dict[int, str] = {}
    for pattern in (_EN_TITLE, _EN_CUE):
        for m in pattern.finditer(text):
            found.setdefault(m.start(1), m.group(1))
    for m in _EN_GIVEN_FULL.finditer(text):
        if m.group(1) in EN_GIVEN_NAMES and m.group(2) not in EN_GIVEN_NAMES | _EN_NOT_SURNAME:
            found.setdefault(m.start(1), m.group(0))
    kept: list[tuple[int, str]] = []
    for start, name in sorted(found.items(), key=lambda kv: (kv[0], -len(kv[1]))):
        if kept and start < kept[-1][0] + len(kept[-1][1]):
            continue
        kept.append((start, name))
    return kept


_EXTRA_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # 16 digits in four groups: masked as a card even when the check digit fails (a typo is still a card)
    ("CARD", re.compile(r"(?<!\d)\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?!\d)")),
    # North American numbers: (335) 555-0109, 676-555-0163
    # (area codes start with 2-9; toll-free 8XX codes are company numbers, not personal)
    ("PHONE", re.compile(r"(?<![\d(])(?:\((?!8(?:00|33|44|55|66|77|88))[2-9]\d{2}\)\s?|"
                         r"(?!8(?:00|33|44|55|66|77|88))[2-9]\d{2}[-.])\d{3}[-.]\d{4}(?!\d)")),
    # Korean road-name addresses whose building number is glued to a particle (…솔내로 56로 이사했)
    ("ADDRESS", re.compile(
        r"(?:서울특별시|부산광역시|대구광역시|인천광역시|광주광역시|대전광역시|울산광역시|세종특별자치시|경기도|강원도|"
        r"강원특별자치도|충청북도|충청남도|전라북도|전북특별자치도|전라남도|경상북도|경상남도|제주특별자치도)"
        r"(?:\s[가-힣]{1,6}[시군구]){1,2}\s[가-힣0-9]{1,10}(?:로|길)\s\d{1,4}(?:-\d{1,4})?(?!\d)")),
    # English street addresses: 158 Sample Street, Apt 2, Fairview
    ("ADDRESS", re.compile(
        r"(?<!\d)\d{1,5}\s[A-Z][a-z]+(?:\s[A-Z][a-z]+)?\s(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Lane|Ln\.?|"
        r"Court|Ct\.?|Drive|Dr\.?|Boulevard|Blvd\.?|Way|Place|Pl\.?)(?:,\s(?:Apt|Suite|Unit|#)\.?\s?\w+)?"
        r"(?:,\s[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)?")),
)
_KO_UNIT = re.compile(r"\s?\d{1,4}동\s?\d{1,5}호")  # apartment building and unit after a Korean address
_ACCOUNT_CUE = re.compile(r"account|acct|계좌|口座|은행|銀行")


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e in spans)


def rules_rows(text: str, types: tuple[str, ...] = DEFAULT_TYPES) -> list[tuple[str, str]]:
    """The ``(TYPE, value)`` rows the rules backend prints for one NFC text, in order of first appearance."""
    from spcl.detect import find_pii

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
            type_ = "ACCOUNT"  # a 12-digit number after an account cue is an account, whatever its checksum
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
        for finder in (ja_person_names, ko_person_names, en_person_names):
            found += [(start, "PERSON", name) for start, name in finder(text)]
    if "REL" in allowed:
        found += [(m.start(), "REL", m.group()) for m in _REL_RE.finditer(text)]
    rows: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for _, type_, value in sorted(found, key=lambda f: f[0]):
        value = value.strip()
        key = (type_, value)
        if type_ in allowed and value and "\t" not in value and "\n" not in value and key not in seen:
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
        """Rows for each text; a detector exception fails only that document (``rules_error:<Type>``)."""
        results: list[Extraction] = []
        for text in texts:
            started = time.perf_counter()
            try:
                raw = format_rows(rules_rows(text, self.types))
                results.append(Extraction(raw=raw, seconds=time.perf_counter() - started))
            except Exception as err:  # one bad document must not stop the batch
                results.append(
                    Extraction(error=f"rules_error:{type(err).__name__}", seconds=time.perf_counter() - started)
                )
        return results
