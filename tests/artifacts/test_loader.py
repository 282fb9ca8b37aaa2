"""The one artifact loader (``spcl.artifacts``) behind the screen's and the tier's: both refuse the
same corruptions, each with its own error family, and a message that names the file (never its
content)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spcl.artifacts import CARD, check_format, read_card, read_checked_files
from spcl.screen.artifact import MODEL_FILES, read_artifact
from spcl.screen.kinds import ScreenModelError
from spcl.tier.model import FILES as TIER_FILES
from spcl.tier.model import TierModelError, read_tier_files

ROOT = Path(__file__).resolve().parents[2]
SCREEN = ROOT / "models" / "screen-default"
TIER = ROOT / "models" / "tier-default"

Reader = Callable[[Path], tuple[dict[str, Any], dict[str, bytes]]]
KINDS: dict[str, tuple[Path, tuple[str, ...], Reader, type[Exception]]] = {
    "screen": (SCREEN, MODEL_FILES, read_artifact, ScreenModelError),
    "tier": (TIER, TIER_FILES, read_tier_files, TierModelError),
}


def _copy(kind: str, tmp: Path) -> Path:
    src = KINDS[kind][0]
    if not (src / CARD).is_file():
        pytest.skip(f"no shipped {kind} model")
    dst = tmp / kind
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_shipped_artifacts_load_through_the_loader(kind: str, tmp_path: Path) -> None:
    """A copy of each shipped artifact reads back with all its files, byte for byte."""
    root = _copy(kind, tmp_path)
    card, files = KINDS[kind][2](root)
    assert card == json.loads((root / CARD).read_text(encoding="utf-8"))
    assert {n: (root / n).read_bytes() for n in KINDS[kind][1]} == files


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(sorted(KINDS)),
    which=st.integers(0, 10),
    cut=st.integers(0, 1000),
    mode=st.sampled_from(["flip", "truncate", "delete", "card-files-list"]),
)
def test_any_damage_is_refused_by_the_kinds_own_error(
    kind: str, which: int, cut: int, mode: str, tmp_path: Path
) -> None:
    """A flipped byte, a truncated or deleted file, or a card whose ``files`` is not an object fails
    closed with the screen's or the tier's error (a card-shaped ``files`` list made the screen raise
    AttributeError), and the message names the file without any of its bytes."""
    root = _copy(kind, tmp_path)
    names, reader, error = KINDS[kind][1], KINDS[kind][2], KINDS[kind][3]
    victim = root / names[which % len(names)]
    data = victim.read_bytes()
    if mode == "flip":
        pos = cut % len(data)
        victim.write_bytes(data[:pos] + bytes([data[pos] ^ 1]) + data[pos + 1 :])
    elif mode == "truncate":
        victim.write_bytes(data[: cut % len(data)])
    elif mode == "delete":
        victim.unlink()
    else:
        card = json.loads((root / CARD).read_text(encoding="utf-8"))
        (root / CARD).write_text(
            json.dumps(card | {"files": sorted(card["files"])}), encoding="utf-8"
        )
        victim = root / names[0]
    with pytest.raises(error) as info:
        reader(root)
    assert str(victim) in str(info.value) and repr(data[:16]) not in str(info.value)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_missing_folder_and_a_bad_card_are_refused(kind: str, tmp_path: Path) -> None:
    """No folder, no card, a card that is not JSON or not an object: the kind's error, naming the
    path."""
    reader, error = KINDS[kind][2], KINDS[kind][3]
    with pytest.raises(error, match="folder not found"):
        reader(tmp_path / "nowhere")
    root = _copy(kind, tmp_path)
    (root / CARD).write_bytes(b"\xff{")
    with pytest.raises(error, match="unreadable model card"):
        reader(root)
    (root / CARD).write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(error, match="not a JSON object"):
        reader(root)
    (root / CARD).unlink()
    with pytest.raises(error, match="model card missing"):
        reader(root)


def test_the_loader_functions_raise_the_callers_family(tmp_path: Path) -> None:
    """``read_card``, ``check_format`` and ``read_checked_files`` raise exactly the class they
    are given."""

    class Mine(RuntimeError):
        pass

    (tmp_path / CARD).write_text(
        json.dumps({"format_version": 3, "files": {"a": "0" * 64}}), encoding="utf-8"
    )
    (tmp_path / "a").write_bytes(b"x")
    card = read_card(tmp_path, Mine)
    with pytest.raises(Mine, match=r"format_version 3 is not supported by spcl x \(reads 1, 2\)"):
        check_format(card, tmp_path / CARD, (1, 2), Mine, reader="spcl x", retrain="spcl train")
    check_format(card, tmp_path / CARD, (3,), Mine, reader="spcl x", retrain="spcl train")
    with pytest.raises(Mine, match="SHA-256 does not match"):
        read_checked_files(tmp_path, card, ["a"], Mine)
    with pytest.raises(Mine, match="model file missing"):
        read_checked_files(tmp_path, card, ["b"], Mine)
