"""Screen model: tokenizer routing, features, thresholds, union property, artifact round trip and
refusal."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spcl.screen import CATEGORIES, Screen, ScreenModelError, ScreenResult, load_screen
from spcl.screen.artifact import MODEL_FILES
from spcl.screen.features import bigram_keys, char_ngram_keys, word_keys
from spcl.screen.tokenize import Tokenizers, route, train_sentencepiece
from spcl.screen.train import (
    LGBM_OFF,
    Record,
    fit_screen,
    lang_values,
    min_positives,
    near_duplicate_groups,
    threshold_for_recall,
    thresholds_for_fewest_none,
    thresholds_for_none_budget,
    too_few_positives,
    tune_thresholds,
)
from spcl.synth.screen_data import generate
from spcl.text import guess_lang
from tests.support.screen_corpus import SMALL, small_records


@pytest.fixture(scope="module")
def tiny_screen(tmp_path_factory: pytest.TempPathFactory) -> tuple[Screen, Path]:
    """A tiny screen trained once for this module, and the folder it was saved to."""
    screen = fit_screen(small_records(), SMALL)
    out = screen.save(tmp_path_factory.mktemp("models") / "screen-tiny")
    return screen, out


# --- tokenizers and routing -----------------------------------------------------------------------


def test_route_per_language() -> None:
    assert route("ja") == "mecab"
    assert [route(x) for x in ("ko", "en", "other")] == ["sp", "sp", "sp"]


def test_guess_lang_scripts() -> None:
    assert guess_lang("東京都に住んでいます") == "ja"
    assert guess_lang("서울에 살고 있습니다") == "ko"
    assert guess_lang("I live in the city and work there") == "en"


def test_featurizer_routes_japanese_to_mecab(tiny_screen: tuple[Screen, Path]) -> None:
    screen, _ = tiny_screen
    f = screen.featurizer
    text = "田中さんは病院に入院した"
    as_ja, _ = f.featurize([text], ["ja"])
    as_ko, _ = f.featurize([text], ["ko"])
    # MeCab words vs SentencePiece pieces of the same text land in different columns.
    assert set(as_ja.indices.tolist()) != set(as_ko.indices.tolist())
    words = f.tokenizers.wakati([text])[0].split()
    assert "病院" in words and "入院" in words


def test_sentencepiece_is_deterministic() -> None:
    texts = [r.text for r in small_records(5)]
    a = train_sentencepiece(texts, 500)
    assert a == train_sentencepiece(texts, 500)
    ids = Tokenizers(a).pieces(["경찰은 사기 혐의로 조사했다"])[0]
    assert ids and all(isinstance(i, int) for i in ids)


@given(st.lists(st.text(alphabet="ab 가나日本", min_size=0, max_size=12), min_size=1, max_size=6))
def test_word_keys_equal_words_equal_keys(texts: list[str]) -> None:
    wak = [" ".join(t.split()) for t in texts]
    keys, docs = word_keys(wak)
    words = [(i, w) for i, t in enumerate(wak) for w in t.split()]
    assert keys.size == len(words) and docs.tolist() == [i for i, _ in words]
    seen: dict[str, int] = {}
    for (_, w), k in zip(words, keys.tolist(), strict=True):
        assert seen.setdefault(w, k) == k
    assert len(set(seen.values())) == len(seen)


def test_bigrams_and_char_ngrams_stay_inside_documents() -> None:
    keys, docs = word_keys(["a b", "c"])
    _, bd = bigram_keys(keys, docs)
    assert bd.tolist() == [0]
    ck, cd = char_ngram_keys(["abc", "de"], (2,))
    assert cd.tolist() == [0, 0, 1] and ck.size == 3


_LEXICON_BITS = [
    "病院",
    "入院",
    "逮捕",
    "혐의",
    "입원",
    "장애",
    "arrested",
    "hospital",
    "mr",
    "\x00",
    "\n",
    " ",
    "a",
    "の",
    "가",
    "がん",
    "ADHD",
    "HIV感染",
]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.lists(st.sampled_from(_LEXICON_BITS), max_size=12).map("".join), min_size=1, max_size=6
    ),
    st.lists(st.sampled_from(["ja", "ko", "en", "other"]), min_size=6, max_size=6),
)
def test_a_texts_features_do_not_depend_on_its_batch(
    tiny_screen: tuple[Screen, Path], texts: list[str], langs: list[str]
) -> None:
    """Counts and lexicon hits of a text are the same alone or in any batch (NULs and newlines
    included): no n-gram, word or lexicon hit is attributed to a neighbour."""
    featurizer = tiny_screen[0].featurizer
    langs = langs[: len(texts)]
    counts, lex = featurizer.featurize(texts, langs)
    for i, (text, lang) in enumerate(zip(texts, langs, strict=True)):
        one, one_lex = featurizer.featurize([text], [lang])
        assert (counts[i] != one).nnz == 0
        assert np.array_equal(lex[i], one_lex[0])
    assert counts.has_canonical_format and np.all(np.diff(counts.indptr) >= 0)


# --- thresholds and the union ---------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(-3, 3), st.booleans()), min_size=2, max_size=80),
    st.sampled_from([0.8, 0.9, 0.95]),
)
def test_thresholds_reach_target_recall(
    rows: list[tuple[float, float, bool]], target: float
) -> None:
    lg = np.array([r[0] for r in rows], np.float32)
    svc = np.array([r[1] for r in rows], np.float32)
    pos = np.array([r[2] for r in rows], bool)
    if not pos.any():
        return
    for mode in ("each", "union"):
        t_l, t_s = tune_thresholds(lg, svc, pos, target, mode)
        union = (lg >= t_l) | (svc >= t_s)
        assert union[pos].mean() >= target - 1e-9
        if mode == "each":
            assert (lg >= t_l)[pos].mean() >= target - 1e-9
            assert (svc >= t_s)[pos].mean() >= target - 1e-9


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(-3, 3), st.booleans()), min_size=2, max_size=80),
    st.sampled_from([0.0, 0.05, 0.12, 0.3]),
)
def test_none_budget_thresholds_never_flag_more_negatives_than_the_budget(
    rows: list[tuple[float, float, bool]], budget: float
) -> None:
    lg = np.array([r[0] for r in rows], np.float32)
    svc = np.array([r[1] for r in rows], np.float32)
    pos = np.array([r[2] for r in rows], bool)
    t_l, t_s = thresholds_for_none_budget(lg, svc, pos, budget)
    union = (lg >= t_l) | (svc >= t_s)
    if (~pos).any():
        assert union[~pos].mean() <= budget + 1e-9
    # no candidate pair within the budget has more recall: the single best model at its own cap is a
    # candidate
    for t in (t_l, t_s):
        assert np.isfinite(t) or t == float("inf")


def test_none_budget_prefers_recall_within_the_budget() -> None:
    neg_lg = np.linspace(0.0, 0.5, 100)
    lg = np.concatenate([neg_lg, [0.45, 0.9, 0.95]])
    svc = np.concatenate([np.zeros(100), [5.0, -5.0, -5.0]])
    pos = np.arange(103) >= 100
    t_l, t_s = thresholds_for_none_budget(lg, svc, pos, 0.12)
    union = (lg >= t_l) | (svc >= t_s)
    # svc catches the one positive lgbm ranks low
    assert union[pos].all() and union[~pos].mean() <= 0.12


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1, width=32), st.floats(-3, 3, width=32), st.booleans()),
        min_size=2,
        max_size=80,
    ),
    st.sampled_from([0.5, 0.9, 0.97, 1.0]),
)
def test_fewest_none_thresholds_reach_the_target_with_no_more_negatives_than_any_grid_pair(
    rows: list[tuple[float, float, bool]], target: float
) -> None:
    lg = np.array([r[0] for r in rows], np.float32)
    svc = np.array([r[1] for r in rows], np.float32)
    pos = np.array([r[2] for r in rows], bool)
    t = thresholds_for_fewest_none(lg, svc, pos, ~pos, target, levels=11)
    if not pos.any() or pos.all():
        assert t == tune_thresholds(lg, svc, pos, target)
        return
    union = (lg >= np.float32(t[0])) | (svc >= np.float32(t[1]))
    # both models at the lowest negative score flag every negative and every positive above it; just
    # above the highest negative they flag none: some pair on the grid reaches the target whenever
    # one of these does
    assert union[pos].mean() >= target - 1e-9 or t == tune_thresholds(lg, svc, pos, target)
    if union[pos].mean() >= target - 1e-9 and t != tune_thresholds(lg, svc, pos, target):
        qs = np.linspace(0, 1, 11)
        for a in np.quantile(lg[~pos], qs):
            for b in np.quantile(svc[~pos], qs):
                f = (lg >= np.float32(a)) | (svc >= np.float32(b))
                if f[pos].mean() >= target - 1e-9:
                    assert union[~pos].mean() <= f[~pos].mean() + 1e-9


def test_fewest_none_languages_and_svc_only_languages() -> None:
    # counted as real labelled data
    recs = [replace(r, source="user") for r in small_records(25, seed=7)]
    settings = SMALL.replace(
        per_lang_thresholds=("ja", "ko"),
        target_recall=0.9,
        threshold_labels=("SCPI", "RELATED"),
        fewest_none_langs=("ko",),
        lang_svc_only=("en", "ja"),
    )
    screen = fit_screen(recs, settings)
    oof, langs = screen.oof_scores, np.array([r.lang for r in recs])
    pos = np.array([r.label != "NONE" for r in recs])
    ko = langs == "ko"
    assert screen.lang_thresholds["ko"] == dict(
        zip(
            ("lgbm", "svc"),
            thresholds_for_fewest_none(oof["lgbm"][ko], oof["svc"][ko], pos[ko], ~pos[ko], 0.9),
            strict=True,
        )
    )
    ja = langs == "ja"
    own_ja = tune_thresholds(oof["lgbm"][ja], oof["svc"][ja], pos[ja], 0.9)
    assert screen.lang_thresholds["ja"] == {"lgbm": LGBM_OFF, "svc": own_ja[1]}
    assert screen.lang_thresholds["en"] == {"lgbm": LGBM_OFF, "svc": screen.thresholds["svc"]}
    texts = [r.text for r in recs if r.lang == "en"]
    result = screen.predict(texts, ["en"] * len(texts))
    assert not result.flags["lgbm"].any() and np.array_equal(result.flag, result.flags["svc"])
    assert screen.card["train_settings"]["lang_svc_only"] == ["en", "ja"]
    assert "en, ja flagged by the SVC alone" in screen.card["threshold_rule"]
    assert "ko: the pair with the fewest real NONE" in screen.card["threshold_rule"]


def test_lang_values_parse_and_refuse_clearly() -> None:
    assert lang_values("ko=0.97, en=0.12", "--x") == (("en", 0.12), ("ko", 0.97))
    assert lang_values("", "--x") == ()
    for bad in ("ko", "ko=1.5", "=0.3", "ko=abc"):
        with pytest.raises(ValueError, match="--x: expected lang=number"):
            lang_values(bad, "--x")


def test_threshold_for_recall_is_the_highest_such_threshold() -> None:
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    pos = np.array([True, True, True, True, False])
    assert threshold_for_recall(scores, pos, 0.75) == pytest.approx(0.2)
    assert threshold_for_recall(scores, pos, 1.0) == pytest.approx(0.1)


def test_trained_thresholds_reach_target_on_validation(tiny_screen: tuple[Screen, Path]) -> None:
    """Held-out validation records: the union reaches the target recall the thresholds were tuned
    for."""
    screen, _ = tiny_screen
    held = [r for r in small_records(20, seed=7) if r.label != "NONE"]
    res = screen.predict([r.text for r in held], [r.lang for r in held])
    assert res.flag.mean() >= 0.9


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.text(min_size=0, max_size=200), min_size=1, max_size=8))
def test_union_never_flags_less_than_either_model(
    tiny_screen: tuple[Screen, Path], texts: list[str]
) -> None:
    screen, _ = tiny_screen
    res = screen.predict(texts)
    assert np.array_equal(res.flag, res.lgbm_flag | res.svc_flag)
    assert (res.flag >= res.lgbm_flag).all() and (res.flag >= res.svc_flag).all()


def test_result_shapes_and_types(tiny_screen: tuple[Screen, Path]) -> None:
    screen, _ = tiny_screen
    texts = ["김모(41)씨는 사기 혐의로 구속됐다.", "The new phone has a great camera.", ""]
    res = screen.predict(texts, ["ko", "en", "other"])
    assert isinstance(res, ScreenResult) and len(res) == 3
    assert (
        res.flag.dtype == bool
        and res.lgbm_score.dtype == np.float32
        and res.svc_score.dtype == np.float32
    )
    assert set(res.categories) == set(CATEGORIES)
    assert all(v.dtype == np.float32 and v.shape == (3,) for v in res.categories.values())
    empty = screen.predict([])
    assert len(empty) == 0
    with pytest.raises(ValueError):
        screen.predict(["a", "b"], ["en"])


# --- artifact -------------------------------------------------------------------------------------


def test_round_trip_gives_identical_predictions(tiny_screen: tuple[Screen, Path]) -> None:
    screen, path = tiny_screen
    loaded = load_screen(path)
    texts = [r.text for r in small_records(5, seed=3)]
    a, b = screen.predict(texts), loaded.predict(texts)
    for field in ("flag", "lgbm_score", "lgbm_flag", "svc_score", "svc_flag"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    for c in CATEGORIES:
        assert np.array_equal(a.categories[c], b.categories[c])
    assert loaded.version == screen.version and loaded.version.startswith("screen-tiny@")
    card = json.loads((path / "model_card.json").read_text())
    for key in (
        "spcl_version",
        "created",
        "training_records_sha256",
        "label_set",
        "positive_labels",
        "thresholds",
        "features",
        "tokenizers",
        "training_seconds",
        "files",
        "format_version",
    ):
        assert key in card, key


@pytest.mark.parametrize("victim", MODEL_FILES)
def test_corrupted_file_is_refused(
    tiny_screen: tuple[Screen, Path], tmp_path: Path, victim: str
) -> None:
    _, path = tiny_screen
    bad = tmp_path / "bad"
    shutil.copytree(path, bad)
    data = bytearray((bad / victim).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (bad / victim).write_bytes(bytes(data))
    with pytest.raises(ScreenModelError, match=victim):
        load_screen(bad)


def test_missing_or_incompatible_artifact_is_refused(
    tiny_screen: tuple[Screen, Path], tmp_path: Path
) -> None:
    _, path = tiny_screen
    with pytest.raises(ScreenModelError, match="not found"):
        load_screen(tmp_path / "nowhere")
    bad = tmp_path / "bad"
    shutil.copytree(path, bad)
    (bad / "spm.model").unlink()
    with pytest.raises(ScreenModelError, match="missing"):
        load_screen(bad)
    shutil.rmtree(bad)
    shutil.copytree(path, bad)
    card = json.loads((bad / "model_card.json").read_text())
    card["format_version"] = 99
    (bad / "model_card.json").write_text(json.dumps(card))
    with pytest.raises(ScreenModelError, match="format_version"):
        load_screen(bad)
    (bad / "model_card.json").write_text("{not json")
    with pytest.raises(ScreenModelError, match="unreadable"):
        load_screen(bad)


@pytest.mark.slow
def test_same_data_and_seed_give_byte_identical_artifact(tmp_path: Path) -> None:
    """Every model file is identical; the card differs only in ``created`` and
    ``training_seconds``."""
    recs = small_records(15)
    a = fit_screen(recs, SMALL).save(tmp_path / "a" / "screen")
    b = fit_screen(recs, SMALL).save(tmp_path / "b" / "screen")
    for name in MODEL_FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ca, cb = (json.loads((p / "model_card.json").read_text()) for p in (a, b))
    for card in (ca, cb):
        card.pop("created")
        card.pop("training_seconds")
    assert ca == cb


def test_near_duplicates_share_a_group() -> None:
    texts = [
        "경찰은 사기 혐의로 김모씨를 구속했다.",
        "경찰은 사기 혐의로 김모씨를 구속했다!",
        "전혀 다른 문장입니다.",
    ]
    g = near_duplicate_groups(texts)
    assert g[0] == g[1] != g[2]


def test_synthetic_corpus_is_seeded() -> None:
    a, b = generate(5, seed=4), generate(5, seed=4)
    assert a == b and a != generate(5, seed=5)
    assert {r["lang"] for r in a} == {"ja", "ko", "en"}
    assert {r["label"] for r in a} == {"SCPI", "RELATED", "NONE"}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.text(alphabet=st.characters(codec=None, categories=None), max_size=60),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from(["ja", "ko", "en", "other"]),
)
def test_any_unicode_scores_without_error(
    tiny_screen: tuple[Screen, Path], texts: list[str], lang: str
) -> None:
    """Lone surrogates, control characters, emoji: one odd record never fails the batch."""
    screen, _ = tiny_screen
    res = screen.predict([*texts, "a\ud800b"], [lang] * (len(texts) + 1))
    assert len(res) == len(texts) + 1 and np.isfinite(res.svc_score).all()


def test_bad_training_rows_name_the_line_not_the_text(tmp_path: Path) -> None:
    from spcl.screen.train import read_records

    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"id": "a", "text": "secret 010-1234-5678", "label": "MAYBE"}\n', encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"bad.jsonl:1: label 'MAYBE'") as err:
        read_records([path])
    assert "secret" not in str(err.value)


# --- per-language thresholds and the positives warning --------------------------------------------


def test_per_language_thresholds_apply_only_to_their_language(
    tiny_screen: tuple[Screen, Path], tmp_path: Path
) -> None:
    screen, _ = tiny_screen
    recs = small_records(5, seed=4)
    texts, langs = [r.text for r in recs], [r.lang for r in recs]
    before = screen.predict(texts, langs)
    strict = Screen(
        settings=screen.settings,
        sp_model=screen.sp_model,
        lexicon=screen.lexicon,
        arrays=screen.arrays,
        lgbm_model=screen.lgbm_model,
        thresholds=screen.thresholds,
        lang_thresholds={"ja": {"lgbm": 2.0, "svc": 1e9}},
        card=screen.card,
    )
    after = strict.predict(texts, langs)
    ja = np.array(langs) == "ja"
    assert before.flag[ja].any() and not after.flag[ja].any()
    assert np.array_equal(before.flag[~ja], after.flag[~ja])
    # guessed languages pick the same thresholds
    assert np.array_equal(strict.predict(texts).flag, after.flag)
    path = strict.save(tmp_path / "screen-lang")
    card = json.loads((path / "model_card.json").read_text())
    assert card["format_version"] == 2 and card["lang_thresholds"]["ja"]["lgbm"] == 2.0
    assert np.array_equal(load_screen(path).predict(texts, langs).flag, after.flag)
    plain = screen.save(tmp_path / "screen-plain")
    assert json.loads((plain / "model_card.json").read_text())["format_version"] == 1


def test_fit_screen_gives_own_thresholds_only_to_languages_with_enough_positives() -> None:
    recs = [
        r
        for r in small_records(25, seed=5)
        if r.lang != "en" or r.label == "NONE" or r.id.endswith("1")
    ]
    en_pos = sum(r.lang == "en" and r.label != "NONE" for r in recs)
    assert 0 < en_pos < min_positives(0.9)
    screen = fit_screen(
        recs,
        SMALL.replace(
            per_lang_thresholds=("en", "ja"),
            target_recall=0.9,
            threshold_labels=("SCPI", "RELATED"),
        ),
    )
    assert set(screen.lang_thresholds) == {"ja"}  # ko was not asked for, en has too few positives
    oof, langs = screen.oof_scores, np.array([r.lang for r in recs])
    pos = np.array([r.label != "NONE" for r in recs])
    ja = langs == "ja"
    assert screen.lang_thresholds["ja"] == dict(
        zip(
            ("lgbm", "svc"),
            tune_thresholds(oof["lgbm"][ja], oof["svc"][ja], pos[ja], 0.9),
            strict=True,
        )
    )
    assert (screen.thresholds["lgbm"], screen.thresholds["svc"]) == tune_thresholds(
        oof["lgbm"], oof["svc"], pos, 0.9
    )


def test_global_thresholds_can_be_tuned_on_some_languages_only() -> None:
    recs = small_records(20, seed=6)
    settings = SMALL.replace(
        global_threshold_langs=("ko",), target_recall=0.9, threshold_labels=("SCPI", "RELATED")
    )
    screen = fit_screen(recs, settings)
    oof, ko = screen.oof_scores, np.array([r.lang == "ko" for r in recs])
    pos = np.array([r.label != "NONE" for r in recs])
    assert (screen.thresholds["lgbm"], screen.thresholds["svc"]) == tune_thresholds(
        oof["lgbm"][ko], oof["svc"][ko], pos[ko], 0.9
    )
    assert screen.lang_thresholds == {}


def test_languages_get_own_recall_targets_and_none_budgets() -> None:
    # counted as real labelled data
    recs = [replace(r, source="user") for r in small_records(25, seed=7)]
    settings = SMALL.replace(
        per_lang_thresholds=("ja", "ko"),
        target_recall=0.9,
        threshold_labels=("SCPI", "RELATED"),
        lang_target_recall=(("ko", 0.8),),
        lang_none_budget=(("en", 0.1),),
    )
    screen = fit_screen(recs, settings)
    oof, langs = screen.oof_scores, np.array([r.lang for r in recs])
    pos = np.array([r.label != "NONE" for r in recs])
    for lang, target in (("ja", 0.9), ("ko", 0.8)):
        m = langs == lang
        assert screen.lang_thresholds[lang] == dict(
            zip(
                ("lgbm", "svc"),
                tune_thresholds(oof["lgbm"][m], oof["svc"][m], pos[m], target),
                strict=True,
            )
        )
    en = langs == "en"
    t = screen.lang_thresholds["en"]
    assert ((oof["lgbm"][en] >= t["lgbm"]) | (oof["svc"][en] >= t["svc"]))[~pos[en]].mean() <= 0.1
    assert screen.card["train_settings"]["lang_none_budget"] == {"en": 0.1}


def test_min_positives_and_too_few_positives_warning() -> None:
    assert [min_positives(t) for t in (0.96, 0.95, 0.9, 0.5)] == [50, 40, 20, 20]
    real = [
        Record(id=str(i), text="x", lang="ja" if i < 30 else "ko", label="SCPI", source="user")
        for i in range(45)
    ]
    assert too_few_positives(real, SMALL.replace(target_recall=0.95)) == []
    (warning,) = too_few_positives(real, SMALL.replace(target_recall=0.96))
    assert "only 45 real SCPI documents" in warning and "at least 50" in warning
    per_lang = too_few_positives(
        real, SMALL.replace(target_recall=0.95, per_lang_thresholds=("ja", "ko"))
    )
    assert per_lang == [
        "per-language thresholds: ja has 30, ko has 15 real SCPI documents (< 40); those "
        "languages use the global thresholds"
    ]
    synthetic = [replace(r, source="synth:x") for r in real]
    assert "only 0 real" in too_few_positives(synthetic, SMALL.replace(target_recall=0.95))[0]
