"""The English person-name CRF (spcl.extract.names.en_crf), the one default finder and its
manifest entry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from spcl.extract.names import (
    NamesFinderMissing,
    check_finder,
    en_crf,
    find_person_names,
    finder_info,
    tagger,
)
from spcl.extract.names.ner import ner_enabled

MODELS = Path(__file__).resolve().parents[2] / "models" / "names-crf"


@pytest.fixture(autouse=True)
def _default_finder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPCL_NAMES_NER", raising=False)
    monkeypatch.delenv("SPCL_NAMES_TAGGER", raising=False)


def _found(text: str) -> list[str]:
    return [text[s:e] for s, e in find_person_names(text, "en")]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I met Priya Raman at the conference yesterday.", "Priya Raman"),
        ("Aisha Mensah said the shipment would arrive late.", "Aisha Mensah"),
        ("Please forward the invoice to Wei Zhang before Friday.", "Wei Zhang"),
        ("Our new tenant, Oluwaseun Adeyemi, moves in next week.", "Oluwaseun Adeyemi"),
    ],
)
def test_names_of_many_cultures_in_plain_prose(text: str, name: str) -> None:
    """No title, no cue, no English given name: the old rule finder left each of these in clear."""
    assert name in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "The Apple store in Boston was busy on Saturday morning.",
        "Empire State Building = ESB. Pretty bad storm here last evening.",
        "Download the latest Windows update from Microsoft before Monday.",
    ],
)
def test_no_name_in_person_free_text(text: str) -> None:
    assert _found(text) == []


def test_possessive_stays_outside_the_span() -> None:
    text = "We stayed at Priya Raman's house in Leeds."
    assert _found(text) == ["Priya Raman"]


def test_statistical_ner_is_opt_in() -> None:
    """Unset, the NER models stay off whatever is installed: one default finder under every
    install."""
    assert not ner_enabled()


def test_finder_info_names_the_finder_and_its_version() -> None:
    info = finder_info()
    assert info["finder"] == "names-crf"
    assert (
        info["version"]
        == __import__("json").loads((MODELS / "model_card.json").read_text())["version"]
    )
    assert info["languages"] == ["en", "ja", "ko"] and info["ner"] is False
    assert set(info["models"]) >= {"en", "ja", "ko"}  # type: ignore[arg-type]


def test_missing_model_is_an_error_not_a_silent_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ja.crfsuite", "ko.crfsuite", "ko.gazetteer.json", "model_card.json"):
        shutil.copyfile(MODELS / name, tmp_path / name)  # no en.crfsuite
    monkeypatch.setattr(tagger, "MODEL_DIR", tmp_path)
    for cached in (tagger._model, en_crf._model, tagger.threshold):
        cached.cache_clear()
    try:
        with pytest.raises(NamesFinderMissing, match="cannot run for en"):
            check_finder()
        monkeypatch.setenv("SPCL_NAMES_TAGGER", "off")
        check_finder()  # the rule finders alone, asked for by name: no error
    finally:
        for cached in (tagger._model, en_crf._model, tagger.threshold):
            cached.cache_clear()


def test_ner_on_without_its_model_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from spcl.extract.names import ner

    monkeypatch.setenv("SPCL_NAMES_NER", "on")
    monkeypatch.setattr(ner, "en_model", lambda: None)
    with pytest.raises(NamesFinderMissing, match="spcl\\[names\\]"):
        check_finder()


def _mask_job(tmp_path: Path, text: str) -> dict[str, object]:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from spcl.mask_stage import MaskJobConfig, run_mask_job

    (tmp_path / "in").mkdir()
    pq.write_table(
        pa.table({"id": ["a"], "text": [text], "lang": ["en"]}), tmp_path / "in" / "p.parquet"
    )
    metrics = run_mask_job(
        MaskJobConfig(str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "v"))
    )
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    return {
        "metrics": metrics,
        "manifest": manifest,
        "masked": pq.read_table(next((tmp_path / "out" / "masked").glob("*.parquet"))).to_pylist(),
    }


@pytest.fixture
def vault_key(monkeypatch: pytest.MonkeyPatch) -> None:
    import base64

    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(bytes(range(32))).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)


@pytest.mark.usefixtures("vault_key")
def test_mask_job_records_the_finder_and_masks_the_name(tmp_path: Path) -> None:
    out = _mask_job(tmp_path, "Aisha Mensah said the shipment would arrive late.")
    for doc in (out["metrics"], out["manifest"]):
        finder = doc["names_finder"]  # type: ignore[index]
        assert finder["finder"] == "names-crf" and finder["version"] and finder["ner"] is False
    assert "Aisha Mensah" not in out["masked"][0]["masked_text"]  # type: ignore[index]


@pytest.mark.usefixtures("vault_key")
def test_mask_job_stops_when_the_configured_finder_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spcl.extract.names import ner
    from spcl.mask_stage import MaskJobError

    monkeypatch.setenv("SPCL_NAMES_NER", "on")
    monkeypatch.setattr(ner, "en_model", lambda: None)
    with pytest.raises(MaskJobError, match="NER model is missing"):
        _mask_job(tmp_path, "Aisha Mensah said the shipment would arrive late.")


def test_name_lists_allow_and_deny(tmp_path: Path) -> None:
    from spcl.mask_stage.candidates import collect_candidates

    text = "Taylor Swift met Aisha Mensah; kim minji was there too."
    cands = collect_candidates(
        text,
        [("PERSON", "Taylor Swift")],
        [],
        ("PERSON",),
        True,
        "en",
        allow_names=("taylor swift",),
        deny_names=("Kim Minji",),
    )
    values = {v for t, v in cands.union() if t == "PERSON"}
    assert "Taylor Swift" not in values and "Aisha Mensah" in values and "kim minji" in values


def test_name_lists_config_is_validated(tmp_path: Path) -> None:
    from spcl.mask_stage.name_lists import NameListError, load_name_lists

    good = tmp_path / "ok.yaml"
    good.write_text("names:\n  allow: [Apple, ' Apple ']\n  deny: [Kim Minji]\n", encoding="utf-8")
    assert load_name_lists(good) == (("Apple",), ("Kim Minji",))
    for body, message in (
        ("names:\n  allow: Apple\n", "must be a list"),
        ("names:\n  alow: [Apple]\n", "unknown key"),
        ("names:\n  deny: [3]\n", "non-empty string"),
        ("allow: [Apple]\n", "top-level mapping"),
    ):
        bad = tmp_path / "bad.yaml"
        bad.write_text(body, encoding="utf-8")
        with pytest.raises(NameListError, match=message):
            load_name_lists(bad)
    assert load_name_lists(MODELS.parent.parent / "conf" / "names.example.yaml")[0] == (
        "Apple",
        "Taylor Swift",
    )


@pytest.mark.usefixtures("vault_key")
def test_cli_name_lists_reach_the_masked_text_and_the_manifest(tmp_path: Path) -> None:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from spcl.cli import main

    (tmp_path / "in").mkdir()
    text = "Aisha Mensah thanked Apple and Kim Minji."
    pq.write_table(
        pa.table({"id": ["a"], "text": [text], "lang": ["en"]}), tmp_path / "in" / "p.parquet"
    )
    conf = tmp_path / "names.yaml"
    conf.write_text("names:\n  deny: [Kim Minji]\n", encoding="utf-8")
    rc = main(
        [
            "mask",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "out"),
            "--vault",
            str(tmp_path / "v"),
            "--allow-name",
            "Aisha Mensah",
            "--names-config",
            str(conf),
        ]
    )
    assert rc == 0
    masked = pq.read_table(next((tmp_path / "out" / "masked").glob("*.parquet"))).to_pylist()[0][
        "masked_text"
    ]
    assert masked.startswith("Aisha Mensah thanked") and "Kim Minji" not in masked
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["name_lists"]["allow"] == 1 and manifest["name_lists"]["deny"] == 1
    assert "Kim Minji" not in (tmp_path / "out" / "manifest.json").read_text()
    assert (
        main(
            [
                "mask",
                "--input",
                str(tmp_path / "in"),
                "--output",
                str(tmp_path / "o2"),
                "--vault",
                str(tmp_path / "v2"),
                "--allow-name",
                "Kim Minji",
                "--deny-name",
                "kim minji",
            ]
        )
        == 2
    )


def test_retraining_ja_ko_keeps_the_english_card_entries(tmp_path: Path) -> None:
    import json

    from spcl.extract.names.train import _keep_other_languages

    (tmp_path / "model_card.json").write_text(
        json.dumps(
            {
                "thresholds": {"ja": 0.9, "en": 0.5},
                "files": {"en": {"file": "en.crfsuite"}},
                "data_en": {"x": 1},
            }
        )
    )
    card = {"thresholds": {"ja": 0.8}, "files": {"ja": {"file": "ja.crfsuite"}}}
    _keep_other_languages(tmp_path / "model_card.json", card, ("ja", "ko"))
    assert card["thresholds"] == {"ja": 0.8, "en": 0.5} and set(card["files"]) == {"ja", "en"}
    assert card["data_en"] == {"x": 1}
