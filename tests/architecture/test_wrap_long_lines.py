"""``tools/wrap_long_lines.py``, the rewrapper of over-long comments and docstrings the lead runs
with ``ruff format --line-length 100``: it shortens what it touches, never changes the program (the
AST is the same up to whitespace inside docstrings), keeps doctests, code and URLs as they are, and
is idempotent."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.wrap_long_lines import width, wrap_source

ROOT = Path(__file__).resolve().parents[2]


def _normal(source: str) -> str:
    """The AST of ``source`` with every string's whitespace runs made one space."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = " ".join(node.value.split())
    return ast.dump(tree)


_WORD = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyz日本語한국어-.,:;()'\"`*|>#0123456789"),
    min_size=1,
    max_size=30,
)
_LINE = st.lists(_WORD, min_size=1, max_size=40).map(" ".join)


def _program(comment_lines: list[str], doc_lines: list[str], trailing: str, indent: int) -> str:
    pad = " " * indent
    comments = "\n".join(f"{pad}# {c}" for c in comment_lines)
    doc = "\n".join(f"{pad}    {d}" for d in doc_lines)
    body = (
        f'def f(x):\n    """{doc_lines[0]}\n\n{textwrap.indent(doc, "")}\n    """\n'
        f"    y = [x,  # {trailing}\n         x + 1]\n    return y\n"
    )
    head = f"class A:\n{comments}\n    z = 1\n" if indent == 4 else f"{comments}\nz = 1\n"
    return head + body


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_LINE, min_size=1, max_size=6),
    st.lists(_LINE, min_size=1, max_size=5),
    _LINE,
    st.sampled_from([0, 4]),
)
def test_wrapping_keeps_the_program_and_is_idempotent(
    comments: list[str], docs: list[str], trailing: str, indent: int
) -> None:
    """Generated comments and docstrings: same AST up to docstring whitespace; a second run
    changes nothing."""
    docs = [d.replace('"""', "'''").replace("\\", "/") for d in docs]
    source = _program(comments, docs, trailing, indent)
    try:
        before = _normal(source)
    except SyntaxError:
        return
    once = wrap_source(source)
    assert _normal(once) == before
    assert wrap_source(once) == once


def test_a_long_comment_paragraph_is_rewrapped_and_shorter() -> None:
    """A 150-character comment becomes lines of at most 100 with the same words."""
    words = " ".join(f"word{i}" for i in range(25))
    out = wrap_source(f"# {words}\nx = 1\n")
    lines = out.splitlines()
    assert all(len(line) <= 100 for line in lines) and len(lines) == 3
    assert " ".join(line.removeprefix("# ") for line in lines[:-1]) == words


def test_doctests_urls_and_code_blocks_stay_as_they_are() -> None:
    """Doctest lines, indented code, and a long URL are never reflowed or broken."""
    url = "https://example.org/" + "a" * 110
    source = (
        "def f():\n"
        f'    """Summary.\n\n    >>> f()  # {"x" * 100}\n\n        code = {"z" * 100}\n'
        f'    see {url}\n    """\n'
        f"# {url}\n"
    )
    out = wrap_source(source)
    assert f"    >>> f()  # {'x' * 100}" in out
    assert f"        code = {'z' * 100}" in out and url in out.splitlines()[-1]
    assert all(
        url in line or len(line) <= 100 or ">>>" in line or "code =" in line
        for line in out.splitlines()
    )


def test_a_long_list_item_hangs_under_its_text() -> None:
    """A list item over the limit is filled with its later lines indented under the item's first
    word."""
    words = " ".join(f"w{i}" for i in range(40))
    source = f'def f():\n    """Summary.\n\n    - {words}\n    - short\n    """\n'
    lines = wrap_source(source).splitlines()
    item = lines[lines.index(next(line for line in lines if line.startswith("    - w0"))) :]
    assert all(len(line) <= 100 for line in lines)
    assert item[1].startswith("      w") and "    - short" in lines
    assert _normal(wrap_source(source)) == _normal(source)


def test_a_long_one_line_docstring_becomes_a_closed_paragraph() -> None:
    """A one-line docstring (function or attribute) over the limit is filled, quotes closed on
    the last line."""
    words = " ".join(f"word{i}" for i in range(25))
    source = f'def f():\n    """{words}."""\n\n\nX = 1\n"""{words}."""\n'
    out = wrap_source(source)
    assert all(len(line) <= 100 for line in out.splitlines())
    assert out.splitlines()[1].startswith('    """word0') and out.count('."""') == 2
    assert _normal(out) == _normal(source) and wrap_source(out) == out


def test_a_section_banner_is_cut_to_the_limit() -> None:
    """``# --- name ----…`` comments lose dashes on the right until they fit."""
    source = "# --- batches " + "-" * 120 + "\nx = 1\n"
    first = wrap_source(source).splitlines()[0]
    assert len(first) == 100 and first.startswith("# --- batches -")


def test_a_trailing_comment_moves_above_its_line() -> None:
    """A comment that makes a code line too long goes, wrapped, above it at the code's
    indentation."""
    source = f"def f():\n    return 1  # {'because ' * 15}\n"
    out = wrap_source(source)
    assert (
        out.splitlines()[1].startswith("    # because") and out.splitlines()[-1] == "    return 1"
    )
    assert _normal(out) == _normal(source)


def test_pragmas_stay_on_their_line() -> None:
    """``# type:``/``# noqa`` comments are left where they are (moving them would change their
    meaning)."""
    source = f"x = 1  # type: ignore[misc]  # {'r ' * 60}\n"
    assert wrap_source(source) == source


def test_whole_package_keeps_its_program() -> None:
    """Over every module of spcl: the AST is unchanged up to docstring whitespace, and a rerun is
    a no-op."""
    for path in sorted((ROOT / "spcl").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        once = wrap_source(source)
        if once != source:
            assert _normal(once) == _normal(source), path
            assert wrap_source(once) == once, path


def test_wide_characters_count_two_columns() -> None:
    """A Japanese comment fits ruff's measure: its wrapped lines are at most 100 columns, CJK
    counted two."""
    words = " ".join(["東京都千代田区"] * 20)
    out = wrap_source(f"# {words}\nx = 1\n")
    assert all(width(line) <= 100 for line in out.splitlines()) and len(out.splitlines()) > 3


def test_a_line_opening_with_a_role_is_prose() -> None:
    """``:func:`x` does …`` starts a sentence (a role), not a field list: its paragraph is
    rewrapped."""
    words = " ".join(f"w{i}" for i in range(40))
    source = f'def f():\n    """Summary.\n\n    :func:`g` {words}\n    """\n'
    out = wrap_source(source)
    assert all(len(line) <= 100 for line in out.splitlines()) and _normal(out) == _normal(source)
