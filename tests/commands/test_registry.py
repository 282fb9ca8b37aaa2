"""The CLI's command registry: each command's module registers exactly the commands the registry
names for it, with the registry's help line, and running one command imports no other command."""

from __future__ import annotations

import argparse
import subprocess
import sys

from spcl.cli import COMMANDS, build_parser, parser_for


def _choices(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {action.dest: action.help for action in sub._choices_actions}
    return {name: helps.get(name) for name in sub.choices}


def test_registry_matches_the_parsers() -> None:
    assert _choices(build_parser()) == {name: command.help for name, command in COMMANDS.items()}


def test_help_without_a_command_lists_the_same_commands() -> None:
    assert _choices(parser_for(["--help"])) == _choices(build_parser())


def test_one_command_loads_only_its_module() -> None:
    code = (
        "import sys; from spcl.cli import parser_for; parser_for(['vault', 'keygen', 'k']); "
        "print(sorted(m for m in sys.modules if m.startswith('spcl.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['spcl.commands.vault']"
