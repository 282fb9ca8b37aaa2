"""Thresholds chosen by what transfers (source folds) and the person-cue columns."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.screen import load_screen
from spcl.screen.features import FeatureSettings, Featurizer
from spcl.screen.lexicon import LEXICON_KINDS, default_lexicon
from spcl.screen.person_cue import CUE_COLUMNS, PersonCues
from spcl.screen.tokenize import Tokenizers, train_sentencepiece
from spcl.screen.train import choose_thresholds, fit_screen, source_group
from tests.support.screen_corpus import SMALL, small_records

FIRST, NAMED, FAMILY, TOPIC = range(4)


def _sourced(n: int = 12) -> list:
    """Small labelled records as real text of six sources (two of them 20 Newsgroups groups)."""
    sources = ["wiki", "news", "chat", "20news-sci.med", "20news-rec.autos", "qa"]
    return [
        replace(r, source=sources[i % len(sources)]) for i, r in enumerate(small_records(n, seed=7))
    ]


def test_source_split_keeps_each_kind_of_text_in_one_fold() -> None:
    recs = _sourced()
    screen = fit_screen(recs, SMALL.replace(threshold_split="source"))
    fold = screen.oof_scores["fold"]
    by_group: dict[str, set[int]] = {}
    for r, k in zip(recs, fold.tolist(), strict=True):
        by_group.setdefault(source_group(r), set()).add(k)
    assert all(len(ks) == 1 for ks in by_group.values()), by_group
    assert "en:20news" in by_group or "ja:20news" in by_group or "ko:20news" in by_group
    cv = fit_screen(recs, SMALL).oof_scores["fold"]  # grouped CV spreads a source over folds
    spread = {}
    for r, k in zip(recs, cv.tolist(), strict=True):
        spread.setdefault(source_group(r), set()).add(k)
    assert any(len(ks) > 1 for ks in spread.values())
    assert "whole source groups" in screen.card["threshold_rule"]
    with pytest.raises(ValueError, match="threshold_split"):
        fit_screen(recs, SMALL.replace(threshold_split="bogus"))


def test_choose_thresholds_is_the_rule_the_training_used() -> None:
    recs = _sourced()
    st_ = SMALL.replace(
        threshold_split="source", per_lang_thresholds=("ja", "ko"), target_recall=0.9
    )
    screen = fit_screen(recs, st_)
    labels = np.array([r.label for r in recs])
    lg, sv, per_lang = choose_thresholds(
        screen.oof_scores["lgbm"],
        screen.oof_scores["svc"],
        labels == "SCPI",
        np.isin(labels, ("SCPI", "RELATED")),
        np.ones(len(recs), bool),
        np.array([r.lang for r in recs], dtype=object),
        st_,
    )
    assert (lg, sv) == (screen.thresholds["lgbm"], screen.thresholds["svc"])
    assert per_lang == screen.lang_thresholds


@pytest.fixture(scope="module")
def cues() -> PersonCues:
    return PersonCues(default_lexicon())


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("en", "My mother was diagnosed with cancer last spring.", (1, 0, 1, 1)),
        ("en", "The hospital opened a new cancer ward.", (0, 0, 0, 1)),
        ("en", "Mr Brown was arrested on Monday. The weather was fine.", (0, 1, 0, 1)),
        ("ja", "私は先月から入院しています。", (1, 0, 0, 1)),
        (
            "ja",
            "病院は駅の近くにある。母は元気だ。",
            (0, 0, 0, 1),
        ),  # the cue is in another sentence
        ("ja", "田中さんが逮捕された。", (0, 1, 0, 1)),
        ("ko", "저는 우울증 진단을 받았어요.", (1, 0, 0, 1)),
        ("ko", "남편이 암 수술을 받았다.", (0, 0, 1, 1)),
        ("ko", "김모씨는 사기 혐의로 구속됐다.", (0, 1, 0, 1)),
    ],
)
def test_person_cue_counts(
    cues: PersonCues, lang: str, text: str, expected: tuple[int, ...]
) -> None:
    got = cues.counts([text.lower()], [lang], np.ones(1, bool))[0]
    assert tuple(int(v) for v in got) == expected


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=200), lang=st.sampled_from(["en", "ja", "ko", "other"]))
def test_person_cue_counts_are_bounded_and_zero_off_topic(text: str, lang: str) -> None:
    cues = PersonCues(default_lexicon())
    got = cues.counts([text.lower()], [lang], np.ones(1, bool))[0]
    # a cue counts only in a topic sentence
    assert (got >= 0).all() and got[TOPIC] >= got[:TOPIC].max()
    # not a candidate: zeros
    assert not cues.counts([text.lower()], [lang], np.zeros(1, bool)).any()


def test_person_cue_columns_join_the_lexicon_block_only_when_on(tmp_path: Path) -> None:
    texts = [
        "My mother was diagnosed with cancer.",
        "The hospital opened a ward.",
        "Nice weather today.",
    ]
    langs = ["en"] * 3
    sp_model = train_sentencepiece(texts * 20, 200, 0)
    off = Featurizer(FeatureSettings(bits=12), Tokenizers(sp_model), default_lexicon())
    on = Featurizer(
        FeatureSettings(bits=12, person_cues=True), Tokenizers(sp_model), default_lexicon()
    )
    assert on.width == off.width + len(CUE_COLUMNS)
    c_off, lex_off = off.featurize(texts, langs)
    c_on, lex_on = on.featurize(texts, langs)
    assert (c_off != c_on).nnz == 0 and np.array_equal(lex_on[:, : len(LEXICON_KINDS)], lex_off)
    cue = lex_on[:, len(LEXICON_KINDS) :]
    assert cue[0, FAMILY] == 1 and cue[1, FAMILY] == 0 and cue[1, TOPIC] == 1 and not cue[2].any()
    assert "person_cues" not in FeatureSettings().to_json()
    assert FeatureSettings.from_json(FeatureSettings(person_cues=True).to_json()).person_cues


def test_a_person_cue_model_saves_and_loads(tmp_path: Path) -> None:
    recs = small_records(10, seed=3)
    screen = fit_screen(recs, SMALL.replace(features=SMALL.features.replace(person_cues=True)))
    path = screen.save(tmp_path / "cue-screen")
    loaded = load_screen(path)
    texts = [r.text for r in recs]
    assert np.array_equal(loaded.predict(texts).flag, screen.predict(texts).flag)
    assert json.loads((path / "model_card.json").read_text())["features"]["person_cues"] is True
