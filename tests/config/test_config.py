from __future__ import annotations

from pathlib import Path

import pytest

from spcl.config import ConfigError, Settings, load_settings


def test_default_conf_matches_the_code_defaults(root: Path) -> None:
    assert load_settings(root / "conf" / "default.yaml") == Settings()


def test_unknown_key_is_named(tmp_path: Path) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text("policy:\n  PHONEE: flag\n")
    with pytest.raises(ConfigError, match=r"policy\.PHONEE: unknown key"):
        load_settings(conf)


def test_bad_value_is_named(tmp_path: Path) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text("policy:\n  EMAIL: maybe\nspark:\n  batch_rows: 0\n")
    with pytest.raises(ConfigError) as err:
        load_settings(conf)
    assert "policy.EMAIL" in str(err.value) and "spark.batch_rows" in str(err.value)


def test_unknown_pii_type_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"detect\.types"):
        load_settings(overrides={"detect.types": ["PHONE", "NINO"]})


def test_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("input: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_settings(bad)


def test_config_hash_changes_with_settings() -> None:
    assert load_settings().config_hash() == load_settings().config_hash()
    assert (
        load_settings().config_hash()
        != load_settings(overrides={"policy.PHONE": "count"}).config_hash()
    )
