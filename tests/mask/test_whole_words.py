"""The masker never puts a token inside a word (spcl.mask.words), and name candidates are whole
words."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spcl.extract.backends.rules_backend import rules_rows
from spcl.extract.names import find_person_names
from spcl.mask import mask_text
from spcl.mask.words import is_whole_word
from tools.wrapped import _Checker

ROOT = Path(__file__).resolve().parents[2]
_HELP = [
    json.loads(line)
    for line in (ROOT / "data/weak-none/libreoffice-help.jsonl").read_text("utf-8").splitlines()
]


@pytest.fixture(autouse=True)
def _no_ner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPCL_NAMES_NER", "off")


@pytest.mark.parametrize(
    ("text", "start", "end", "whole"),
    [
        ("그냥 원빈말고는 볼게없음", 3, 5, True),  # review text glues 말고/땜에/아저씨 to a name
        ("성룡아저씨가 실망시켰다", 0, 2, True),
        ("김상경땜에 엄청", 0, 3, True),
        ("표시형식을 고른다", 0, 2, False),
        # a word wrapped across a line: its first half is no word
        ("オプ\nションを指定する", 0, 2, False),
        ("クライ\n    アントが", 0, 3, False),  # with the indentation of a man page
        ("ブートローダを使う", 4, 7, False),  # a piece of a katakana compound
        ("ジョン・レノンが来た", 4, 7, True),  # ・ separates names
        ("山田太郎さんは来た", 0, 4, True),
        ("김연아의 경기", 0, 3, True),
        ("김연아씨는 왔다", 0, 3, True),
        ("표시되는 값", 0, 2, False),
        ("이상한 사람", 0, 2, False),
        ("Kimberly came", 0, 3, False),
        ("Michael O'Brien came", 10, 15, False),  # Brien inside O'Brien
        ("John's book", 0, 4, True),
    ],
)
def test_is_whole_word(text: str, start: int, end: int, whole: bool) -> None:
    assert is_whole_word(text, start, end) is whole


def test_other_occurrences_are_replaced_only_as_whole_words() -> None:
    # on main every occurrence was replaced: アン[PERSON_1]ケート, [PERSON_1]한, [PERSON_1]berly
    r = mask_text("アンさんはアンケートに答えた。", [("PERSON", "アン")])
    assert r.masked_text == "[PERSON_1]さんはアンケートに答えた。"
    r = mask_text("이상 씨는 이상한 사람이 아니다. 이상의 말", [("PERSON", "이상")])
    assert r.masked_text == "[PERSON_1] 씨는 이상한 사람이 아니다. [PERSON_1]의 말"
    r = mask_text("Kim met Kimberly and Kim's dog", [("PERSON", "Kim")])
    assert r.masked_text == "[PERSON_1] met Kimberly and [PERSON_1]'s dog"


def test_identifiers_and_values_that_are_no_word_anywhere_are_still_masked() -> None:
    # rule-hit types are never restricted: a phone glued to letters is masked
    r = mask_text("TEL010-1234-5678번으로", [("PHONE", "010-1234-5678")])
    assert r.masked_text == "TEL[PHONE_1]번으로"
    # a name that stands nowhere as a whole word is masked everywhere (fail closed)
    r = mask_text("オプションとオプション", [("PERSON", "オプ")])
    assert r.masked_text.count("[PERSON_1]") == 2


def test_korean_names_before_the_genitive_and_english_names_with_an_apostrophe_are_masked() -> None:
    text = "어제 김민준의 아버지가 왔고 김민준은 웃었다. I met Michael O'Brien and Dr. Sean O'Neil."
    r = mask_text(text, rules_rows(text))
    assert "김민준" not in r.masked_text  # both occurrences, before 의 and 은
    assert "O'Brien" not in r.masked_text and "O'Neil" not in r.masked_text  # main found neither


def test_name_candidates_across_a_line_break_are_dropped() -> None:
    for text in (
        "オプ\nションを指定するとクライ\nアントが起動する。",
        "ブートローダのリストを表示する。",
    ):
        assert all(is_whole_word(text, s, e) for s, e in find_person_names(text, "ja"))
        r = mask_text(text, rules_rows(text))
        assert "[PERSON" not in r.masked_text


def _cut_spans(text: str) -> int:
    result = mask_text(text, rules_rows(text))
    check = _Checker(text)
    return sum(check.cuts(s.start, s.end) for s in result.spans)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([r["text"] for r in _HELP if r["lang"] in ("ja", "ko")][:400]),
    st.integers(12, 60),
)
def test_no_token_inside_a_word_of_real_wrapped_help_text(text: str, width: int) -> None:
    """Real LibreOffice help passages, hard-wrapped at any width as man pages are: no masked span
    cuts a word."""
    wrapped = "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False))
    assert _cut_spans(wrapped) == 0


def _man_pages(lang: str, limit: int) -> list[str]:
    from tools.wrapped import MAN_JA, MAN_KO, man_documents

    root = MAN_JA if lang == "ja" else MAN_KO
    return [text for _, _, text in man_documents(root, limit, lang)] if root.is_dir() else []


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_no_token_inside_a_word_of_real_man_pages(lang: str) -> None:
    """Real Debian man pages (manpages-ja / manpages-ko), rendered by groff at 80 columns as man
    shows them: lines wrap inside words; no masked span cuts one (the checker of tools/wrapped.py,
    not the masker's predicate)."""
    from spcl.text import normalize

    pages = _man_pages(lang, 6)
    if not pages:
        pytest.skip(f"no {lang} man pages installed (Debian manpages-{lang})")
    assert [_cut_spans(normalize(text)) for text in pages] == [0] * len(pages)
