"""The trained person-name CRF (spcl.extract.names.tagger), its training command and the shipped
model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from spcl.extract.names import find_person_names
from spcl.extract.names.tagger import (
    MODEL_DIR,
    analyse,
    decode,
    features,
    labels,
    split_of,
    tagger_spans,
)
from spcl.extract.names.train import train_names
from spcl.resources import SOURCE_ROOT

SHIPPED = SOURCE_ROOT / MODEL_DIR

_TINY = [
    ("ja", "山田太郎さんは東京へ行った。", [(0, 4)]),
    ("ja", "佐藤氏が会見した。", [(0, 2)]),
    ("ja", "会議は明日開かれる。", []),
    ("ja", "チェーホフの戯曲を読んだ。", [(0, 5)]),
    ("ko", "김연아의 경기를 봤다.", [(0, 3)]),
    ("ko", "배우 이민호는 웃었다.", [(3, 6)]),
    ("ko", "오늘은 날씨가 맑다.", []),
    ("ko", "박지성 선수가 골을 넣었다.", [(0, 3)]),
]


def _tiny_data(path: Path, copies: int = 6) -> Path:
    rows = [
        {"id": f"t{i}-{k}", "lang": lang, "text": text, "persons": [list(p) for p in persons]}
        for k in range(copies)
        for i, (lang, text, persons) in enumerate(_TINY)
    ]
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def test_labels_and_decode_round_trip_on_morphemes() -> None:
    text = "山田太郎さんは東京へ行った。"
    morphs, rules = analyse(text, "ja")
    tags = labels(morphs, [(0, 4)])
    assert tags[:3] == ["B", "I", "O"]
    assert decode(morphs, tags) == [(0, 4)]
    feats = features(text, morphs, rules)
    assert len(feats) == len(morphs) and "rule=B" in feats[0] and "1hon=1" in feats[1]


def test_split_is_a_pure_function_of_the_id() -> None:
    ids = [f"id-{i}" for i in range(1000)]
    splits = [split_of(i) for i in ids]
    assert splits == [split_of(i) for i in ids]
    assert 150 < splits.count("heldout") < 250


def test_training_is_reproducible_and_writes_a_card(tmp_path: Path) -> None:
    data = _tiny_data(tmp_path / "names.jsonl")
    a = train_names(data, tmp_path / "a", max_iterations=30, negatives=None)
    b = train_names(data, tmp_path / "b", max_iterations=30, negatives=None)
    for lang in ("ja", "ko"):
        assert a["files"][lang]["sha256"] == b["files"][lang]["sha256"]
        # crfsuite's format, no pickle
        assert (tmp_path / "a" / f"{lang}.crfsuite").read_bytes()[:4] == b"lCRF"
    card = json.loads((tmp_path / "a" / "model_card.json").read_text("utf-8"))
    assert card["data"]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert set(card["heldout"]) == {"ja", "ko"} and set(card["thresholds"]) == {"ja", "ko"}
    # the CRF merged with the rule finders, as shipped
    assert set(card["heldout_pipeline"]) == {"ja", "ko"}
    # the model learned the training sentences
    assert tagger_spans("김연아의 경기를 봤다.", "ko", str(tmp_path / "a"), cut=0.5) == [(0, 3)]


@pytest.mark.skipif(not (SHIPPED / "ja.crfsuite").is_file(), reason="no shipped names-crf model")
def test_shipped_card_names_its_files_and_data() -> None:
    card = json.loads((SHIPPED / "model_card.json").read_text("utf-8"))
    for lang in ("ja", "ko"):
        f = card["files"][lang]
        assert hashlib.sha256((SHIPPED / f["file"]).read_bytes()).hexdigest() == f["sha256"]
        assert {"recall", "false_row_rate", "span_precision", "f1", "docs_per_s"} <= set(
            card["heldout"][lang]
        )
    assert (
        card["data"]["sha256"] == "fc56f21aa1b312c0a0bb0876c25796baef12f07c9f0b32bc6f0a319a854d8772"
    )


@pytest.mark.skipif(not (SHIPPED / "ko.crfsuite").is_file(), reason="no shipped names-crf model")
def test_finder_uses_the_tagger_and_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPCL_NAMES_NER", "off")
    # a held-out KLUE review: no rule cue
    text = "워쇼스키 남매의 영화라서 찾아 봤지만 이 영화는 나랑 안 맞는 듯."
    with_tagger = find_person_names(text, "ko")
    monkeypatch.setenv("SPCL_NAMES_TAGGER", "off")
    assert find_person_names(text, "ko") == []
    assert [text[s:e] for s, e in with_tagger] == ["워쇼스키"]


def test_units_and_features_see_a_whole_katakana_name_and_its_context() -> None:
    text = "監督のオットー・レーハーゲルは語った。"
    morphs, rules = analyse(text, "ja")
    feats = features(text, morphs, rules)
    i = next(k for k, m in enumerate(morphs) if m[2] == "・")
    # every morpheme of the dotted katakana run knows the word before the run and the one after it
    assert "udot" in feats[i] and "u-1w=の" in feats[i] and "u+1w=は" in feats[i]
    assert "u-1w=の" in feats[i + 1] and "u=E" in feats[i + 1] and "u=B" in feats[i - 1]


def test_a_bare_surname_counts_only_with_its_title() -> None:
    from spcl.extract.names.ko import with_title

    assert with_title("김씨는 지난달 출석했다.", 0, 1) == (0, 2)
    assert with_title("검찰은 김 의원에게 물었다.", 4, 5) == (4, 8)
    assert with_title("A(27·여)씨가 왔다.", 0, 1) == (0, 8)
    assert with_title("김을 먹었다.", 0, 1) is None  # laver, not a person: no title after it
    assert with_title("김연아는", 0, 3) is None  # only one-character spans are widened


def test_korean_rule_names_the_crf_does_not_touch_are_not_added(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import spcl.extract.names.tagger as tagger

    monkeypatch.setenv("SPCL_NAMES_NER", "off")
    # the rule finder reads the loanword 드로우 (인명, 의) as a name
    text = "LibreOffice 드로우의 모든 메뉴, 서식 설정"
    monkeypatch.setenv("SPCL_NAMES_TAGGER", "off")
    assert [text[s:e] for s, e in find_person_names(text, "ko")] == ["드로우"]
    monkeypatch.setenv("SPCL_NAMES_TAGGER", "auto")

    # a sure CRF that finds ``found`` in Korean, beside the real rule spans
    def crf(found: list[tuple[int, int]]):
        return lambda text, lang, *a, **k: (
            [(s, e, 1.0) for s, e in found] if lang == "ko" else [],
            tagger.analyse(text, lang)[1],
        )

    monkeypatch.setattr(tagger, "scored_spans", crf([]))  # a CRF that finds no name
    assert find_person_names(text, "ko") == []
    monkeypatch.setattr(tagger, "scored_spans", crf([(12, 14)]))
    # an overlapping rule span widens it
    assert [text[s:e] for s, e in find_person_names(text, "ko")] == ["드로우"]


@pytest.mark.skipif(not (SHIPPED / "ja.crfsuite").is_file(), reason="no shipped names-crf model")
def test_the_finder_parses_a_japanese_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from spcl.extract.names import ja

    monkeypatch.setenv("SPCL_NAMES_NER", "off")
    real = ja._tagger()
    calls = []

    def counting(text: str) -> list:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(ja, "_tagger", lambda: counting)
    text = "山田太郎さんはチェーホフを読んだ。"
    assert [text[s:e] for s, e in find_person_names(text, "ja")] == ["山田太郎", "チェーホフ"]
    # the CRF and the rule finder share one MeCab parse (main parsed twice)
    assert calls == [len(text)]


def test_a_japanese_crf_span_the_rules_agree_with_needs_less_confidence() -> None:
    from spcl.extract.names import merge_japanese

    # 3..15 a katakana name, 16..18 a kanji surname
    text = "監督のオットー・レーハーゲルと山田は会った。"
    scored = [(3, 15, 0.75), (16, 18, 0.75)]
    assert merge_japanese(text, scored, [], 0.9, 0.7) == []  # no rule span agrees: 0.75 < 0.9
    # the rule agrees: 0.75 ≥ 0.7
    assert merge_japanese(text, scored, [(3, 15)], 0.9, 0.7) == [(3, 15), (3, 15)]
    # a rule span without katakana stands on its own; one with katakana needs a kept CRF span
    assert merge_japanese(text, [], [(3, 15), (16, 18)], 0.9, 0.7) == [(16, 18)]
