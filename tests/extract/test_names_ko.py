"""The Korean person-name CRF over characters (spcl.extract.names.ko_chars) and how the finder
uses its spans."""

from __future__ import annotations

import json

import pytest

from spcl.extract.names import find_person_names, ko_chars
from spcl.extract.names.ko import tagger_available, widen_glued
from spcl.extract.names.tagger import MODEL_DIR, analyse
from spcl.mask.words import is_whole_word
from spcl.resources import SOURCE_ROOT

SHIPPED = SOURCE_ROOT / MODEL_DIR
needs_mecab = pytest.mark.skipif(not tagger_available(), reason="python-mecab-ko is not installed")
needs_model = pytest.mark.skipif(
    not (SHIPPED / "ko.crfsuite").is_file() or not tagger_available(),
    reason="no shipped Korean names model or no mecab-ko",
)


def test_character_labels_keep_klue_spans_a_morpheme_grid_cannot() -> None:
    # KLUE marks 김 of 김씨 (a span ending inside the eojeol) and 리암 니슨 (a span across a space)
    text = "김씨는 리암 니슨을 만났다."
    gold = [(0, 1), (4, 9)]
    idx = ko_chars.tokens(text, 0, len(text))
    assert " " not in {text[i] for i in idx}
    tags = ko_chars.labels(text, idx, gold)
    assert ko_chars.decode(text, idx, tags) == gold
    assert ko_chars.decode(text, idx, ["B", "I"] + ["O"] * (len(idx) - 2)) == [(0, 2)]


def test_gazetteer_counts_syllables_of_its_records_only() -> None:
    records = [
        {"text": "김연아 김연아 김치", "persons": [[0, 3], [4, 7]]},
        {"text": "김밥", "persons": []},
    ]
    table = ko_chars.build_gazetteer(records)
    assert table["first"]["김"] == [2, 4]  # starts two spans of four occurrences
    assert table["inside"]["김"] == [2, 4]
    # seen twice: rare syllables are left out
    assert "연" not in table["first"] and "연" not in table["inside"]
    look = ko_chars.gaz_lookup(table)
    assert look["김"] == ("4", "4") and "밥" not in look


@needs_mecab
def test_character_features_project_the_morphemes() -> None:
    text = "배우 이민호는 웃었다."
    morphs, rules = analyse(text, "ko")
    idx = ko_chars.tokens(text, 0, len(text))
    feats = ko_chars.features(text, idx, morphs, rules, {"이": ("3", "2")})
    first = feats[idx.index(3)]  # 이 of 이민호
    assert "role-" in first and "wp=0" in first and "gf=3" in first and "c-1=_" in first
    assert any(f.startswith("p=NNP") for f in first) and "mp=B" in first


@needs_mecab
def test_a_name_glued_to_a_noun_is_masked_as_its_whole_eojeol() -> None:
    assert widen_glued("최영장군을 생각하면", 0, 2) == (0, 5)
    assert widen_glued("혜수, 이종원, 채림등이 출연해", 9, 11) == (9, 13)
    # a verb follows: no name glued to a noun
    assert widen_glued("표시되는 값을 지정", 0, 2) is None
    assert widen_glued("그는 김연아를", 4, 6) is None  # does not start its eojeol
    assert widen_glued("김씨", 0, 1) is None  # one syllable


@needs_model
def test_shipped_model_finds_names_glued_to_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPCL_NAMES_NER", "off")
    # held-out KLUE reviews (names-gold-v1): the morpheme CRF lost these names; main found none of
    # the three
    for text, name in (
        ("최영장군을 생각하면 가슴이 뜨거워진다", "최영"),
        ("견자단과 황비홍역의 아역 넘 귀여웠다", "황비홍"),
    ):
        spans = find_person_names(text, "ko")
        start = text.index(name)
        assert any(s <= start and start + len(name) <= e for s, e in spans), name
        assert all(is_whole_word(text, s, e) for s, e in spans)


@needs_model
@pytest.mark.parametrize(
    "text",
    [
        "LibreOffice 드로우의 모든 메뉴, 서식 설정",
        "레이어의 이름을 바꾸려면 레이어 탭을 두 번 누릅니다.",
        "셀 범위를 지정하고 표시 형식을 선택합니다.",
        "지정시 기본값을 반환합니다.",
    ],
)
def test_shipped_model_reads_no_names_in_help_text(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPCL_NAMES_NER", "off")
    assert find_person_names(text, "ko") == []


@needs_model
def test_shipped_gazetteer_is_syllable_counts() -> None:
    table = json.loads((SHIPPED / "ko.gazetteer.json").read_text("utf-8"))
    assert set(table) == {"first", "inside", "seen", "technical"}
    technical = table.pop("technical")
    assert all(len(k) == 1 and v[1] >= 3 for part in table.values() for k, v in part.items())
    assert "드로우" in technical and "레이어" in technical and all(len(w) >= 2 for w in technical)


def test_a_korean_crf_span_needs_more_confidence_without_a_rule_span_or_a_cue() -> None:
    from spcl.extract.names import merge_korean

    # 3..6 a loanword of a man page, 16..19 a name after a kin cue
    text = "안정 릴리스의 번호, 어머니 강서윤이 왔다"
    scored = [(3, 6, 0.75), (16, 19, 0.75)]
    # at 0.8 alone / 0.7 with support: the loanword has none (no rule span, no cue, no title), the
    # name its cue
    assert merge_korean(text, scored, [], 0.8, 0.7) == [(16, 19)]
    assert merge_korean(text, scored, [], 0.7, 0.7) == [(3, 6), (16, 19)]
    # a rule span overlapping it speaks for a CRF span too, and is added beside it
    assert merge_korean(text, scored, [(3, 6)], 0.8, 0.7) == [(3, 6), (16, 19), (3, 6)]
    assert merge_korean(text, [(16, 17, 0.95)], [], 0.8, 0.7) == []  # one syllable without a title


def test_a_korean_span_the_document_mostly_leaves_untagged_is_a_common_word() -> None:
    from spcl.extract.names import merge_korean

    # a manual: 호스트 tagged once (3..6) but used as a word three more times, the last glued to a
    # particle
    text = "원격 호스트를 지정. 호스트 이름은 호스트 파일의 호스트에서 읽는다. 작성: 김철수"
    scored = [(3, 6, 0.95), (43, 46, 0.95)]
    assert merge_korean(text, scored, [], 0.8, 0.7) == [(43, 46)]
    # a name the CRF tags in most of its uses stays, and so does a cued one however often it is
    # untagged
    names = "호스트 씨가 왔다. 호스트 호스트 호스트"
    assert merge_korean(names, [(0, 3, 0.95)], [], 0.8, 0.7) == [(0, 3)]
    twice = "박지훈이 말했다. 박지훈은 웃었다. 박지훈"
    assert merge_korean(twice, [(0, 3, 0.95), (10, 13, 0.95)], [], 0.8, 0.7) == [(0, 3), (10, 13)]
    # a span of several words goes when each of its words is mostly used untagged (스트림 and 컬럼
    # of xz.1)
    text = "스트림 컬럼 목록. 스트림 정보와 컬럼 이름, 스트림 헤더와 컬럼 값"
    assert merge_korean(text, [(0, 6, 0.95)], [], 0.8, 0.7) == []
    assert merge_korean(text[:10], [(0, 6, 0.95)], [], 0.8, 0.7) == [(0, 6)]  # used once: kept


def test_the_document_check_keeps_a_korean_full_name_the_dictionary_also_tags() -> None:
    from spcl.extract.names import merge_korean

    # an uncued name the CRF tags in one of its four uses: without a rule span it reads as a common
    # word …
    text = "박지훈이 골을 넣었다. 박지훈 박지훈 박지훈"
    assert merge_korean(text, [(0, 3, 0.95)], [], 0.8, 0.7) == []
    # … with mecab-ko-dic's 인명 span on it (a surname + given name, no loanword syllable) it stays
    assert merge_korean(text, [(0, 3, 0.95)], [(0, 3)], 0.8, 0.7) == [(0, 3), (0, 3)]
    # a loanword of a manual the dictionary tags 인명 is still dropped, surname-initial or not
    # (호스트, 릴리스)
    manual = "원격 호스트를 지정. 호스트 이름은 호스트 파일의 호스트에서"
    assert merge_korean(manual, [(3, 6, 0.95)], [(3, 6)], 0.8, 0.7) == []


def test_native_name_shape_and_loanword_syllables() -> None:
    from spcl.extract.names.ko import native_name_shaped

    assert (
        native_name_shaped("박지훈")
        and native_name_shaped("남궁민")
        and native_name_shaped("제갈공명")
    )
    assert not any(
        native_name_shaped(w) for w in ("호스트", "컬럼", "릴리스", "김", "박지", "김A훈", "트럼프")
    )
