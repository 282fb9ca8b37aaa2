"""The screen's faster paths give the same tokens as the plain ones: vectorised Latin-word keys
equal the keys of the regex-extracted words, and the MeCab dictionary is a recorded, validated
training setting."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spcl.screen.features import (
    FeatureSettings,
    Featurizer,
    char_ngram_keys,
    count_matrix,
    japanese_char_keys,
    latin_word_keys,
    latin_words,
    word_keys,
)
from spcl.screen.model import Screen, load_screen
from spcl.screen.tokenize import Tokenizers, mecab_tagger

_ALPHABET = st.sampled_from([*"abcXYZ09' -.,\n\x00김사기東京はİK", "\u212a", "\U0001f600"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(_ALPHABET, max_size=40), max_size=6))
def test_latin_word_keys_equal_the_regex_words(texts: list[str]) -> None:
    lowered = [t.lower() for t in texts]
    keys, docs = latin_word_keys(lowered)
    ok, od = word_keys([latin_words(t) for t in lowered])
    assert keys.tolist() == ok.tolist() and docs.tolist() == od.tolist()


def test_mecab_dictionary_is_a_validated_training_setting() -> None:
    # cards of unidic-lite models read as before
    assert "mecab_dic" not in FeatureSettings().to_json()
    fs = FeatureSettings(mecab_dic="ipadic")
    assert FeatureSettings.from_json(json.loads(json.dumps(fs.to_json()))) == fs
    with pytest.raises(ValueError, match="mecab_dic"):
        FeatureSettings(mecab_dic="jumandic")
    with pytest.raises(ValueError, match="unknown MeCab dictionary"):
        mecab_tagger("jumandic")


def test_featurizer_tokenizes_japanese_with_the_models_dictionary() -> None:
    screen = load_screen("models/screen-default")
    uni = Tokenizers(screen.sp_model)
    feat = Featurizer(screen.settings.replace(mecab_dic="ipadic"), uni)
    assert feat.tokenizers.mecab_dic == "ipadic" and uni.mecab_dic == "unidic-lite"
    text = ["外国人参政権について、東京都に住む田中さんは病院で治療を受けた。"]
    ipa, _ = feat.featurize(text, ["ja"])
    same, _ = Featurizer(screen.settings, uni).featurize(text, ["ja"])
    # the dictionaries split differently
    assert ipa.nnz > 0 and not np.array_equal(ipa.indices, same.indices)


def test_a_model_without_mecab_routes_japanese_to_sentencepiece() -> None:
    screen = load_screen("models/screen-default")
    tok = Tokenizers(screen.sp_model, "none")
    assert tok.mecab is None
    with pytest.raises(ValueError, match="no MeCab"):
        tok.wakati(["東京"])
    feat = Featurizer(screen.settings.replace(mecab_dic="none"), tok, screen.lexicon)
    counts, lex = feat.featurize(
        ["田中さんは病院で治療を受けた。", "경찰은 사기 혐의로 조사했다"], ["ja", "ko"]
    )
    assert counts.shape[0] == 2 and np.diff(counts.indptr).min() > 0 and lex.shape[0] == 2


def _real_mixed(per_lang: int = 40) -> tuple[list[str], list[str]]:
    """Real committed en/ja/ko passages (man pages and program messages), interleaved by
    language."""
    rows: dict[str, list[str]] = {"en": [], "ja": [], "ko": []}
    with open("data/weak-technical/eval.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if len(rows.get(rec["lang"], [0] * per_lang)) < per_lang:
                rows[rec["lang"]].append(rec["text"])
    texts = [t for trio in zip(rows["en"], rows["ja"], rows["ko"], strict=True) for t in trio]
    return texts, ["en", "ja", "ko"] * per_lang


def test_japanese_char_tokens_leave_korean_and_english_features_unchanged() -> None:
    screen = load_screen("models/screen-default")
    texts, langs = _real_mixed()
    words = Featurizer(
        screen.settings.replace(mecab_dic="unidic-lite"),
        Tokenizers(screen.sp_model),
        screen.lexicon,
    )
    # MeCab words (the shipped model itself is on chars)
    base, base_lex = words.featurize(texts, langs)
    chars = Featurizer(
        screen.settings.replace(mecab_dic="chars"),
        Tokenizers(screen.sp_model, "chars"),
        screen.lexicon,
    )
    assert chars.tokenizers.mecab is None  # no MeCab loaded at all
    got, got_lex = chars.featurize(texts, langs)
    for i, lang in enumerate(langs):
        row, ref = got.getrow(i), base.getrow(i)
        if lang == "ja":
            assert row.nnz > 0 and not np.array_equal(row.indices, ref.indices)
        else:  # byte-identical columns, counts and lexicon hits
            assert np.array_equal(row.indices, ref.indices) and np.array_equal(row.data, ref.data)
            assert np.array_equal(got_lex[i], base_lex[i])
    assert (
        FeatureSettings.from_json(screen.settings.replace(mecab_dic="chars").to_json()).mecab_dic
        == "chars"
    )


def test_japanese_char_keys_are_a_key_space_of_their_own() -> None:
    ja, _ = japanese_char_keys(["東京都の病院"])
    plain, _ = char_ngram_keys(["東京都の病院"], (1, 2))
    assert ja.size == plain.size == 11 and not set(ja.tolist()) & set(plain.tolist())
    lex = {"ja": {"MEDICAL": ["病"]}}
    screen = load_screen("models/screen-default")
    feat = Featurizer(screen.settings.replace(mecab_dic="chars"), screen.featurizer.tokenizers, lex)
    # one-character term: a unigram key
    _, hits = feat.featurize(["病院で病気", "東京"], ["ja", "ja"])
    assert hits[:, 0].tolist() == [2.0, 0.0]


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 8),
    hnp.arrays(np.int64, st.integers(0, 300), elements=st.integers(0, 1 << 20)),
)
def test_count_matrix_counts_every_pair_like_scipy(n: int, bits: int, raw: np.ndarray) -> None:
    size = raw.size
    docs, cols = raw % n, (raw >> 6) % (1 << bits)
    got = count_matrix(docs, cols, n, bits)
    ref = sp.coo_matrix((np.ones(size, np.float32), (docs, cols)), shape=(n, 1 << bits)).tocsr()
    ref.sum_duplicates()
    assert got.dtype == np.float32 and got.shape == ref.shape
    assert np.array_equal(got.indptr, ref.indptr) and np.array_equal(got.indices, ref.indices)
    assert np.array_equal(got.data, ref.data)


def test_count_matrix_of_a_batch_too_wide_for_32_bit_codes() -> None:
    n, bits = 1 << 15, 18  # n << bits = 2**33: the 64-bit path
    docs = np.array([n - 1, 0, n - 1, 5], np.int64)
    cols = np.array([(1 << bits) - 1, 3, (1 << bits) - 1, 0], np.int64)
    got = count_matrix(docs, cols, n, bits)
    assert (
        got[n - 1, (1 << bits) - 1] == 2.0
        and got[0, 3] == 1.0
        and got[5, 0] == 1.0
        and got.nnz == 3
    )


def test_train_command_takes_the_japanese_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from spcl.cli import main
    from spcl.commands.train import _rebuild_command, add_train_arguments

    parser = argparse.ArgumentParser()
    add_train_arguments(parser)
    base = ["--data", "a.jsonl", "--output", "models/x"]
    assert "--mecab-dic" not in _rebuild_command(parser.parse_args(base))
    assert _rebuild_command(parser.parse_args([*base, "--mecab-dic", "chars"])).endswith(
        "--mecab-dic chars"
    )
    data = tmp_path / "d.jsonl"
    data.write_text("")
    assert (
        main(
            [
                "train",
                "--data",
                str(data),
                "--output",
                str(tmp_path / "m"),
                "--mecab-dic",
                "jumandic",
            ]
        )
        == 2
    )
    assert "mecab_dic" in capsys.readouterr().err


@pytest.mark.slow
def test_a_chars_model_trains_and_loads_without_mecab(tmp_path: Path) -> None:
    from spcl.cli import main
    from spcl.synth.screen_data import generate

    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in generate(15, seed=2)))
    out = tmp_path / "screen-chars"
    assert (
        main(
            [
                "train",
                "--data",
                str(data),
                "--output",
                str(out),
                "--cv-folds",
                "0",
                "--mecab-dic",
                "chars",
            ]
        )
        == 0
    )
    card = json.loads((out / "model_card.json").read_text())
    assert card["features"]["mecab_dic"] == "chars" and card["rebuild"].endswith(
        "--mecab-dic chars"
    )
    assert "no MeCab" in card["tokenizers"]["ja"]
    screen = load_screen(out)
    assert screen.featurizer.tokenizers.mecab is None
    assert screen.predict(["田中さんは病院で治療を受けた。"], ["ja"]).flag.dtype == bool


_MIXED = st.sampled_from(
    [*"abc xyz09'-.", "東", "京", "病", "院", "は", "の", "김", "사", "기", "병", "원", "\n", "İ"]
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(_MIXED, max_size=30), st.sampled_from(["ja", "ko", "en", "other"])),
        min_size=1,
        max_size=6,
    )
)
def test_a_mixed_batch_featurizes_each_text_as_it_would_alone(rows: list[tuple[str, str]]) -> None:
    # The batch-wide NumPy paths (keys of all texts at once, index maps back to each text) must give
    # every text the features and lexicon counts it has alone: nothing of a neighbour of another
    # language leaks in.
    feat = _shipped().featurizer
    texts, langs = [t for t, _ in rows], [lang for _, lang in rows]
    counts, lex = feat.featurize(texts, langs)
    for i, (text, lang) in enumerate(rows):
        alone, alone_lex = feat.featurize([text], [lang])
        row = counts.getrow(i)
        assert np.array_equal(row.indices, alone.indices) and np.array_equal(row.data, alone.data)
        assert np.array_equal(lex[i], alone_lex[0])


@lru_cache(maxsize=1)
def _shipped() -> Screen:
    return load_screen("models/screen-default")
