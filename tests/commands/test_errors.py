"""The one place that turns errors into messages and exit codes (``spcl.cli.error_exit``), through
the real CLI: each family exits with its code, the message is one escaped line under the command's
name."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from spcl.cli import error_exit, main
from spcl.config import ConfigError
from spcl.errors import EXIT_CODES, Pending, RunFailed, SpclError, UsageError


@pytest.mark.parametrize(
    ("err", "code"),
    [(RunFailed("x"), 1), (UsageError("x"), 2), (Pending("x"), 3), (ConfigError("x"), 2)],
)
def test_each_family_exits_with_its_code(
    err: SpclError, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert error_exit(err, "spcl mask") == code
    assert code in EXIT_CODES
    assert capsys.readouterr().err.strip().endswith(": x")


def test_a_message_is_one_escaped_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert error_exit(RunFailed("doc-1\n2026 INFO spcl: all good\x1b[2J"), "spcl mask") == 1
    assert capsys.readouterr().err == "spcl mask: doc-1\\n2026 INFO spcl: all good\\x1b[2J\n"


def test_a_config_error_keeps_one_key_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        error_exit(ConfigError("invalid configuration in c.yaml:\n  mask.x: bad\x1b"), "spcl mask")
        == 2
    )
    assert capsys.readouterr().err == "spcl: invalid configuration in c.yaml:\n  mask.x: bad\\x1b\n"


def test_an_os_error_names_the_path(capsys: pytest.CaptureFixture[str]) -> None:
    err = OSError(errno.ENOSPC, "No space", "/out/a.parquet")
    assert error_exit(err, "spcl filter") == 1
    assert (
        capsys.readouterr().err
        == "spcl filter: cannot write /out/a.parquet: No space left on device (ENOSPC)\n"
    )


def test_another_error_is_not_ours() -> None:
    assert error_exit(KeyError("k"), "spcl mask") is None


def test_usage_error_of_a_step_names_the_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("", encoding="utf-8")
    assert (
        main(["eval", "masking", "--gold", str(gold), "--pred", str(gold), "--output", str(gold)])
        == 2
    )
    assert (
        capsys.readouterr().err
        == f"spcl eval masking: --output {gold} is one of the inputs; write the report elsewhere\n"
    )


def test_a_missing_file_is_bad_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.jsonl"
    assert main(["train-names", "--data", str(missing), "--output", str(tmp_path / "m")]) == 2
    assert capsys.readouterr().err == f"spcl train-names: {missing} not found\n"


def test_manifest_verify_failure_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["manifest", "verify", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no manifest.json" in err
    assert err.endswith("spcl manifest verify: 1 of 1 folder(s) failed verification\n")
