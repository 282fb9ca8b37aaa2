"""The type checker's escape hatch stays rare: at most ``MAX_IGNORES`` ``type: ignore`` comments in
spcl/, each with a reason (a ``#`` comment after it on the same line) saying why the checker cannot
see what is true.

The comments are read with ``tokenize`` (a ``type: ignore`` inside a string does not count).
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_IGNORES = 10
_IGNORE = re.compile(r"#\s*type:\s*ignore\b(\[[^\]]*\])?")


def type_ignores(source: str) -> list[tuple[int, str]]:
    """``(line, comment)`` for each ``type: ignore`` comment of ``source`` (strings do not count).

    >>> type_ignores("x = 1  # type: ignore[misc]  # why\\ny = '# type: ignore'\\n")
    [(1, '# type: ignore[misc]  # why')]
    """
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and _IGNORE.search(tok.string):
            found.append((tok.start[0], tok.string))
    return found


def has_reason(comment: str) -> bool:
    """True when a ``type: ignore`` comment is followed by a second ``#`` comment (its reason).

    >>> has_reason("# type: ignore[misc]  # the stub lacks the attribute")
    True
    >>> has_reason("# type: ignore[misc]")
    False
    """
    match = _IGNORE.search(comment)
    return (
        match is not None
        and comment[match.end() :].strip().startswith("#")
        and len(comment[match.end() :].strip().lstrip("#").strip()) > 0
    )


def all_ignores(root: Path = ROOT) -> list[tuple[str, int, str]]:
    """Every ``type: ignore`` comment under ``root/spcl`` as ``(path, line, comment)``."""
    return [
        (path.relative_to(root).as_posix(), line, comment)
        for path in sorted((root / "spcl").rglob("*.py"))
        for line, comment in type_ignores(path.read_text(encoding="utf-8"))
    ]


def test_type_ignores_are_few() -> None:
    """No more than MAX_IGNORES ``type: ignore`` comments in spcl/."""
    found = all_ignores()
    assert len(found) <= MAX_IGNORES, "\n".join(f"{p}:{n}: {c}" for p, n, c in found)


def test_each_type_ignore_says_why() -> None:
    """Each remaining ``type: ignore`` carries a reason comment."""
    bare = [f"{p}:{n}: {c}" for p, n, c in all_ignores() if not has_reason(c)]
    assert not bare, "\n".join(bare)


def test_the_counter_sees_comments_not_strings() -> None:
    """The counter finds a real comment and skips the same text inside a string (else the test
    would lie)."""
    assert len(type_ignores("a = 1  # type: ignore\nb = '# type: ignore'\n")) == 1
