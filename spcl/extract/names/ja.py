"""Japanese person names from MeCab (fugashi + unidic-lite) ``名詞,固有名詞,人名`` tags.

- Surname + given name tokens next to each other form one name (``山田太郎``).
- Foreign names: katakana tokens joined by ``・``/``＝``/``=`` form one name when any of them is
  tagged ``人名`` and none is a place or organisation (``ベティ・サッチャー・オロス``); a lone
  katakana ``人名`` token that unidic does not mark as surname or given name is a foreign name
  (``チェーホフ``).
- A lone surname or given name (``田宮``, ``鉄平``) counts before an honorific (さん, 様, 氏, 君 …),
  a role word (監督, 選手, 容疑者 …) or a particle (が, は, の …); not before another noun, where it
  is usually part of a company or place name (``藤倉電線``).
- A surname followed by one or two glued kanji/hiragana tokens of two characters at most, then a
  particle, honorific, role word or punctuation, is a full name whose given name the dictionary
  lacks (``中山ちゑが``).
- A name glued to a noun that makes it a place, company, prize or law (社, 駅, 大学, 賞, 事件 …) is
  not a person (``ハーマン社``, ``シンプソンビル``); so is a full name glued to a temple, shop or
  firm word (``林瑞寺``, ``亀屋万年堂``, ``前川國男建築設計事務所``: :data:`FULL_NAME_NOT_PERSON`)
  and any name glued after ``会社``/``株式会社`` (``株式会社西條``: :data:`COMPANY_WORDS`).

Spans are half-open offsets into the text; overlapping candidates keep the first, then the longest.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, NamedTuple

HONORIFICS = frozenset(("さん", "様", "さま", "氏", "君", "くん", "ちゃん", "殿", "先生"))
ROLE_WORDS = frozenset(
    (
        "監督",
        "選手",
        "容疑者",
        "被告",
        "被告人",
        "受刑者",
        "社長",
        "会長",
        "首相",
        "大統領",
        "議員",
        "知事",
        "市長",
        "教授",
        "医師",
        "弁護士",
        "記者",
        "投手",
        "捕手",
        "内野手",
        "外野手",
        "騎手",
        "棋士",
        "役",
        "夫人",
        "元",
        "被害者",
        "長官",
        "大佐",
        "中佐",
        "少佐",
        "大将",
        "将軍",
        "党首",
        "議長",
        "判事",
        "候補",
        "国王",
        "王",
        "皇帝",
        "女王",
        "首席",
        "主席",
        "総裁",
        "委員長",
        "大臣",
        "外相",
        "蔵相",
        "副大統領",
        "上院議員",
        "下院議員",
        "博士",
        "選手権",
        "容疑",
        "女史",
        "アナ",
        "アナウンサー",
        "キャスター",
        "校長",
        "院長",
        "理事長",
        "八段",
        "九段",
        "船長",
        "艦長",
        "大使",
        "所長",
        "部長",
        "課長",
        "局長",
        "署長",
        "店長",
        "本人",
        "自身",
        "殿下",
        "代表",
    )
)
NOT_PERSON_NOUNS = (  # nouns that make a name before them part of a place, company, prize or law
    "社",
    "号",
    "駅",
    "ビル",
    "大学",
    "病院",
    "通り",
    "ストリート",
    "トロフィー",
    "賞",
    "杯",
    "線",
    "城",
    "島",
    "湾",
    "川",
    "山",
    "市",
    "町",
    "村",
    "県",
    "州",
    "国",
    "家",
    "朝",
    "商店",
    "工業",
    "電機",
    "電線",
    "財団",
    "基金",
    "研究所",
    "学校",
    "高校",
    "教会",
    "寺",
    "神社",
    "公園",
    "空港",
    "港",
    "橋",
    "宣言",
    "条約",
    "事件",
    "法",
    "効果",
    "定理",
    "方程式",
    "症候群",
    "病",
    "ホテル",
    "ホール",
    "劇場",
    "スタジアム",
    "センター",
    "タワー",
    "ハウス",
    "丸",
    "グループ",
    "銀行",
    "製",
    "式",
    "型",
    "派",
    "流",
    "語",
    "記念",
    "通信",
    "新聞",
    "放送",
    "書店",
    "出版",
    "商会",
    "物産",
    "自動車",
    "裁判",
    "肺",
    "教",
    "対",
    "産業",
    "製薬",
    "薬品",
    "軍",
    "隊",
    "艦隊",
    "内閣",
    "政権",
    "建設",
    "鉄道",
    "鉄鋼",
    "電灯",
    "道路",
    "温泉",
    "地区",
    "方面",
    "農園",
    "薬局",
    "薬舗",
    "資源",
    "楽器",
    "大火",
)
# glued after a full name: a temple, shop, firm
FULL_NAME_NOT_PERSON = ("寺", "堂", "神社", "駅", "建築", "事務所")
# 株式会社|西條
COMPANY_WORDS = frozenset(("会社", "株式会社", "有限会社", "合資会社", "合名会社", "合同会社"))
_DOTS = frozenset(("・", "＝", "=", "･"))
_KATAKANA = re.compile(r"^[\u30a0-\u30ffー]+$")
_GIVEN_CHARS = re.compile(r"^[\u3041-\u309f\u4e00-\u9fff]+$")
_NAME_PARTICLES = frozenset(("が", "は", "の", "と", "も", "に", "を", "ら"))
_INITIAL = re.compile(r"^[A-ZＡ-Ｚ]\.?$")
_JA_SCRIPT = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@lru_cache(maxsize=1)
def _tagger() -> Any:
    import fugashi

    return fugashi.Tagger()


class Pos(NamedTuple):
    """The four part-of-speech levels of a unidic morpheme (名詞, 固有名詞, 人名, 姓)."""

    pos1: str
    pos2: str
    pos3: str
    pos4: str


class Word(NamedTuple):
    """A morpheme: its surface and its :class:`Pos` (``feature``, as fugashi names it)."""

    surface: str
    feature: Pos


_POS: dict[str, Pos] = {}


def parse(text: str) -> list[Word]:
    """The unidic morphemes of ``text`` with their four POS levels only, read from MeCab's raw
    feature string (fugashi's full ``feature`` record costs more than the parse itself)."""
    out = []
    for w in _tagger()(text):
        raw = w.feature_raw
        key = raw[: _nth_comma(raw, 4)]
        pos = _POS.get(key)
        if pos is None:
            pos = _POS.setdefault(key, Pos(*(key.split(",") + ["*"] * 4)[:4]))
        out.append(Word(w.surface, pos))
    return out


def _nth_comma(raw: str, n: int) -> int:
    k = -1
    for _ in range(n):
        k = raw.find(",", k + 1)
        if k < 0:
            return len(raw)
    return k


def _is_name(word: Any) -> bool:
    return bool(word.feature.pos2 == "固有名詞" and word.feature.pos3 == "人名")


def _is_place_or_org(word: Any) -> bool:
    return bool(word.feature.pos2 == "固有名詞" and word.feature.pos3 in ("地名", "組織"))


def _foreign_part(word: Any) -> bool:
    """A katakana token or a Latin initial that may be part of a dotted foreign name, not a place
    or org."""
    return bool(
        _KATAKANA.match(word.surface) or _INITIAL.match(word.surface) or _is_name(word)
    ) and not (_is_place_or_org(word))


def _glued(text: str, offsets: list[int], words: list[Any], k: int) -> bool:
    """Whether token ``k + 1`` follows token ``k`` with no character between them."""
    return k + 1 < len(words) and offsets[k] + len(words[k].surface) == offsets[k + 1]


def _offsets(text: str, words: list[Any]) -> list[int]:
    offsets, pos = [], 0
    for w in words:  # MeCab skips whitespace: find each surface in order
        found = text.find(w.surface, pos)
        offsets.append(found if found >= 0 else pos)
        pos = (found + len(w.surface)) if found >= 0 else pos
    return offsets


def _unknown_given_name(text: str, offsets: list[int], words: list[Any], last: int) -> int:
    """After a surname: the index of the last token of a given name the dictionary does not know
    (one or two glued kanji/hiragana tokens, two characters at most, then a particle, honorific,
    role word or punctuation), else ``last`` unchanged."""
    k, chars = last, 0
    while k + 1 < len(words) and _glued(text, offsets, words, k) and chars < 2:
        w = words[k + 1]
        if (
            w.feature.pos1 in ("助詞", "助動詞", "補助記号")
            or w.surface in HONORIFICS
            or w.surface in ROLE_WORDS
        ):
            break
        if (
            not _GIVEN_CHARS.match(w.surface)
            or chars + len(w.surface) > 2
            or any(w.surface.startswith(n) for n in NOT_PERSON_NOUNS)
        ):
            return last  # 藤本製薬, 芥川賞, 徳川家, 竹下派: a company, prize, house or faction
        chars += len(w.surface)
        k += 1
    if k == last or k + 1 >= len(words):
        return last
    after = words[k + 1]
    ok = (
        after.surface in HONORIFICS
        or after.surface in ROLE_WORDS
        or after.surface in _NAME_PARTICLES
        or (after.feature.pos1 == "補助記号")
    )
    return k if ok else last


def ja_name_spans(text: str, words: list[Any] | None = None) -> list[tuple[int, int]]:
    """Japanese person-name spans from unidic tags (see the module docstring for the rules).

    ``words``: the words of ``text`` (:func:`parse`, or fugashi's) when the caller has parsed it
    already.

    >>> t = "山田太郎さんと佐藤さんはチェーホフを読んだ。"
    >>> [t[s:e] for s, e in ja_name_spans(t)]
    ['山田太郎', '佐藤', 'チェーホフ']
    """
    if not _JA_SCRIPT.search(text):
        return []
    words = parse(text) if words is None else words
    offsets = _offsets(text, words)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        if not _is_name(words[i]):
            i += 1
            continue
        j = i
        parts = {words[i].feature.pos4}
        while j + 1 < len(words) and _is_name(words[j + 1]):
            j += 1
            parts.add(words[j].feature.pos4)
        # extend over a dotted katakana sequence on both sides: ジョン・F・ケネディ,
        # ポール・ホワイト|ヘッド
        first, last = i, j
        while first >= 2 and words[first - 1].surface in _DOTS and _foreign_part(words[first - 2]):
            first -= 2
            while (
                first >= 1
                and _glued(text, offsets, words, first - 1)
                and _foreign_part(words[first - 1])
            ):
                first -= 1
        while (
            last + 2 < len(words)
            and words[last + 1].surface in _DOTS
            and _foreign_part(words[last + 2])
        ):
            last += 2
            while (
                last + 1 < len(words)
                and _glued(text, offsets, words, last)
                and _foreign_part(words[last + 1])
            ):
                last += 1
        if parts == {"姓"} and first == i:
            last = _unknown_given_name(text, offsets, words, last)  # 中山|ち|ゑが → 中山ちゑ
            if last > j:
                parts.add("名")
        start, end = offsets[first], offsets[last] + len(words[last].surface)
        nxt = words[last + 1] if last + 1 < len(words) else None
        full = ("姓" in parts and "名" in parts) or first < i or last > j
        foreign = "一般" in parts and all(
            _KATAKANA.match(words[k].surface) for k in range(i, j + 1)
        )
        cue = nxt is not None and (nxt.surface in HONORIFICS or nxt.surface in ROLE_WORDS)
        glued_noun = (
            nxt is not None
            and not cue
            and _glued(text, offsets, words, last)
            and (nxt.feature.pos1 in ("名詞", "接尾辞"))
        )
        ends_word = (
            nxt is None
            or not glued_noun
            or not any(nxt.surface.startswith(w) for w in NOT_PERSON_NOUNS)
        )
        in_org = (
            glued_noun
            and nxt is not None
            and any(nxt.surface.startswith(w) for w in FULL_NAME_NOT_PERSON)
        ) or (
            first > 0
            and words[first - 1].surface in COMPANY_WORDS
            and _glued(text, offsets, words, first - 1)
        )
        before_cue = nxt is None or cue or nxt.feature.pos1 in ("助詞", "補助記号")
        # a foreign-looking name glued to a following noun is part of a company or place
        # (ハーマン社)
        if (
            foreign
            and nxt is not None
            and _glued(text, offsets, words, last)
            and _KATAKANA.match(nxt.surface)
            and (not _is_name(nxt))
        ):
            foreign = False  # the first half of a longer katakana word: ノルト|ライン
        if not in_org and (
            (full and (ends_word or "姓" in parts)) or (foreign and not glued_noun) or before_cue
        ):
            spans.append((start, end))
        i = last + 1
    return spans
