"""The shipped default screen model, ``spcl train`` end to end, and the threshold notebook."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from spcl.io.jsonl import write_jsonl
from spcl.screen import Screen, load_screen
from spcl.screen.artifact import MODEL_FILES
from spcl.screen.train import LGBM_OFF
from spcl.synth.screen_data import generate

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "models" / "screen-default"

SENSITIVE = [
    ("ko", "서울중앙지법은 사기 혐의로 구속 기소된 김모(52)씨에게 징역 3년을 선고했다."),
    ("ko", "경찰은 마약 투약 혐의로 가수 박모(31)씨를 체포해 조사하고 있다."),
    ("ja", "山田太郎容疑者は詐欺の疑いで警視庁に逮捕された。"),
    ("ja", "佐藤選手は右膝の靭帯を損傷し、手術を受けた。"),
    ("en", "My mother was diagnosed with breast cancer and is in hospital."),
    ("en", "John Smith was arrested on suspicion of fraud and charged by prosecutors."),
]
PLAIN = [
    ("ko", "이번 주말에는 가족과 함께 한강 공원에서 자전거를 탔다."),
    ("ko", "새 스마트폰은 화면이 커지고 배터리가 오래간다."),
    ("ja", "新しい駅ビルには百貨店と映画館が入る予定だ。"),
    ("ja", "このレシピでは砂糖を控えめにしている。"),
    ("en", "The new phone has a bigger screen and a faster chip."),
    ("en", "We walked around the park on Sunday and stopped for coffee."),
]


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    write_jsonl(path, records, sort_keys=True)
    return path


@pytest.fixture(scope="module")
def default_screen() -> Screen:
    """The shipped model (skips when the artifact folder is absent, e.g. in a partial checkout)."""
    if not (DEFAULT / "model_card.json").exists():
        pytest.skip("models/screen-default not built")
    return load_screen(DEFAULT)


def test_default_model_card_is_complete(default_screen: Screen) -> None:
    card = default_screen.card
    assert (
        default_screen.version.startswith("screen-default@") and len(default_screen.version) == 27
    )
    assert card["positive_labels"] == ["SCPI", "RELATED"]
    assert set(card["thresholds"]) == {"lgbm", "svc"}
    assert card["training_data"] and all(len(d["sha256"]) == 64 for d in card["training_data"])
    assert set(card["lang_thresholds"]) == {"en", "ja", "ko"} and card["format_version"] == 2
    # English by the SVC alone (--lang-svc-only en) at the global SVC threshold
    assert card["lang_thresholds"]["en"] == {"lgbm": LGBM_OFF, "svc": card["thresholds"]["svc"]}
    assert card["train_settings"]["weak_weight"] == 0.5 and card["train_settings"][
        "lang_svc_only"
    ] == ["en"]
    # Japanese as character uni/bigrams: loading the shipped model opens no MeCab (issue 26)
    assert (
        default_screen.settings.mecab_dic == "chars"
        and default_screen.featurizer.tokenizers.mecab is None
    )
    assert card["train_settings"]["global_threshold_langs"] == ["ko"]
    # issue 23: Japanese at the fewest-NONE pair reaching 0.96 out-of-fold (the union at 0.94 sat at
    # the edge)
    assert card["train_settings"]["lang_target_recall"] == {"ja": 0.96, "ko": 0.97}
    assert (
        card["train_settings"]["fewest_none_langs"] == ["ja"]
        and card["train_settings"]["svc_nb_alpha"] == 0.0
    )
    assert "--fewest-none-langs ja" in card["rebuild"] and "ja=0.96" in card["rebuild"]
    held_out = card["evaluation"]["held_out_quarter"]["per_lang_thresholds"]
    assert held_out["overall"]["n"] > 0 and {"en", "ja", "ko"} <= set(held_out)
    assert set(card["evaluation"]["ordinary_text_flag_rate"]["this_model"]) == {"en", "ja", "ko"}
    size = sum((DEFAULT / f).stat().st_size for f in MODEL_FILES)
    assert size < 10 * 1024 * 1024


def test_default_model_flags_planted_sensitive_and_keeps_plain_clean(
    default_screen: Screen,
) -> None:
    sens = default_screen.predict([t for _, t in SENSITIVE], [lang for lang, _ in SENSITIVE])
    plain = default_screen.predict([t for _, t in PLAIN], [lang for lang, _ in PLAIN])
    assert sens.flag.all(), sens.flag
    assert not plain.flag.any(), plain.flag
    crime = default_screen.predict([SENSITIVE[0][1]], ["ko"]).categories
    assert crime["CRIME"][0] > crime["DISABILITY"][0]


def test_default_model_guesses_languages(default_screen: Screen) -> None:
    with_langs = default_screen.predict([t for _, t in SENSITIVE], [lang for lang, _ in SENSITIVE])
    guessed = default_screen.predict([t for _, t in SENSITIVE])
    assert np.array_equal(with_langs.flag, guessed.flag)


@pytest.mark.slow
def test_train_command_writes_a_loadable_artifact(tmp_path: Path) -> None:
    from spcl.cli import main

    data = _jsonl(tmp_path / "train.jsonl", generate(15, seed=2))
    out = tmp_path / "models" / "screen-cli"
    assert (
        main(["train", "--data", str(data), "--output", str(out), "--cv-folds", "0", "--seed", "1"])
        == 0
    )
    screen = load_screen(out)
    card = json.loads((out / "model_card.json").read_text())
    assert card["rebuild"].startswith("spcl train --data ")
    assert screen.predict(["경찰은 사기 혐의로 김모씨를 구속했다."]).flag.dtype == bool


@pytest.mark.slow
def test_threshold_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The threshold notebook runs on a model with cross-validation files: the shipped one when it
    has them (a rebuild with --cv-folds), else a small one trained here with 2 folds, so the
    notebook never goes untested."""
    import nbclient
    import nbformat

    from spcl.cli import main

    model = DEFAULT
    if not (DEFAULT / "cv_predictions.csv").exists():
        model = tmp_path / "screen-cv"
        # scored in CV, as real data
        labelled = [{**r, "source": "test-labelled"} for r in generate(15, seed=3)]
        data = _jsonl(tmp_path / "train.jsonl", labelled)
        assert (
            main(
                [
                    "train",
                    "--data",
                    str(data),
                    "--output",
                    str(model),
                    "--cv-folds",
                    "2",
                    "--seed",
                    "1",
                ]
            )
            == 0
        )
        assert (model / "cv_predictions.csv").exists()
    monkeypatch.setenv("SPCL_NOTEBOOK_MODEL", str(model))
    nb = nbformat.read(ROOT / "notebooks" / "screen_thresholds.ipynb", as_version=4)
    nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT / "notebooks")}},
    ).execute()
    outputs = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "thresholds" in outputs


def test_spark_submit_entry_validates_arguments() -> None:
    import runpy

    module = runpy.run_path(str(ROOT / "jobs" / "train.py"), run_name="jobs_train")
    with pytest.raises(SystemExit):
        module["main"](["--output", "models/x"])  # --data is required


@pytest.mark.slow
def test_filter_job_with_default_model_flags_sensitive_and_keeps_plain(tmp_path: Path) -> None:
    """The plain-Python filter engine with the shipped screen: planted topics flagged, plain text
    clean."""
    if not (DEFAULT / "model_card.json").exists():
        pytest.skip("models/screen-default not built")
    from spcl.cli import main as cli_main
    from spcl.io.outputs import output_dataset

    folder = tmp_path / "crawl"
    folder.mkdir()
    docs = [{"id": f"s{i}", "text": t} for i, (_, t) in enumerate(SENSITIVE)]
    docs += [{"id": f"p{i}", "text": t} for i, (_, t) in enumerate(PLAIN)]
    (folder / "docs.jsonl").write_text(
        "\n".join(json.dumps(d, ensure_ascii=False) for d in docs) + "\n"
    )
    out = tmp_path / "out"
    assert cli_main(["filter", "-i", str(folder), "-o", str(out), "--engine", "python"]) == 0
    rows = {r["id"]: r for r in output_dataset(out).to_table().to_pylist()}
    for i in range(len(SENSITIVE)):
        assert rows[f"s{i}"]["decision"] == "flagged", i
        assert any(str(x).startswith("screen:") for x in rows[f"s{i}"]["reasons"]), i
        assert str(rows[f"s{i}"]["model_version"]).startswith("screen-default@")
    for i in range(len(PLAIN)):
        assert rows[f"p{i}"]["decision"] == "clean", i


def test_model_card_cites_the_manifest_of_its_training_data(tmp_path: Path) -> None:
    from spcl.cli import main
    from spcl.manifest import sha256_file, write_manifest

    folder = tmp_path / "train-extra"
    folder.mkdir()
    data = _jsonl(folder / "train.jsonl", generate(15, seed=3))
    write_manifest(folder, kind="training-set", licence="CC0-1.0")
    out = tmp_path / "models" / "cited"
    assert main(["train", "--data", str(data), "--output", str(out), "--cv-folds", "0"]) == 0
    (source,) = json.loads((out / "model_card.json").read_text())["training_data"]
    assert source["sha256"] == sha256_file(data)
    assert source["manifest"]["manifest_sha256"] == sha256_file(folder / "manifest.json")
    assert (
        source["manifest"]["kind"] == "training-set" and source["manifest"]["licence"] == "CC0-1.0"
    )


def test_train_command_warns_on_few_positives_and_shows_progress_from_the_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from spcl.cli import main

    # real (not synthetic): 36 SCPI documents
    rows = [{**r, "source": "user"} for r in generate(12, seed=4)]
    data = _jsonl(tmp_path / "mine.jsonl", rows)
    monkeypatch.setenv("SPCL_PROGRESS", "1")
    out = tmp_path / "models" / "mine"
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
                "--target-recall",
                "0.96",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert (
        "warning: only 36 real SCPI documents for target recall 0.96 (at least 50 advised)" in err
    )
    # warned, then the bar drawn before any fit
    assert err.index("warning:") < err.index("\rtrain  0/")
    assert "docs fitted" in err and "100%" in err
    card = json.loads((out / "model_card.json").read_text())
    assert card["training_warnings"] and "36 real SCPI" in card["training_warnings"][0]
    for row in rows:
        assert row["text"][:10] not in err


def test_train_command_names_a_missing_data_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spcl.cli import main

    missing = tmp_path / "shared" / "labelled.jsonl"
    assert main(["train", "--data", str(missing), "--output", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert f"data file not found: {missing}" in err and "data/scpi-real-v1/labelled.jsonl" in err
    # the example it repeats trains on files that ship with a clone
    example = err.split("a quick example on them: ", 1)[1].rstrip(")\n")
    data = re.findall(r"--data (\S+)", example)
    assert data and all((ROOT / d).is_file() for d in data) and "../shared" not in example
