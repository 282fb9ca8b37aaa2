"""The screen's faster paths give the same tokens as the plain ones: vectorised Latin-word keys equal the keys of
the regex-extracted words, and the MeCab dictionary is a recorded, validated training setting."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.screen.features import FeatureSettings, Featurizer, latin_word_keys, latin_words, word_keys
from spcl.screen.model import load_screen
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
    assert "mecab_dic" not in FeatureSettings().to_json()  # cards of unidic-lite models read as before
    fs = replace(FeatureSettings(), mecab_dic="ipadic")
    assert FeatureSettings.from_json(json.loads(json.dumps(fs.to_json()))) == fs
    with pytest.raises(ValueError, match="mecab_dic"):
        FeatureSettings(mecab_dic="jumandic")
    with pytest.raises(ValueError, match="unknown MeCab dictionary"):
        mecab_tagger("jumandic")


def test_featurizer_tokenizes_japanese_with_the_models_dictionary() -> None:
    screen = load_screen("models/screen-default")
    uni = Tokenizers(screen.sp_model)
    feat = Featurizer(replace(screen.settings, mecab_dic="ipadic"), uni)
    assert feat.tokenizers.mecab_dic == "ipadic" and uni.mecab_dic == "unidic-lite"
    text = ["外国人参政権について、東京都に住む田中さんは病院で治療を受けた。"]
    ipa, _ = feat.featurize(text, ["ja"])
    same, _ = Featurizer(screen.settings, uni).featurize(text, ["ja"])
    assert ipa.nnz > 0 and not np.array_equal(ipa.indices, same.indices)  # the dictionaries split differently


def test_a_model_without_mecab_routes_japanese_to_sentencepiece() -> None:
    screen = load_screen("models/screen-default")
    tok = Tokenizers(screen.sp_model, "none")
    assert tok.mecab is None
    with pytest.raises(ValueError, match="no MeCab"):
        tok.wakati(["東京"])
    feat = Featurizer(replace(screen.settings, mecab_dic="none"), tok, screen.lexicon)
    counts, lex = feat.featurize(["田中さんは病院で治療を受けた。", "경찰은 사기 혐의로 조사했다"], ["ja", "ko"])
    assert counts.shape[0] == 2 and np.diff(counts.indptr).min() > 0 and lex.shape[0] == 2
