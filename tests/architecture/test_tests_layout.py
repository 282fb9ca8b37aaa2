"""The tests mirror the package: each test file lies in ``tests/<name>/`` where ``<name>`` is one of
spcl's first-level packages or modules (``tests/mask/``, ``tests/mask_stage/``, ``tests/config/``
…), ``architecture`` (rules read from the source), ``e2e`` (end-to-end runs) or ``tools`` (the
project's ``tools/`` scripts). Helpers live in ``tests/support/`` and fixtures in ``conftest.py``:
no module under ``tests/`` imports a test module or a ``conftest.py``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
EXTRA_FOLDERS = frozenset({"architecture", "e2e", "tools"})


def spcl_names() -> frozenset[str]:
    """spcl's first-level packages and modules (``spcl/x/__init__.py`` or ``spcl/x.py``)."""
    package = ROOT / "spcl"
    names = {p.parent.name for p in package.glob("*/__init__.py")}
    names |= {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    return frozenset(names)


def imported_modules(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (``from x import y`` counts ``x`` and
    ``x.y``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def test_every_test_file_lies_in_a_folder_named_after_what_it_tests() -> None:
    allowed = spcl_names() | EXTRA_FOLDERS
    misplaced = []
    for path in sorted(TESTS.rglob("test_*.py")):
        parts = path.relative_to(TESTS).parts
        if len(parts) != 2 or parts[0] not in allowed:
            misplaced.append("/".join(parts))
    assert misplaced == [], (
        f"test files outside tests/<spcl package>/, architecture/, e2e/ or tools/: {misplaced}"
    )


def test_every_test_folder_is_a_package() -> None:
    folders = {path.parent for path in TESTS.rglob("*.py")}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists())
    assert missing == [], f"folders without __init__.py: {missing}"


def test_no_module_imports_a_test_module_or_a_conftest() -> None:
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for name in imported_modules(path):
            last = name.rsplit(".", 1)[-1]
            if name.startswith("tests.") and (last.startswith("test_") or last == "conftest"):
                offenders.append(f"{path.relative_to(TESTS)} imports {name}")
    assert offenders == [], (
        f"helpers belong in tests/support/, fixtures in conftest.py: {offenders}"
    )


def test_the_support_package_holds_no_tests() -> None:
    assert sorted((TESTS / "support").rglob("test_*.py")) == []


def test_the_rules_see_what_they_check(tmp_path: Path) -> None:
    """The checks above are not vacuous: the names, the files and an offending import are all
    found."""
    assert {"mask", "mask_stage", "screen", "config", "commands"} <= spcl_names()
    assert len(list(TESTS.rglob("test_*.py"))) > 50
    bad = tmp_path / "bad.py"
    bad.write_text("from tests.mask.test_mask import x\nimport tests.conftest\n", encoding="utf-8")
    assert {"tests.mask.test_mask", "tests.conftest"} <= imported_modules(bad)
