"""``spcl.config_models.job_config``: defaults ← YAML section ← CLI flags, one validation path
for every job."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.annotate.config import AnnotateConfig
from spcl.annotate.teachers import TeacherSpec
from spcl.config import GeneralizeSection, GeneralizeSettings, load_settings
from spcl.config_models import ConfigError, job_config
from spcl.generalize.config import GeneralizeJobConfig
from spcl.mask_stage.config import MaskJobConfig

TEACHERS = [
    TeacherSpec(name="a", backend="rules", model=None, endpoint=None),
    TeacherSpec(name="b", backend="rules", model=None, endpoint=None),
]


@settings(max_examples=60, deadline=None)
@given(yaml=st.one_of(st.none(), st.integers(1, 20)), cli=st.one_of(st.none(), st.integers(1, 20)))
def test_cli_over_yaml_over_defaults(yaml: int | None, cli: int | None) -> None:
    section = {} if yaml is None else {"guesses": yaml}
    got = job_config(GeneralizeSection, yaml_section=section, cli={"guesses": cli}).guesses
    assert got == (
        cli if cli is not None else yaml if yaml is not None else GeneralizeSection().guesses
    )


def test_yaml_section_of_the_conf_file_then_flags(tmp_path: Path) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text("generalize:\n  candidates: 7\n  seed: 3\n", encoding="utf-8")
    got = job_config(
        GeneralizeSection, yaml_section=load_settings(conf).generalize, cli={"seed": 9}
    )
    assert (got.candidates, got.seed, got.guesses) == (7, 9, 5)


def test_a_bad_flag_names_the_key_not_the_value() -> None:
    with pytest.raises(ConfigError) as err:
        job_config(GeneralizeSection, cli={"candidates": 987654})
    assert "candidates" in str(err.value) and "987654" not in str(err.value)
    with pytest.raises(ConfigError, match="settings"):
        GeneralizeJobConfig("i", "o", "v", settings={"guesses": 0})


def test_generalize_command_reads_conf_then_flags(tmp_path: Path) -> None:
    from spcl.commands.generalize import add_generalize_arguments, config_from_args

    conf = tmp_path / "c.yaml"
    conf.write_text("generalize:\n  candidates: 7\n  guesses: 2\n", encoding="utf-8")
    parser = argparse.ArgumentParser()
    add_generalize_arguments(parser)
    args = parser.parse_args(
        ["-i", "in", "-o", "out", "--vault", "v", "--conf", str(conf), "--guesses", "4"]
    )
    cfg = config_from_args(args)
    assert isinstance(cfg, GeneralizeJobConfig)
    assert (cfg.settings["candidates"], cfg.settings["guesses"]) == (7, 4)


def test_engine_settings_are_the_section_plus_the_cache() -> None:
    assert set(GeneralizeSettings.model_fields) - set(GeneralizeSection.model_fields) == {
        "cache_size"
    }
    assert (
        GeneralizeSettings().model_dump(exclude={"cache_size"}) == GeneralizeSection().model_dump()
    )


def test_positional_paths_and_json_round_trip() -> None:
    cfg = MaskJobConfig("in", "out", "vault", types=("PHONE",))
    assert (cfg.input, cfg.output, cfg.vault, cfg.types) == ("in", "out", "vault", ("PHONE",))
    assert MaskJobConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(TypeError):
        MaskJobConfig("in", "out", "vault", "extra")
    with pytest.raises(ConfigError, match="unknown key"):
        MaskJobConfig("in", "out", "vault", batchsize=3)


def test_annotate_out_is_a_deprecated_spelling_of_output() -> None:
    with pytest.warns(DeprecationWarning, match="'out' is deprecated; use 'output'"):
        old = AnnotateConfig(input="i", out="o", teachers=TEACHERS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = AnnotateConfig(input="i", output="o", teachers=TEACHERS)
    assert old == new and new.out == "o"
    with pytest.raises(ConfigError, match="give output only"):
        AnnotateConfig(input="i", out="o", output="o", teachers=TEACHERS)
