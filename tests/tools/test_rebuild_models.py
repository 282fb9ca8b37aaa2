"""tools/rebuild_models.py: its comparison of a rebuilt model folder with the shipped one, and
its commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from tools import rebuild_models

ROOT = Path(__file__).resolve().parents[2]


def _folder(path: Path, weights: np.ndarray, text: str) -> Path:
    path.mkdir()
    np.savez(path / "screen.npz", w=weights, ids=np.arange(3))
    (path / "lgbm.txt").write_text(text, encoding="utf-8")
    return path


def test_compare_tells_identical_close_and_different(tmp_path: Path) -> None:
    """Same bytes: identical; float arrays within the tolerance: equal within; otherwise DIFFERS
    or MISSING."""
    w = np.array([0.5, -1.25, 2.0])
    shipped = _folder(tmp_path / "shipped", w, "tree 1")
    same = shipped.parent / "same"
    shutil.copytree(shipped, same)
    close = _folder(tmp_path / "close", w + 1e-5, "tree 1")
    far = _folder(tmp_path / "far", w + 0.1, "tree 2")
    files = ["screen.npz", "lgbm.txt", "spm.model"]
    (shipped / "spm.model").write_bytes(b"x")
    (same / "spm.model").write_bytes(b"x")

    assert [m for _, _, m in rebuild_models.compare(shipped, same, files)] == [True, True, True]
    verdicts = {f: (v, m) for f, v, m in rebuild_models.compare(shipped, close, files)}
    assert verdicts["screen.npz"][1] and verdicts["screen.npz"][0].startswith("equal within")
    assert verdicts["lgbm.txt"] == ("identical", True)
    assert verdicts["spm.model"] == ("MISSING from the rebuilt model", False)
    far_verdicts = {f: (v, m) for f, v, m in rebuild_models.compare(shipped, far, files[:2])}
    assert far_verdicts["screen.npz"][1] is False and far_verdicts["screen.npz"][0].startswith(
        "DIFFERS"
    )
    assert far_verdicts["lgbm.txt"] == ("DIFFERS", False)


def test_commands_compare_every_shipped_model_file() -> None:
    """Each rebuild compares every model file the shipped card lists, and trains only on data in
    the repository."""
    screen_card = json.loads((ROOT / "models/screen-default/model_card.json").read_text("utf-8"))
    names_card = json.loads((ROOT / "models/names-crf/model_card.json").read_text("utf-8"))
    assert sorted(rebuild_models.COMMANDS["screen-default"][2]) == sorted(screen_card["files"])
    gazetteers = [v["gazetteer"] for v in names_card["files"].values() if "gazetteer" in v]
    names_files = {v["file"] for v in names_card["files"].values()} | {
        g["file"] if isinstance(g, dict) else g for g in gazetteers
    }
    assert sorted(rebuild_models.COMMANDS["names-crf"][2]) == sorted(names_files)
    for _name, (_shipped, steps, _files) in rebuild_models.COMMANDS.items():
        data = [step[i + 1] for step in steps for i, a in enumerate(step) if a == "--data"]
        assert data and all((ROOT / d).is_file() and not d.startswith("..") for d in data), data


def test_repository_data_is_what_the_shipped_models_were_trained_on() -> None:
    """The SHA-256 each shipped card records for its training files matches the file the rebuild
    reads."""
    import hashlib

    def sha(path: str) -> str:
        return hashlib.sha256((ROOT / path).read_bytes()).hexdigest()

    screen_card = json.loads((ROOT / "models/screen-default/model_card.json").read_text("utf-8"))
    [args] = rebuild_models.COMMANDS["screen-default"][1]
    data = [args[i + 1] for i, a in enumerate(args) if a == "--data"]
    recorded = {
        "/".join(Path(d["path"]).parts[-2:]): d["sha256"] for d in screen_card["training_data"]
    }
    assert {"/".join(Path(d).parts[-2:]): sha(d) for d in data} == recorded
    names_card = json.loads((ROOT / "models/names-crf/model_card.json").read_text("utf-8"))
    names_args = rebuild_models.COMMANDS["names-crf"][1][0]
    assert sha(names_args[names_args.index("--data") + 1]) == names_card["data"]["sha256"]
    en_args = rebuild_models.COMMANDS["names-crf"][1][2]
    assert sha(en_args[en_args.index("--data") + 1]) == names_card["data_en"]["sha256"]
