"""Every example in every docstring of the library runs: the documentation and the code cannot drift apart.

The modules are discovered, not listed, so a new module's examples run without anyone adding it here.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import spcl

MODULES = sorted(m.name for m in pkgutil.walk_packages(spcl.__path__, "spcl."))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_every_module_is_found() -> None:
    """Discovery reaches nested packages (a broken walk would silently test nothing)."""
    assert {"spcl.detect.validators", "spcl.mask.masker", "spcl.generalize.match"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    """The module imports and each of its docstring examples prints what it shows."""
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
