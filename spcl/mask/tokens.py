"""Placeholder tokens ``[TYPE_n]``: their shape, the names a source already uses, and
restoration."""

from __future__ import annotations

import re

TOKEN_RE = re.compile(r"\[[A-Z][A-Z0-9_]*_[0-9]+\]")


def format_token(type_: str, n: int) -> str:
    """The token text for the ``n``-th surface of ``type_``: ``format_token("PERSON", 2) ==
    "[PERSON_2]"``."""
    return f"[{type_}_{n}]"


def reserved_tokens(text: str) -> frozenset[str]:
    """Token-shaped strings already present in ``text``: never assigned, never restored."""
    return frozenset(TOKEN_RE.findall(text))


class TokenAllocator:
    """Hands out ``[TYPE_n]`` per type in call order, skipping names in ``reserved``.

    The same ``(type, surface)`` always gets the same token; a different surface gets a new one.
    """

    def __init__(self, reserved: frozenset[str]) -> None:
        self._reserved = reserved
        self._next: dict[str, int] = {}
        self._by_surface: dict[tuple[str, str], str] = {}

    def token(self, type_: str, surface: str) -> tuple[str, bool]:
        """The token of ``surface`` under ``type_`` and whether it is new."""
        key = (type_, surface)
        have = self._by_surface.get(key)
        if have is not None:
            return have, False
        n = self._next.get(type_, 1)
        while format_token(type_, n) in self._reserved:
            n += 1
        self._next[type_] = n + 1
        tok = format_token(type_, n)
        self._by_surface[key] = tok
        return tok, True


def reassemble_text(masked_text: str, mapping: dict[str, str]) -> str:
    """Replace every known token of ``mapping`` by its surface, once; unknown tokens stay as they
    are.

    Keys that are not ``[TYPE_n]`` tokens (the replacements of ``spcl.mask.operators``: surrogates,
    keyed hashes) are found by one left-to-right scan, longest first, together with the tokens.

    >>> reassemble_text("[PERSON_2] / [PERSON_1]", {"[PERSON_2]": "김가상"})
    '김가상 / [PERSON_1]'
    """
    others = sorted(
        (k for k in mapping if k and not TOKEN_RE.fullmatch(k)), key=lambda k: (-len(k), k)
    )
    if not others:
        return TOKEN_RE.sub(lambda m: mapping.get(m.group(0), m.group(0)), masked_text)
    # replacements that are not tokens (surrogates, keyed hashes): one left-to-right scan, longest
    # first
    pattern = re.compile("|".join([*map(re.escape, others), TOKEN_RE.pattern]))
    return pattern.sub(lambda m: mapping.get(m.group(0), m.group(0)), masked_text)
