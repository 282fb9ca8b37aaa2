"""Rewrap comment and docstring paragraphs that hold a line longer than the limit (100 characters).

Meant to run once over the tree together with ``ruff format --line-length 100`` (which wraps code
but never
comments or docstrings)::

    python -m tools.wrap_long_lines spcl jobs tests tools          # rewrite in place
    python -m tools.wrap_long_lines --check spcl                    # list what it would change

Deterministic and idempotent: a paragraph is rewrapped (greedy fill by display width as ruff counts
it: East Asian wide characters take two columns; words never broken, so a URL stays whole) only when
one of its lines is too long, and a rewrapped paragraph is left alone on the next run. The program's
meaning does not change: only whitespace inside docstrings (each rewrapped docstring is parsed back
and must hold the same words) and the layout of ``#`` comments.

What it rewraps: prose paragraphs of comments and docstrings (module, class, function and attribute
docstrings), list items of docstrings (later lines hang under the item's text), one-line docstrings
(filled, the closing quotes on the last line); section banners (``# --- name -----``) lose dashes
until they fit. What it leaves as it is: doctest lines (``>>>``, ``...``) and their outputs,
indented code blocks, tables (``|``, ``+--``, ``===``), reST directives and literal blocks (``::``),
lines ending in a backslash, ``#!``, ``# type:``, ``# noqa``, ``# fmt:``, ``# pragma`` and ``#
ruff:`` comments. A comment after code that makes the line too long moves, rewrapped, onto its own
lines above that line (then ``ruff format`` can wrap the code alone). A file whose result would not
parse to the same program is left as it is.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import textwrap
import tokenize
import unicodedata
from pathlib import Path

LIMIT = 100
_KEEP_COMMENT = re.compile(r"#\s*(type:|noqa|fmt:|pragma|ruff:|!|-\*-)")
_LIST = re.compile(r"\s*([-*+•]|\d+[.)]|[a-z][.)])\s")
_SPECIAL = re.compile(r"^\s*(>>>|\.\.\.|\.\. |:\w+:(?!`)|\||\+[-=]|={3,}|-{3,})")


def width(text: str) -> int:
    """Columns ``text`` takes as ruff measures a line: East Asian wide and full-width characters
    count two.

    >>> width("abc"), width("日本語")
    (3, 6)
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _wrap(words: str, first: str, rest: str, limit: int) -> list[str]:
    """``words`` filled greedily to ``limit`` columns (:func:`width`) with ``first`` before the
    first line and ``rest`` before the others; a word is never broken (one longer than a line stays
    whole on its own)."""
    lines: list[str] = []
    line = first
    bare = True  # nothing but the prefix on ``line`` yet
    for word in words.split():
        if not bare and width(line) + 1 + width(word) > limit:
            lines.append(line)
            line, bare = rest + word, False
        else:
            line, bare = (line + word, False) if bare else (line + " " + word, False)
    if not bare:
        lines.append(line)
    return lines


def _plain(text: str) -> bool:
    """True for prose that may be reflowed (no list item, table, doctest, directive, code,
    URL-only line)."""
    return (
        bool(text.strip())
        and not _LIST.match(text)
        and not _SPECIAL.match(text)
        and not (text.rstrip().endswith("::") or text.rstrip().endswith("\\"))
    )


# --- comments -------------------------------------------------------------------------------------


def _comment_lines(source: str) -> tuple[set[int], dict[int, int]]:
    """Lines (0-based) that hold only a comment, and ``line -> column`` of comments that follow
    code."""
    whole: set[int] = set()
    trailing: dict[int, int] = {}
    code_lines: set[int] = set()
    # rows that start inside a multi-line token (a string): nothing goes above
    inside_token: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            row = tok.start[0] - 1
            if row in inside_token:
                continue
            if row in code_lines:
                trailing[row] = tok.start[1]
            else:
                whole.add(row)
        elif tok.type not in (
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        ):
            for row in range(tok.start[0] - 1, tok.end[0]):
                code_lines.add(row)
            inside_token.update(range(tok.start[0], tok.end[0]))
    return whole - set(trailing), trailing


def wrap_comments(source: str, limit: int = LIMIT) -> str:
    """``source`` with each over-long comment paragraph rewrapped to ``limit`` characters."""
    lines = source.split("\n")
    whole, trailing = _comment_lines(source)
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i in trailing and width(line) > limit:
            col = trailing[i]
            code, comment = line[:col].rstrip(), line[col:]
            if not _KEEP_COMMENT.match(comment) and comment.strip("# "):
                indent = code[: len(code) - len(code.lstrip())]
                out.extend(_wrap(comment.lstrip("#").strip(), indent + "# ", indent + "# ", limit))
                out.append(code)
                i += 1
                continue
        if i in whole:
            indent = line[: len(line) - len(line.lstrip())]
            j = i
            block: list[str] = []
            while (
                j in whole
                and lines[j].startswith(indent + "#")
                and lines[j][: len(indent)].strip() == ""
                and not lines[j][len(indent) :][:1].isspace()
            ):
                block.append(lines[j])
                j += 1
            if not block:
                out.append(line)
                i += 1
                continue
            out.extend(_comment_block(block, indent, limit))
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _comment_block(block: list[str], indent: str, limit: int) -> list[str]:
    """One run of full-line comments at one indentation: over-long prose paragraphs rewrapped."""
    result: list[str] = []
    para: list[str] = []

    def flush() -> None:
        texts = [p[len(indent) + 1 :] for p in para]
        if any(width(p) > limit for p in para) and all(
            t.startswith(" ") and _plain(t[1:]) for t in texts
        ):
            result.extend(
                _wrap(" ".join(t.strip() for t in texts), indent + "# ", indent + "# ", limit)
            )
        else:
            result.extend(para)
        para.clear()

    for line in block:
        text = line[len(indent) + 1 :]
        if (
            _KEEP_COMMENT.match(line.lstrip())
            or not text.strip()
            or not text.startswith(" ")
            or text.startswith("  ")
            or not _plain(text[1:])
        ):
            flush()
            result.append(line)
        else:
            para.append(line)
    flush()
    return result


# --- docstrings -----------------------------------------------------------------------------------


def _docstring_nodes(tree: ast.AST) -> list[ast.Constant]:
    """The docstring constants: of the module, its classes and functions, and every other bare
    string statement (the attribute docstrings that follow an assignment)."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.append(node.value)
    return found


def wrap_docstrings(source: str, limit: int = LIMIT) -> str:
    """``source`` with each over-long prose paragraph or list item of a docstring rewrapped to
    ``limit`` characters (a one-line docstring becomes a paragraph closed on its last line)."""
    lines = source.split("\n")
    nodes = sorted(_docstring_nodes(ast.parse(source)), key=lambda n: n.lineno, reverse=True)
    for node in nodes:
        start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        if not any(width(lines[k]) > limit for k in range(start, end + 1)):
            continue
        doc = lines[start : end + 1]
        new = _one_line_docstring(doc[0], limit) if start == end else _docstring_lines(doc, limit)
        if new != doc and _same_words(doc, new, node.value):
            lines[start : end + 1] = new
    return "\n".join(lines)


def _same_words(old: list[str], new: list[str], value: object) -> bool:
    """True when ``new`` (the rewrapped lines of a docstring) still parses to the same words as
    ``value``."""
    try:
        tree = ast.parse(textwrap.dedent("\n".join(new)).strip())
    except SyntaxError:
        return False
    body = tree.body[0] if len(tree.body) == 1 else None
    ok = isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant)
    return (
        ok
        and isinstance(value, str)
        and " ".join(str(body.value.value).split()) == " ".join(value.split())
    )


_ONE_LINE = re.compile(r'^(\s*)([rRuU]?)("""|\'\'\')(.*)\3$')


def _one_line_docstring(line: str, limit: int) -> list[str]:
    """An over-long one-line docstring (a statement alone on its line) filled to ``limit``: the
    opening quotes before the first line, the closing ones after the last."""
    m = _ONE_LINE.match(line)
    if (
        m is None
        or not m.group(4).strip()
        or m.group(4).endswith(("\\", '"', "'"))
        or m.group(3) in m.group(4)
    ):
        return [line]
    indent, opening = m.group(1), m.group(1) + m.group(2) + m.group(3)
    wrapped = _wrap(m.group(4).strip(), opening, indent, limit - len(m.group(3)))
    if len(wrapped) < 2:
        return [line]
    wrapped[-1] += m.group(3)
    return wrapped


_OPEN = re.compile(r'^(\s*)([rRuU]?("""|\'\'\'))')


def _docstring_lines(doc: list[str], limit: int) -> list[str]:
    """The source lines of one triple-quoted docstring with its over-long prose paragraphs and list
    items rewrapped (a list item's later lines hang under its text)."""
    opened = _OPEN.match(doc[0])
    if opened is None or doc[-1].strip() == "" or "\t" in "".join(doc):
        return doc
    quote = opened.group(3)
    if doc[0].count(quote) > 1 or doc[-1].count(quote) != 1 or any(quote in d for d in doc[1:-1]):
        return doc
    indent = opened.group(1)
    out: list[str] = []
    para: list[int] = []
    hang: list[str] = []  # the list item's marker while ``para`` is one

    def flush() -> None:
        if not para:
            return
        texts = [doc[k] for k in para]
        if hang:
            first_prefix, rest = indent + hang[0], indent + " " * len(hang[0])
            bodies = [texts[0][len(first_prefix) :], *(t[len(rest) :] for t in texts[1:])]
        else:
            first_prefix = opened.group(0) if para[0] == 0 else indent
            rest = indent
            bodies = [
                t[len(opened.group(0)) :] if k == 0 else t for k, t in zip(para, texts, strict=True)
            ]
        ok = all(
            k == 0
            or hang
            or (t[: len(indent)].strip() == "" and not t[len(indent) :][:1].isspace())
            for k, t in zip(para, texts, strict=True)
        )
        if ok and any(width(t) > limit for t in texts) and all(_plain(b) for b in bodies):
            words = " ".join(b.strip() for b in bodies)
            wrapped = _wrap(words, first_prefix, rest, limit)
            out.extend(wrapped if wrapped else texts)
        else:
            out.extend(texts)
        para.clear()
        hang.clear()

    for k, line in enumerate(doc):
        body = line[len(opened.group(0)) :] if k == 0 else line
        item = _LIST.match(body) if k > 0 and body[: len(indent)].strip() == "" else None
        if item is not None and body.startswith(indent) and not body[len(indent) :][:1].isspace():
            flush()
            marker = _LIST.match(body[len(indent) :])
            if marker is not None:
                para.append(k)
                hang.append(marker.group(0))
                continue
        if (
            hang
            and body.startswith(indent + " " * len(hang[0]))
            and _plain(body[len(indent) + len(hang[0]) :])
            and not body[len(indent) + len(hang[0]) :][:1].isspace()
        ):
            para.append(k)
            continue
        if hang:
            flush()
        # the closing quotes alone on their line stay there
        closing = k > 0 and body.strip() == quote
        if (
            not body.strip()
            or closing
            or (k > 0 and not _plain(body))
            or (k == 0 and not _plain(body))
        ):
            flush()
            out.append(line)
            continue
        para.append(k)
    flush()
    return out


_LEFT_BANNER = re.compile(r"^(\s*# )-{4,} ")


def trim_banners(source: str, limit: int = LIMIT) -> str:
    """``source`` with section-banner comments (``# --- name -----`` or ``# ----- name``) cut to
    ``limit`` columns by dropping dashes from their long run."""
    out = []
    for line in source.split("\n"):
        stripped = line.rstrip()
        if (
            width(stripped) > limit
            and stripped.lstrip().startswith("#")
            and stripped.endswith("----")
        ):
            head = stripped.rstrip("-").rstrip()
            if width(head) + 5 <= limit:
                line = head + " " + "-" * (limit - width(head) - 1)
        elif width(stripped) > limit and (lead := _LEFT_BANNER.match(stripped)) is not None:
            tail = stripped[lead.end() :]
            line = (
                lead.group(1)
                + "-" * max(4, limit - width(lead.group(1)) - width(tail) - 1)
                + " "
                + tail
            )
        out.append(line)
    return "\n".join(out)


def wrap_source(source: str, limit: int = LIMIT) -> str:
    """``source`` with its over-long comment and docstring paragraphs rewrapped (docstrings first)
    and its section banners trimmed; ``source`` itself when the result would not parse to the same
    program."""
    wrapped = trim_banners(wrap_comments(wrap_docstrings(source, limit), limit), limit)
    try:
        same = _program(wrapped) == _program(source)
    except SyntaxError:
        same = False
    return wrapped if same else source


def _program(source: str) -> str:
    """The AST of ``source`` with the whitespace runs of every string made one space."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = " ".join(node.value.split())
    return ast.dump(tree)


def main(argv: list[str] | None = None) -> int:
    """Rewrap the ``.py`` files under the given paths in place (``--check``: only list them; 1 if
    any)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument(
        "--check", action="store_true", help="list the files it would change; change none"
    )
    parser.add_argument("--limit", type=int, default=LIMIT)
    args = parser.parse_args(argv)
    files = sorted(f for p in args.paths for f in ([p] if p.is_file() else p.rglob("*.py")))
    changed = []
    for path in files:
        old = path.read_text(encoding="utf-8")
        new = wrap_source(old, args.limit)
        if new != old:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    print("\n".join(str(p) for p in changed))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
