"""The documentation: generated reference pages are current, runnable examples run and print what
they show, every CLI flag is documented, and no team-internal text reaches README.md, docs/, conf/,
models/ or spcl/.

A block marked ``<!-- runnable -->`` (on the line before its fence) in README.md or docs/ is
executed:

- ``pycon`` blocks as doctests (``>>>`` lines; the printed output must match, ``...`` elides);
- ``console`` blocks as shell sessions: each ``$ command`` runs in bash (``spcl`` is this checkout's
  CLI) and its standard output must match the lines shown under it, where a line ``…`` (or ``…``
  inside a line) stands for anything. The console blocks of one page run in order in one temporary
  folder (``data/`` linked in), so a page can build on its earlier steps, as a reader would.
"""

from __future__ import annotations

import argparse
import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools import gen_docs

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])
FENCE = re.compile(r"<!-- runnable -->\n```(\w+)\n(.*?)\n```", re.S)


def runnable_blocks(page: Path) -> list[tuple[str, str]]:
    """The (language, body) of every block marked runnable on one page, in page order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(page.read_text("utf-8"))]


def _pages_with(lang: str) -> list[Path]:
    return [p for p in PAGES if any(lg == lang for lg, _ in runnable_blocks(p))]


def test_generated_reference_pages_are_current() -> None:
    """docs/reference/cli.md and configuration.md are what `python -m tools.gen_docs` writes from
    the code."""
    assert gen_docs.stale_pages() == [], "run: python -m tools.gen_docs"


def test_stale_page_is_noticed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checked-in page that lacks a flag is reported stale (the check compares, it does not
    just run)."""
    page = tmp_path / "cli.md"
    page.write_text(gen_docs.cli_page().replace("--overwrite", "--overwrit"), encoding="utf-8")
    monkeypatch.setattr(gen_docs, "PAGES", {page: gen_docs.cli_page})
    assert gen_docs.stale_pages() == [page]
    assert gen_docs.main(["--check"]) == 1


def test_every_cli_flag_is_in_the_reference() -> None:
    """Every option string and subcommand of the parser appears in the CLI reference page."""
    from spcl.cli import build_parser

    text = (DOCS / "reference" / "cli.md").read_text("utf-8")
    missing = []
    stack = [build_parser()]
    while stack:
        parser = stack.pop()
        if f"`{parser.prog}`" not in text:
            missing.append(parser.prog)
        for action in parser._actions:
            # hidden options (a job's internal flag) are not documented
            if action.help != argparse.SUPPRESS:
                missing += [f"{parser.prog} {o}" for o in action.option_strings if o not in text]
            if isinstance(action, argparse._SubParsersAction):
                stack += list({id(p): p for p in action.choices.values()}.values())
    assert missing == []


def test_every_config_key_is_in_the_reference() -> None:
    """Every key of every section of the configuration models has its row in the configuration
    reference."""
    from spcl.config import Settings

    text = (DOCS / "reference" / "configuration.md").read_text("utf-8")
    missing = [
        f"{section}.{name}"
        for section, field in Settings.model_fields.items()
        for name in field.annotation.model_fields
        if f"## `{section}`" not in text or f"| `{name}` |" not in text
    ]
    assert missing == []


def test_yaml_comments_become_descriptions(tmp_path: Path) -> None:
    """A key's comment in the YAML config (and its continuation line) is read as its description."""
    conf = tmp_path / "c.yaml"
    conf.write_text(
        "input:\n  text_field: text   # where the text is\n                     # (a string)\n"
        "  # id_field: id      # the id\nspark:\n  master: x\n",
        encoding="utf-8",
    )
    assert gen_docs.yaml_comments(conf) == {
        ("input", "text_field"): "where the text is (a string)",
        ("input", "id_field"): "the id",
    }


@pytest.mark.parametrize("page", _pages_with("pycon"), ids=lambda p: str(p.relative_to(ROOT)))
def test_runnable_python_examples(page: Path) -> None:
    """Each runnable pycon block of a page runs as a doctest and prints what the page shows."""
    blocks = [body for lang, body in runnable_blocks(page) if lang == "pycon"]
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    cwd = os.getcwd()
    os.chdir(ROOT)  # examples name paths from the repository root (models/, data/)
    try:
        for i, body in enumerate(blocks):
            test = parser.get_doctest(body, {}, f"{page.name}[{i}]", str(page), 0)
            runner.run(test)
    finally:
        os.chdir(cwd)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0


def _console_steps(body: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of each ``$ `` line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def output_matches(expected: list[str], actual: str) -> bool:
    """Whether the output matches the lines shown: ``…`` stands for any text, also across lines."""
    pattern = ".*?".join(
        re.escape(part) for part in "\n".join(x.rstrip() for x in expected).split("…")
    )
    actual = "\n".join(x.rstrip() for x in actual.strip("\n").splitlines())
    return re.fullmatch(pattern.strip("\n"), actual, re.S) is not None


def test_output_matching_is_strict() -> None:
    """The console comparison fails on a changed number and accepts only the elided parts."""
    assert output_matches(["a: 1", "…", "z: 3"], "a: 1\nb: 2\nc: 9\nz: 3")
    assert not output_matches(["a: 1", "…", "z: 3"], "a: 1\nb: 2\nz: 4")
    assert output_matches(["took … s"], "took 9.5 s")
    assert not output_matches(["wrote out/report.html"], "wrote out/report.htm")


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages_with("console"), ids=lambda p: str(p.relative_to(ROOT)))
def test_runnable_console_examples(page: Path, tmp_path: Path) -> None:
    """Each command of a page's runnable console blocks succeeds and prints what the page shows."""
    (tmp_path / "data").symlink_to(ROOT / "data")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SPCL_PROGRESS": "0",
    }
    prelude = f'spcl() {{ "{sys.executable}" -m spcl.cli "$@"; }}\n'
    exports: list[str] = []
    for lang, body in runnable_blocks(page):
        if lang != "console":
            continue
        for command, expected in _console_steps(body):
            script = prelude + "".join(exports) + command
            done = subprocess.run(
                ["bash", "-c", script],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, (
                f"{command!r} exited {done.returncode}: {done.stderr[-2000:]}"
            )
            assert output_matches(expected, done.stdout), f"{command!r} printed:\n{done.stdout}"
            if command.startswith("export "):
                exports.append(command + "\n")


# Team-internal text that must not reach users: paths into the team's shared folder, and issue
# references.
INTERNAL = re.compile(r"\.\./shared|(?i:\bissues?[ _-]?#?\d+)|(?:(?<=\s)|(?<=\())#\d+\b(?![;}\w])")
SCANNED = ("README.md", "docs", "conf", "models", "spcl")
# Paths exempt from the check (none today; a path added here needs a reason beside it).
EXEMPT: tuple[str, ...] = ()


def internal_references(skip: tuple[str, ...] = ()) -> list[str]:
    """``path:line: text`` of every team-internal reference in the scanned paths, except those
    under ``skip``."""
    found = []
    for top in SCANNED:
        base = ROOT / top
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in files:
            rel = str(path.relative_to(ROOT))
            if rel.startswith(skip) or path.suffix not in {
                ".md",
                ".py",
                ".json",
                ".yaml",
                ".yml",
                ".txt",
                "",
            }:
                continue
            for n, line in enumerate(path.read_text("utf-8", errors="replace").splitlines(), 1):
                if INTERNAL.search(line):
                    found.append(f"{rel}:{n}: {line.strip()[:120]}")
    return found


def test_internal_reference_pattern() -> None:
    """The pattern finds each form of an internal reference and leaves ordinary text alone."""
    for bad in (
        "see ../shared/data/x",
        "Issue 23",
        "(issue 23)",
        "issue23_japanese_safety",
        "fixed in #23",
    ):
        assert INTERNAL.search(bad), bad
    for fine in (
        "an issue with 2 inputs",
        "colour #fff",
        "&#123;",
        "page 23",
        "https://x/a#23",
        "color:#222;",
        "mail a&amp;#64;b",
        "shadow 0 4px #0004}",
    ):
        assert not INTERNAL.search(fine), fine


def test_no_internal_references_in_what_users_read() -> None:
    """README.md, docs/, conf/, models/ and spcl/ hold no ../shared path and no issue number."""
    assert internal_references(skip=EXEMPT) == []
