"""The Japanese person-name finder: the rule finder's organisation checks, the katakana name
gazetteer of the CRF (builder, loader, features)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from spcl.extract.names.tagger import JA_GAZETTEER, MODEL_DIR, analyse, features, load_ja_gazetteer
from spcl.resources import SOURCE_ROOT
from tools.datasets.ja_names_gazetteer import build

SHIPPED = SOURCE_ROOT / MODEL_DIR


def _jamdict_db(path: Path) -> Path:
    """A tiny sqlite database with the tables of jamdict's that the builder reads."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE NETranslation (ID INTEGER PRIMARY KEY, idseq INTEGER);
        CREATE TABLE NETransType (tid INTEGER, text TEXT);
        CREATE TABLE NEKanji (ID INTEGER PRIMARY KEY, idseq INTEGER, text TEXT);
        CREATE TABLE NEKana (ID INTEGER PRIMARY KEY, idseq INTEGER, text TEXT, nokanji BOOLEAN);
        CREATE TABLE Kanji (ID INTEGER PRIMARY KEY, idseq INTEGER, text TEXT);
        CREATE TABLE Kana (ID INTEGER PRIMARY KEY, idseq INTEGER, text TEXT, nokanji BOOLEAN);
    """)
    names = [
        (1, "ハインリヒ", "masc"),
        (2, "ヴェーバー", "surname"),
        (3, "アーサー・ミラー", "person"),
        (4, "ボストン", "place"),
        (5, "ア", "fem"),
        (6, "ヤマダ", "surname"),
    ]
    for idseq, text, kind in names:
        con.execute("INSERT INTO NETranslation (ID, idseq) VALUES (?, ?)", (idseq, idseq))
        con.execute("INSERT INTO NETransType VALUES (?, ?)", (idseq, kind))
        con.execute("INSERT INTO NEKana (idseq, text, nokanji) VALUES (?, ?, 0)", (idseq, text))
    # a reading of a kanji name: not kept
    con.execute("INSERT INTO NEKanji (idseq, text) VALUES (6, '山田')")
    # a full name unidic does not tag 人名, and one it does
    for idseq, text in ((7, "薄熙来"), (8, "山田太郎")):
        con.execute("INSERT INTO NETranslation (ID, idseq) VALUES (?, ?)", (idseq, idseq))
        con.execute("INSERT INTO NETransType VALUES (?, 'person')", (idseq,))
        con.execute("INSERT INTO NEKanji (idseq, text) VALUES (?, ?)", (idseq, text))
    con.execute("INSERT INTO Kana (idseq, text, nokanji) VALUES (10, 'コンピュータ', 0)")
    # a loanword too (mirror)
    con.execute("INSERT INTO Kana (idseq, text, nokanji) VALUES (11, 'ミラー', 0)")
    con.commit()
    con.close()
    return path


def test_builder_derives_classes_and_is_byte_identical(tmp_path: Path) -> None:
    db = _jamdict_db(tmp_path / "jamdict.db")
    counts = build(db, tmp_path / "a.json")
    build(db, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    doc = json.loads((tmp_path / "a.json").read_text("utf-8"))
    assert doc["source"]["sha256"] == hashlib.sha256(db.read_bytes()).hexdigest()
    assert "CC BY-SA 4.0" in doc["licence"]
    gaz = load_ja_gazetteer(tmp_path / "a.json")
    assert gaz == {
        "ハインリヒ": "g",
        "ヴェーバー": "s",
        "アーサー": "p",
        "ミラー": "pw",
        "ボストン": "l",
        # no one-character string, no kana reading of a kanji name
        "コンピュータ": "w",
        "薄熙来": "k",
    }
    assert counts == {"g": 1, "s": 1, "p": 2, "l": 1, "w": 2, "k": 1}


def test_loader_tolerates_a_missing_or_bad_file(tmp_path: Path) -> None:
    assert load_ja_gazetteer(tmp_path / "none.json") == {}
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert load_ja_gazetteer(bad) == {}
    odd = tmp_path / "odd.json"
    odd.write_text(
        json.dumps({"classes": {"g": ["アンナ", 3], "long": ["x"], "s": "ミラー"}}),
        encoding="utf-8",
    )
    assert load_ja_gazetteer(odd) == {"アンナ": "g"}


def test_features_read_the_parts_of_a_dotted_katakana_unit() -> None:
    gaz = {"ハインリヒ": "g", "ヴェーバー": "s", "コンピュータ": "w", "システム": "w"}
    text = "講演したのはハインリヒ・ヴェーバーだった。"
    morphs, rules = analyse(text, "ja")
    feats = features(text, morphs, rules, gaz)
    dot = next(k for k, m in enumerate(morphs) if m[2] == "・")
    first = next(k for k, m in enumerate(morphs) if m[0] == text.index("ハ"))
    assert "gp=g" in feats[first] and "gp+1=s" in feats[first] and "gall" in feats[first]
    assert "gp=s" in feats[dot + 1] and "gp-1=g" in feats[dot + 1] and "gall" in feats[dot]
    # no gazetteer
    assert not any(f.startswith("g") and f != "gp=-" for f in features(text, morphs, rules)[first])
    loan = "コンピュータ・システムを使う。"
    morphs, rules = analyse(loan, "ja")
    feats = features(loan, morphs, rules, gaz)
    assert "gnone" in feats[0] and "gp=w" in feats[0]


def test_features_mark_a_kanji_full_name_of_the_gazetteer_across_morphemes() -> None:
    text = "薄熙来氏が語った。"
    morphs, rules = analyse(text, "ja")
    feats = features(text, morphs, rules, {"薄熙来": "k", "熙来": "g"})
    marks = [next((f for f in row if f.startswith("gk=")), None) for row in feats]
    covered = [m[2] for m, mark in zip(morphs, marks, strict=True) if mark]
    assert "".join(covered) == "薄熙来" and marks[0] == "gk=B" and marks[len(covered) - 1] == "gk=I"
    assert not any(
        f.startswith("gk=") for row in features(text, morphs, rules, {"熙来": "g"}) for f in row
    )


@pytest.mark.skipif(
    not (SHIPPED / JA_GAZETTEER).is_file(), reason="no shipped Japanese names gazetteer"
)
def test_shipped_gazetteer_is_small_attributed_and_named_in_the_card() -> None:
    path = SHIPPED / JA_GAZETTEER
    assert path.stat().st_size <= 3 * 1024 * 1024
    doc = json.loads(path.read_text("utf-8"))
    assert "Electronic Dictionary Research and Development Group" in doc["licence"]
    gaz = load_ja_gazetteer(path)
    assert "g" in gaz["アーサー"] and "s" in gaz["ミラー"] and "w" in gaz["コンピュータ"]
    card = json.loads((SHIPPED / "model_card.json").read_text("utf-8"))
    entry = card["files"]["ja"].get("gazetteer")
    if entry is not None:  # the shipped ja model was trained with it
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_rule_finder_reads_names_inside_a_company_or_temple_as_no_person() -> None:
    from spcl.extract.names.ja import ja_name_spans

    def names(text: str) -> list[str]:
        return [text[s:e] for s, e in ja_name_spans(text)]

    assert names("株式会社西條へ社名を変えた。") == []  # after 株式会社: the company's name
    assert names("合資会社亀屋万年堂として設立した。") == []
    assert names("佐藤一郎寺の境内に入った。") == []  # a full name glued to 寺: a temple
    assert names("前川國男建築設計事務所が担当した。") == []
    assert names("会社の西條さんが来た。") == ["西條"]  # 会社 not glued to it: a person
    assert names("山田太郎社長と佐藤一郎さんが会った。") == ["山田太郎", "佐藤一郎"]
