"""Where spcl keeps files it derives and can always rebuild (the detectors' folding tables, the
Spark driver's class archive): ``$SPCL_CACHE_DIR``, else ``$XDG_CACHE_HOME/spcl``, else
``~/.cache/spcl``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache folder (not created here)."""
    if os.environ.get("SPCL_CACHE_DIR"):
        return Path(os.environ["SPCL_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spcl"
