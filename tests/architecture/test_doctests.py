"""Every example in every docstring of the library runs: the documentation and the code cannot drift
apart.

The modules are discovered, not listed, so a new module's examples run without anyone adding it
here; none is excluded (a module left out would need its reason written next to an exclusion list
here, and there is none).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import spcl


def _unimportable(name: str) -> None:
    raise ImportError(f"package {name} cannot be imported: its modules' doctests would be skipped")


MODULES = sorted(
    [
        "spcl",
        *(m.name for m in pkgutil.walk_packages(spcl.__path__, "spcl.", onerror=_unimportable)),
    ]
)
PACKAGE = Path(spcl.__file__).resolve().parent
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_every_module_is_found() -> None:
    """Discovery reaches nested packages (a broken walk would silently test nothing)."""
    assert {"spcl.detect.validators", "spcl.mask.masker", "spcl.generalize.match"} <= set(MODULES)


def test_every_module_file_of_the_library_is_collected() -> None:
    """Each ``.py`` file under ``spcl/`` is one collected module (nothing excluded, nothing
    missed by the walk)."""
    files = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        files.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert files == set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    """The module imports and each of its docstring examples prints what it shows."""
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
