"""Experiment tracking that carries numbers, never text: a JSONL log in the run folder, optionally
MLflow.

Only hyper-parameters (numbers, booleans and short settings such as the device) and metrics
(numbers) are accepted; anything else is refused with ``ValueError`` before it reaches a tracker, so
source text, completions and mappings cannot be logged as parameters or tags by mistake. MLflow is
used only when a local store folder is given (``--mlflow DIR`` → ``file:`` URI) and the ``mlflow``
package is installed.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

Scalar = int | float | bool | str
MAX_PARAM_CHARS = 64


def _check_params(params: Mapping[str, object]) -> dict[str, Scalar]:
    out: dict[str, Scalar] = {}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, str) and (
            len(value) > MAX_PARAM_CHARS or "\n" in value or "\t" in value
        ):
            raise ValueError(f"parameter {key} is not a short setting")
        if not isinstance(value, int | float | bool | str):
            raise ValueError(f"parameter {key} is not a scalar")
        out[key] = value
    return out


def _check_metrics(metrics: Mapping[str, object]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"metric {key} is not a number")
        if math.isfinite(float(value)):
            out[key] = float(value)
    return out


class Tracker:
    """Writes ``params`` and ``metrics`` events to ``log_path`` (JSONL) and, if configured, to
    MLflow."""

    def __init__(
        self,
        log_path: str | Path,
        mlflow_dir: str | Path | None = None,
        run_name: str = "train-extractor",
    ):
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._mlflow: Any = None
        if mlflow_dir is not None:
            try:
                import mlflow
            except ImportError:
                raise ValueError("--mlflow needs the mlflow package (pip install mlflow)") from None
            # MLflow 3 keeps the file store in maintenance mode behind this switch; a local folder
            # is the point
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
            mlflow.set_tracking_uri(Path(mlflow_dir).resolve().as_uri())
            mlflow.set_experiment("spcl-extractor")
            mlflow.start_run(run_name=run_name)
            self._mlflow = mlflow

    def _write(self, event: dict[str, Scalar]) -> None:
        with open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(event) + "\n")

    def log_params(self, params: Mapping[str, object]) -> None:
        """Record hyper-parameters (scalars and short settings only; ``None`` values are left out;
        anything else raises ``ValueError``)."""
        clean = _check_params(params)
        self._write({"event": "params", **clean})
        if self._mlflow is not None:
            self._mlflow.log_params(clean)

    def log_metrics(self, metrics: Mapping[str, object], step: int) -> None:
        """Record numeric metrics at ``step`` (non-finite ones are left out; a non-number raises
        ``ValueError``)."""
        clean = _check_metrics(metrics)
        self._write({"event": "metrics", "step": step, **clean})
        if self._mlflow is not None:
            self._mlflow.log_metrics(clean, step=step)

    def close(self) -> None:
        """End the MLflow run, if any."""
        if self._mlflow is not None:
            self._mlflow.end_run()
            self._mlflow = None
