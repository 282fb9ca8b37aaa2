"""Reading spcl's import graph from the source with ``ast`` (for the architecture tests).

Every ``import``/``from … import`` counts, at module level and inside functions (a lazy import is
still a dependency), with relative imports resolved. A package is ``spcl.<first name>``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path, root: Path) -> str:
    """Dotted name of the module at ``path`` (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool) -> set[str]:
    """Every module ``source`` imports, anywhere in it (functions and ``if`` blocks too), relative
    ones resolved.

    >>> source = "import a.b\\ndef f():\\n    from .c import d\\n"
    >>> sorted(imported_modules(source, "spcl.x.y", False))
    ['a.b', 'spcl.x.c']
    >>> sorted(imported_modules("from . import z\\nfrom .. import w", "spcl.x", True))
    ['spcl', 'spcl.x']
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
    return found


def package_of(module: str) -> str:
    """``spcl.<first name>`` of a spcl module (``spcl`` itself for the top package)."""
    return ".".join(module.split(".")[:2])


def library_imports(root: Path = ROOT) -> dict[str, set[str]]:
    """For each module under ``root/spcl``: the modules it imports."""
    out = {}
    for path in sorted((root / "spcl").rglob("*.py")):
        name = module_name(path, root)
        out[name] = imported_modules(
            path.read_text(encoding="utf-8"), name, path.name == "__init__.py"
        )
    return out
