"""Trainers' settings (``spcl.config_models.TrainerSettings``): pydantic models of the one config
system, frozen, validated with errors that name the key and never the value, and written into model
cards exactly as the dataclasses they replaced wrote them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from spcl.config_models import ConfigError, job_config
from spcl.finetune.config import TrainConfig
from spcl.screen.features import FeatureSettings
from spcl.screen.train_data import TrainSettings

SECRET = "s3cr3t-value-4471"
ROOT = Path(__file__).resolve().parents[2]


def test_a_bad_value_names_the_key_not_the_value() -> None:
    with pytest.raises(ConfigError) as err:
        FeatureSettings(mecab_dic=SECRET)
    assert "mecab_dic: " in str(err.value) and SECRET not in str(err.value)
    with pytest.raises(ConfigError) as err:
        TrainConfig(data="d", base="b", out="o", epochs=0, device=1)
    assert "epochs" in str(err.value) and "device" in str(err.value)


def test_a_nested_settings_error_names_the_dotted_key_once() -> None:
    with pytest.raises(ConfigError) as err:
        TrainSettings(features={"mecab_dic": SECRET, "nope": 1})
    text = str(err.value)
    assert text.splitlines() == [
        "invalid configuration in the TrainSettings:",
        "  features.mecab_dic: Value error, must be one of unidic-lite, ipadic, none, chars",
        "  features.nope: unknown key",
    ]
    with pytest.raises(ConfigError) as err:
        job_config(TrainSettings, cli={"threshold_split": SECRET, "features": {"bits": SECRET}})
    assert {k for k, _ in err.value.keys} == {
        "threshold_split",
        "features.bits",
    } and SECRET not in str(err.value)


def test_frozen_and_replace_validates() -> None:
    settings = TrainSettings()
    with pytest.raises(ValidationError):
        settings.seed = 3
    changed = settings.replace(seed=3, features=settings.features.replace(person_cues=True))
    assert (changed.seed, changed.features.person_cues, settings.seed) == (3, True, 0)
    with pytest.raises(ConfigError, match="threshold_mode"):
        settings.replace(threshold_mode="both")


def test_model_card_forms_are_unchanged() -> None:
    text = json.dumps(TrainSettings().to_json())
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == "1348113ea2f1a93a"
    card = json.loads(
        (ROOT / "models" / "screen-default" / "model_card.json").read_text(encoding="utf-8")
    )
    assert FeatureSettings.from_json(card["features"]).to_json() == card["features"]
    hp = TrainConfig(data="d", base="b", out="o").hyper_parameters()
    assert hp == {
        "full": False,
        "lora_rank": 16,
        "lora_dropout": 0.05,
        "target_modules": "all-linear",
        "epochs": 1,
        "max_steps": 0,
        "batch_size": 1,
        "grad_accum": 8,
        "weight_decay": 0.0,
        "warmup_steps": 0,
        "max_grad_norm": 1.0,
        "max_length": 2048,
        "seed": 0,
        "dtype": "auto",
        "lora_alpha": 32,
        "lr": 2e-4,
    }
