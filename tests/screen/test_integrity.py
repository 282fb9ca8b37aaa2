"""The screen's integrity hash covers the card's thresholds and settings, not only the model
files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spcl.filter.batch import model_identity
from spcl.screen import ScreenModelError, load_screen
from spcl.screen.artifact import DECISION_FIELDS, MODEL_FILES, model_digest, read_artifact

DEFAULT = Path(__file__).resolve().parents[2] / "models" / "screen-default"


def _copy(tmp_path: Path, name: str = "screen-copy") -> Path:
    if not (DEFAULT / "model_card.json").exists():
        pytest.skip("models/screen-default not built")
    out = tmp_path / name
    shutil.copytree(DEFAULT, out)
    return out


def _edit(path: Path, change: dict) -> dict:
    card = json.loads((path / "model_card.json").read_text())
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(card.get(key), dict):
            card[key] = {**card[key], **value}
        else:
            card[key] = value
    (path / "model_card.json").write_text(json.dumps(card))
    return card


def test_raising_a_threshold_without_rehashing_fails_loading(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = load_screen(path).version
    card = _edit(path, {"thresholds": {"svc": 9.0}})
    with pytest.raises(ScreenModelError, match="model_sha256"):
        load_screen(path)
    with pytest.raises(ScreenModelError, match="model_sha256"):
        read_artifact(path)  # the driver's validation refuses it too
    # re-hashing makes it load again, under another version string: an edit is never silent
    files = {f: (path / f).read_bytes() for f in MODEL_FILES}
    card["model_sha256"] = model_digest(files, card)
    (path / "model_card.json").write_text(json.dumps(card))
    after = load_screen(path)
    assert after.thresholds["svc"] == 9.0 and after.version != before
    assert model_identity(str(path))["model_version"] == after.version


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_per_language_threshold_edit_fails_loading(tmp_path: Path, lang: str) -> None:
    path = _copy(tmp_path)
    card = json.loads((path / "model_card.json").read_text())
    card["lang_thresholds"][lang]["lgbm"] = 2.0
    card["lang_thresholds"][lang]["svc"] = 50.0
    (path / "model_card.json").write_text(json.dumps(card))
    with pytest.raises(ScreenModelError, match="model_sha256"):
        load_screen(path)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    field=st.sampled_from([f for f in DECISION_FIELDS if f != "format_version"]),
    junk=st.one_of(st.integers(-5, 5), st.text(max_size=5), st.none()),
)
def test_any_decision_field_edit_fails_loading(tmp_path: Path, field: str, junk: object) -> None:
    path = _copy(tmp_path, f"c-{abs(hash((field, repr(junk)))) % 10**9}")
    card = json.loads((path / "model_card.json").read_text())
    if card.get(field) == junk:
        return
    card[field] = junk
    (path / "model_card.json").write_text(json.dumps(card))
    with pytest.raises(ScreenModelError):
        load_screen(path)


def test_non_decision_card_fields_may_change(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    version = load_screen(path).version
    _edit(path, {"created": "2000-01-01T00:00:00Z", "training_seconds": 1.0})
    assert load_screen(path).version == version


def test_saved_screen_round_trips_its_digest(tmp_path: Path) -> None:
    screen = load_screen(_copy(tmp_path))
    out = screen.save(tmp_path / "resaved")
    card = json.loads((out / "model_card.json").read_text())
    assert load_screen(out).version == f"resaved@{card['model_sha256'][:12]}"
    assert (
        card["model_sha256"]
        == json.loads((DEFAULT / "model_card.json").read_text())["model_sha256"]
    )
