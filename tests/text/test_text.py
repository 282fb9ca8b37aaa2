from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from spcl.text import guess_lang, guess_langs, normalize


def test_language_guess_by_script() -> None:
    assert guess_lang("東京都に住んでいます。毎日電車で通勤しています。") == "ja"
    assert guess_lang("서울에 살고 있습니다. 매일 지하철로 출근합니다.") == "ko"
    assert guess_lang("I live in Seoul and take the subway to work every day.") == "en"
    assert guess_lang("我住在北京，每天坐地铁上班。") == "other"
    assert guess_lang("Je vis à Paris depuis dix ans.") == "other"
    assert guess_lang("12345 67890 !!!") == "other"
    # a Korean article quoting a Japanese word is still Korean
    assert guess_lang("일본어로 ありがとう 는 고맙다는 뜻입니다. 자주 쓰는 표현입니다.") == "ko"


def test_normalize_composes_decomposed_hangul_and_kana() -> None:
    decomposed = unicodedata.normalize("NFD", "한국어 がぎぐ")
    assert decomposed != "한국어 がぎぐ"
    assert normalize(decomposed) == "한국어 がぎぐ"


@given(st.text())
def test_normalize_is_nfc_and_idempotent(text: str) -> None:
    once = normalize(text)
    assert unicodedata.is_normalized("NFC", once)
    assert normalize(once) == once


_PIECES = [
    "あ",
    "ア",
    "가",
    "ᄀ",
    "ㄱ",
    "漢",
    "字",
    "a",
    "Z",
    " ",
    "the",
    "and",
    "of",
    "\n",
    "\ud800",
    "ｦ",
    "\u31f0",
    "㐀",
    "é",
    "1",
    "theory",
]
_SCRIPT_MIX = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join) | st.text(max_size=40)


def _guess_by_regex(text: str) -> str:
    """The documented rule, written with regular expressions (an independent oracle for the NumPy
    count)."""
    sample = text[:1000]
    kana = len(re.findall(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9d]", sample))
    hangul = len(re.findall(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]", sample))
    if kana or hangul:
        return "ko" if hangul > kana else "ja"
    latin = len(re.findall(r"[A-Za-z]", sample))
    han = len(re.findall(r"[\u4e00-\u9fff\u3400-\u4dbf]", sample))
    english = re.search(
        r"(?i)(?<![a-z])(?:the|and|of|to|is|in|for|with|that|this|was|are)(?![a-z])", sample
    )
    return "en" if latin and latin * 2 >= han and english else "other"


@given(st.lists(_SCRIPT_MIX, max_size=8))
def test_batch_language_guess_follows_the_documented_rule(texts: list[str]) -> None:
    assert (
        guess_langs(texts) == [guess_lang(t) for t in texts] == [_guess_by_regex(t) for t in texts]
    )


def test_batch_language_guess_looks_at_the_first_1000_characters_only() -> None:
    late_kana = "x" * 1000 + "ありがとう"
    assert (
        guess_langs([late_kana, "ありがとう" + "x" * 1000])
        == [guess_lang(late_kana), "ja"]
        == ["other", "ja"]
    )
