"""Files shipped with spcl outside the Python package: the default config and the default screen
model.

In a source checkout they live at the project root (``conf/``, ``models/``); a wheel installs them
under ``<prefix>/share/spcl/`` (``[tool.setuptools.data-files]`` in ``pyproject.toml``), which is
also where a packed virtual environment (``venv-pack``, ``spark-submit --archives``) carries them to
cluster executors.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parent.parent


def shipped_locations(relative: str | Path) -> list[Path]:
    """Where a shipped file may be, in the order they are tried: the source tree, then the
    installed copies."""
    rel = Path(relative)
    places = [SOURCE_ROOT / rel]
    for prefix in (sysconfig.get_path("data"), sys.prefix, sys.base_prefix):
        candidate = Path(prefix) / "share" / "spcl" / rel
        if candidate not in places:
            places.append(candidate)
    return places


def shipped_path(relative: str | Path) -> Path | None:
    """The first existing location of a shipped file or folder, or ``None``.

    >>> shipped_path("conf/default.yaml").name
    'default.yaml'
    """
    return next((p for p in shipped_locations(relative) if p.exists()), None)


def resolve_path(given: str | Path) -> Path:
    """``given`` as is when it exists or is absolute; else the shipped copy of that relative
    path; else ``given``."""
    path = Path(given)
    if path.is_absolute() or path.exists():
        return path
    return shipped_path(path) or path
