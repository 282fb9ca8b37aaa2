"""The prepared GPU check of ``spcl annotate`` runs end to end on CPU with two tiny random-weight
models (the in-process transformers teacher path; vLLM itself needs a GPU)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_annotate_gpu_check_cpu_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "annotate_gpu_check", ROOT / "tools" / "annotate_gpu_check.py"
    )
    assert spec and spec.loader
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    rc = tool.main(
        [
            "--output",
            str(tmp_path),
            "--docs",
            "8",
            "--hidden",
            "64",
            "--layers",
            "1",
            "--max-tokens",
            "4",
            "--batch-size",
            "4",
            "--device",
            "cpu",
        ]
    )
    assert rc == 0
    summary = json.loads((tmp_path / "annotate_gpu_check.json").read_text())
    assert summary["documents"] == 8 and summary["reconciliation_ok"]
    counts = summary["counts"]
    assert counts["candidates"] == 8 and counts["labelled"] + counts["rejected"] == 8
    # random weights print noise: every text is rejected, failing closed
    assert counts["rejected"] == 8 and all(
        r.startswith(("unparseable:", "backend_error:")) for r in summary["rejected_reasons"]
    )
    assert all(v > 0 for v in summary["generated_tokens_per_second"].values())
