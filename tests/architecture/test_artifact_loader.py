"""One artifact loader: only ``spcl/artifacts.py`` checks a model card's file hashes and format, so
the screen, the tier and any later artifact fail closed the same way (read with ``ast``: the
loader's messages, and a ``hexdigest()`` compared with ``!=``/``==``, appear nowhere else in
``spcl/``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOADER = ROOT / "spcl" / "artifacts.py"
MESSAGES = (
    "model file missing",
    "SHA-256 does not match",
    "model card missing",
    "unreadable model card",
)


def hash_checks(source: str) -> list[int]:
    """Lines of ``source`` that compare a ``….hexdigest()`` or write one of the loader's messages.

    >>> hash_checks('if hashlib.sha256(d).hexdigest() != want:\\n'
    ...             '    raise E(f"{p}: model file missing")')
    [1, 2]
    >>> hash_checks('digest = hashlib.sha256(d).hexdigest()')
    []
    """
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                call = side.func if isinstance(side, ast.Call) else None
                if isinstance(call, ast.Attribute) and call.attr == "hexdigest":
                    lines.add(node.lineno)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and any(m in node.value for m in MESSAGES)
        ):
            lines.add(node.lineno)
    return sorted(lines)


def test_only_the_artifact_loader_checks_card_hashes() -> None:
    """No module but ``spcl/artifacts.py`` compares file hashes with a card or writes the
    loader's messages."""
    found = [
        f"{p.relative_to(ROOT)}:{line}"
        for p in sorted((ROOT / "spcl").rglob("*.py"))
        if p != LOADER
        for line in hash_checks(p.read_text(encoding="utf-8"))
    ]
    assert not found, "card hash checks outside spcl/artifacts.py:\n" + "\n".join(found)
