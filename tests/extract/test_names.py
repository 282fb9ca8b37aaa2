"""CPU person-name finders (spcl.extract.names), the person-mention eval set and its evaluation."""

from __future__ import annotations

import importlib.util
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.evaluate.names import evaluate_names, read_names_set, value_spans
from spcl.extract.backends.rules_backend import rules_rows
from spcl.extract.names import find_person_names
from spcl.extract.names import ner as ner_module
from spcl.extract.names.ja import ja_name_spans
from spcl.extract.names.ko import longest_per_overlap, tagger_available
from spcl.manifest import verify_manifest
from tools.datasets.names_set import NamesSetError, mark_mentions, split_of

SET_DIR = Path(__file__).resolve().parents[2] / "data" / "names-eval"


@pytest.fixture
def rules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule finders alone: no NER model, no trained tagger (the fallback where they are
    missing)."""
    monkeypatch.setenv("SPCL_NAMES_NER", "off")
    monkeypatch.setenv("SPCL_NAMES_TAGGER", "off")


def _found(text: str, lang: str | None = None) -> list[str]:
    return [text[s:e] for s, e in find_person_names(text, lang)]


@pytest.mark.usefixtures("rules_only")
@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("山田太郎さんと佐藤さんは東京で会った。", "ja", ["山田太郎", "佐藤"]),
        # foreign names in katakana: dotted sequences, with a Latin initial; a lone one before a
        # particle
        (
            "ジョージ・W・ブッシュ大統領とチェーホフが",
            "ja",
            ["ジョージ・W・ブッシュ", "チェーホフ"],
        ),
        # a name glued to a company noun is a company, not a person
        ("ハーマン社は藤倉電線に納品した。", "ja", []),
        # a surname + a short given name the dictionary lacks, but not a surname + a company/prize
        # noun
        ("1940年、中山ちゑが青森県で急死。芥川賞と直木賞、藤本製薬。", "ja", ["中山ちゑ"]),
        # a surname glued to a company, cabinet or unit noun is no full name; before a title it is a
        # surname
        ("北野建設が湯島に建て、大隈内閣が倒れ、藤堂隊に従った。", "ja", []),
        ("小田船長と河野大使が来た。", "ja", ["小田", "河野"]),
        ("김모(33)씨와 A씨(42)는 박씨를 만났다", "ko", ["김모", "A씨", "박씨"]),
        (
            "김 의원과 윤 전 대변인, A(25)씨, K군을 조사했다",
            "ko",
            ["김 의원", "윤 전 대변인", "A(25)씨", "K군"],
        ),
        # 이모 and 장모 are also kin words: the title or age stays with them
        ("이모(36)씨는 장모와 함께 왔다", "ko", ["이모(36)씨"]),
        ("한 선수가 전 대통령을 만났다. 반군과 공군이 태양 아래", "ko", []),
        ("Please call Dr. Jane Roe; my name is Sam Lee.", "en", ["Jane Roe", "Sam Lee"]),
        # a capital inside a surname: main read 'Mc' of McCarthy, not a whole word, so the name
        # leaked
        (
            "Mr McCarthy met Dr. MacDonald and Michael O'Brien at Dr Roe's.",
            "en",
            ["McCarthy", "MacDonald", "Michael O'Brien", "Roe"],
        ),
        # the credits of a real man page (du.1), wrapped as man shows them; a team or a default is
        # no name
        (
            "Written by Torbjorn Granlund, David MacKenzie, Paul\n       Eggert, and Jim Meyering.",
            "en",
            ["Torbjorn Granlund", "David MacKenzie", "Paul\n       Eggert", "Jim Meyering"],
        ),
        (
            "Written by Richard M. Stallman. Maintained by Debian Developers, written by default.",
            "en",
            ["Richard M. Stallman"],
        ),
        # 'named' then a new paragraph (pgrep.1) is no name; a letter's signature after a blank line
        # still is
        ("$ pgrep -u root named\n\n       Example 2: Make syslog reread", "en", []),
        ("Sincerely,\n\nJohn Smith", "en", ["John Smith"]),
    ],
)
def test_rule_finders(text: str, lang: str, expected: list[str]) -> None:
    assert _found(text, lang) == expected


@pytest.mark.skipif(not tagger_available(), reason="python-mecab-ko not installed")
@pytest.mark.usefixtures("rules_only")
def test_korean_tagger_names_need_a_cue_when_transliterated() -> None:
    assert _found("리암 니슨과 제프리 러쉬의 명연기, 네이마르는 부상", "ko") == [
        "리암 니슨",
        "제프리 러쉬",
        "네이마르",
    ]
    # mecab-ko-dic tags these loanwords 인명 too: without a person cue they are no names
    assert _found("인터페이스의 메소드 이름과 클래스를 지정하고 세브란스병원에 갔다", "ko") == []
    # lawmakers' lists: separators read as spaces, two Korean names with a space are two people
    assert _found("발의자 : 정의화․이명수․김을동 의원(3인)", "ko") == ["정의화", "이명수", "김을동"]


@pytest.mark.usefixtures("rules_only")
@settings(max_examples=150, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("김이박씨 의원모(3)A양・ジョンさん山田太郎 Mr. Jane Roe가는に、")
        ),
        max_size=60,
    )
)
def test_spans_are_sorted_disjoint_and_inside_the_text(text: str) -> None:
    spans = find_person_names(text)
    assert spans == sorted(spans)
    assert all(0 <= s < e <= len(text) for s, e in spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 10)), max_size=12))
def test_longest_per_overlap_keeps_disjoint_spans(pairs: list[tuple[int, int]]) -> None:
    spans = [(s, s + n) for s, n in pairs]
    kept = longest_per_overlap(spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(kept))
    assert set(kept) <= set(spans)
    # every input span overlaps something kept (nothing is lost without a replacement)
    assert all(any(s < e2 and s2 < e for s2, e2 in kept) for s, e in spans)


def test_rules_rows_print_the_finder_values(rules_only: None) -> None:
    text = "김 의원과 山田太郎さん"
    rows = [v for t, v in rules_rows(text) if t == "PERSON"]
    assert rows == [text[s:e] for s, e in find_person_names(text)] == ["김 의원", "山田太郎"]


def test_without_models_the_rule_finders_still_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback: no NER package installed → the NER source is empty, the rule finders answer
    alone."""
    monkeypatch.setenv("SPCL_NAMES_NER", "on")
    monkeypatch.setenv("SPCL_NAMES_TAGGER", "off")
    monkeypatch.setattr(ner_module, "_load", lambda name, exclude=(): None)
    assert ner_module.ner_person_spans("山田太郎さんが来た", "ja") == []
    assert _found("山田太郎さんが来た", "ja") == ["山田太郎"]


def test_ner_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opt-in: only an explicit on switches the NER models on; unset, empty or auto leave them
    off."""
    for value, enabled in (
        ("off", False),
        ("0", False),
        ("auto", False),
        ("", False),
        ("on", True),
        ("1", True),
    ):
        monkeypatch.setenv("SPCL_NAMES_NER", value)
        assert ner_module.ner_enabled() is enabled


def test_chunks_cover_the_text_exactly() -> None:
    text = "一文目です。" * 500 + "x" * 5000
    pieces = ner_module.chunks(text, 2000)
    assert "".join(p for _, p in pieces) == text
    assert all(len(p) <= 2000 and text[o : o + len(p)] == p for o, p in pieces)


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("ja_ginza") is None,
    reason="the names extra (ja-ginza) is not installed",
)
def test_ginza_adds_names_the_rules_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPCL_NAMES_NER", "auto")
    text = "原作者のル=グウィンは宮崎の監督を希望していたが、息子の吾郎が監督となった。"
    assert "宮崎" not in [text[s:e] for s, e in ja_name_spans(text)]  # unidic reads 宮崎 as a place
    assert "宮崎" in _found(text, "ja")
    # the filter drops GiNZA's organisation-like Person entities
    assert _found("藤本製薬の工場は公明党の本部に近い。", "ja") == []


# --- the eval set and its metrics -----------------------------------------------------------------


def test_mark_mentions_contexts_and_overlaps() -> None:
    text = "김 씨는 김 의원과 김연아를 만났다"
    assert mark_mentions(text, ["김[ 씨는]", "김연아"]) == [[0, 1], [11, 14]]
    assert mark_mentions("オバマとバラク・オバマ", ["オバマ", "バラク・オバマ"]) == [
        [0, 3],
        [4, 11],
    ]
    with pytest.raises(NamesSetError):
        mark_mentions(text, ["박근혜"], "id-1")


def test_split_is_a_pure_function_of_the_id() -> None:
    ids = [f"x-{i}" for i in range(400)]
    splits = [split_of(i) for i in ids]
    assert splits == [split_of(i) for i in ids]
    assert 150 < splits.count("dev") < 250


@pytest.mark.usefixtures("rules_only")
def test_metrics_on_a_tiny_set(tmp_path: Path) -> None:
    records = [
        {
            "id": "a",
            "lang": "ko",
            "source": "t",
            "split": "dev",
            "text": "김 의원과 박씨",
            "persons": [[0, 1], [6, 7]],
        },
        {
            "id": "b",
            "lang": "ko",
            "source": "t",
            "split": "dev",
            "text": "오늘은 맑다",
            "persons": [],
        },
    ]
    path = tmp_path / "set.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    got = evaluate_names(read_names_set(path), "rules")["by_lang"]["ko"]
    assert (got["mentions"], got["recall"], got["false_row_rate"], got["span_precision"]) == (
        2,
        1.0,
        0.0,
        1.0,
    )
    assert got["row_precision"] == 1.0
    assert value_spans("박씨와 박씨", ["박씨"]) == [(0, 2), (4, 6)]


def test_shipped_eval_set_matches_its_manifest() -> None:
    assert verify_manifest(SET_DIR).ok


@pytest.mark.usefixtures("rules_only")
def test_rule_finders_meet_the_bar_on_held_out_real_sentences() -> None:
    """The test half of data/names-eval (never used for tuning): recall ≥ 0.75 in ja and ko with ≤ 5
    % of person-free sentences getting a PERSON row, the rule finders alone (no NER model)."""
    records = [
        r
        for r in read_names_set(SET_DIR / "names-eval.jsonl", "test")
        if r["source"] != "weak-none:help"
    ]
    metrics = evaluate_names(records, "rules")["by_lang"]
    for lang in ("ja", "ko"):
        assert metrics[lang]["recall"] >= 0.75, (lang, metrics[lang])
        assert metrics[lang]["false_row_rate"] <= 0.05, (lang, metrics[lang])


@pytest.mark.slow
def test_eval_set_rebuilds_byte_identically(tmp_path: Path) -> None:
    """The builder reproduces the committed JSONL (needs the names-eval extra and shared/data
    beside the repo)."""
    from tools.datasets.names_set import build_names_set

    scpi = SET_DIR.parents[2] / "shared" / "data" / "scpi-real-v1" / "labelled.jsonl"
    if (
        not scpi.is_file()
        or importlib.util.find_spec("hironsan") is None
        or importlib.util.find_spec("konlpy") is None
    ):
        pytest.skip(
            "needs shared/data/scpi-real-v1 and the names-eval extra (hironsancorpus, konlpy)"
        )
    path = build_names_set(
        tmp_path,
        scpi,
        SET_DIR / "annotations-scpi-real.tsv",
        SET_DIR.parents[1] / "data" / "weak-none" / "libreoffice-help.jsonl",
    )
    assert path.read_bytes() == (SET_DIR / "names-eval.jsonl").read_bytes()


def test_eval_names_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from spcl.cli import main

    monkeypatch.setenv("SPCL_NAMES_NER", "off")  # restored after the test (--no-ner sets it too)
    out = tmp_path / "names.json"
    rc = main(
        [
            "eval",
            "names",
            "--set",
            str(SET_DIR / "names-eval.jsonl"),
            "--lang",
            "ko",
            "--split",
            "dev",
            "--predictor",
            "finder",
            "--no-ner",
            "--output",
            str(out),
        ]
    )
    assert rc == 0
    metrics = json.loads(out.read_text(encoding="utf-8"))
    assert set(metrics["by_lang"]) == {"ko"} and metrics["predictor"] == "finder"
    assert "ko/scpi-real" in capsys.readouterr().out
    assert main(["eval", "names", "--set", str(tmp_path / "missing.jsonl")]) == 2


def test_row_precision_counts_distinct_values_and_gold_gets_a_split(tmp_path: Path) -> None:
    """names-gold-v1 records have no split: read_names_set gives them train/heldout by id hash."""
    from spcl.extract.names.tagger import split_of as gold_split
    from spcl.extract.names.tally import MentionTally

    tally = MentionTally()
    text = "박씨와 박씨, 그리고 오늘"
    # two rows: 박씨 (true), 오늘 (false)
    tally.add([(0, 2)], [(0, 2), (4, 6), (11, 13)], 0.0, text)
    assert (tally.metrics()["row_precision"], tally.metrics()["span_precision"]) == (0.5, 0.3333)
    path = tmp_path / "gold.jsonl"
    rows = [{"id": f"g{i}", "lang": "ko", "text": "오늘은 맑다", "persons": []} for i in range(20)]
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    held = read_names_set(path, "heldout")
    assert [r["id"] for r in held] == [r["id"] for r in rows if gold_split(r["id"]) == "heldout"]
