"""Per-run allow- and deny-lists of person names: words never to mask, names always to mask.

An allow-list (public figures, brand names, words the finders mistake for names) removes ``PERSON``
rows whose value is on it, whichever source gave them (the model, the rules backend, the CPU name
finders); a deny-list adds a ``PERSON`` row for every whole-word occurrence of each of its names.
Values compare after NFC normalisation and case folding. Both come from the CLI (``--allow-name``,
``--deny-name``) or a YAML file (``--names-config``):

    names:
      allow: [Apple, Taylor Swift]
      deny: [Kim Minji]

Only PERSON rows are touched: an allowed value found by a rule detector (a phone number) is still
masked, and a flagging rule hit left unmasked fails the document closed as before. The lists' values
never reach logs or manifests: the manifest records their sizes and a SHA-256 of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from spcl.errors import UsageError
from spcl.mask.words import is_whole_word
from spcl.text import normalize

__all__ = [
    "NameListError",
    "apply_name_lists",
    "load_name_lists",
    "name_lists_record",
    "validate_names",
]


class NameListError(UsageError, ValueError):
    """A names configuration is malformed (the message names the key, never a value)."""


def _key(value: str) -> str:
    return normalize(value).strip().casefold()


def validate_names(values: Iterable[object], what: str) -> tuple[str, ...]:
    """``values`` as a tuple of NFC, stripped, non-empty strings (first occurrence order, no
    duplicates)."""
    out: list[str] = []
    seen: set[str] = set()
    for i, v in enumerate(values):
        if not isinstance(v, str) or not v.strip():
            raise NameListError(f"{what}[{i}] must be a non-empty string")
        if _key(v) not in seen:
            seen.add(_key(v))
            out.append(normalize(v).strip())
    return tuple(out)


def load_name_lists(path: str | Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(allow, deny)`` of a YAML file with a ``names:`` mapping of ``allow``/``deny`` lists (both
    optional); any other key, a non-list or a non-string entry is a :class:`NameListError`."""
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise NameListError(
            f"cannot read names configuration {path}: {type(err).__name__}"
        ) from err
    if not isinstance(doc, dict) or set(doc) != {"names"} or not isinstance(doc["names"], dict):
        raise NameListError(
            f"{path}: expected one top-level mapping 'names' with 'allow' and/or 'deny'"
        )
    section = doc["names"]
    unknown = sorted(set(section) - {"allow", "deny"})
    if unknown:
        raise NameListError(f"{path}: unknown key(s) under names: {', '.join(map(str, unknown))}")
    lists = []
    for key in ("allow", "deny"):
        value = section.get(key) or []
        if not isinstance(value, list):
            raise NameListError(f"{path}: names.{key} must be a list of strings")
        lists.append(validate_names(value, f"names.{key}"))
    return lists[0], lists[1]


def check_disjoint(allow: Sequence[str], deny: Sequence[str]) -> None:
    """A value on both lists is a :class:`NameListError` (which should win is the user's to say)."""
    both = {_key(v) for v in allow} & {_key(v) for v in deny}
    if both:
        raise NameListError(f"{len(both)} name(s) are on both the allow-list and the deny-list")


def apply_name_lists(
    text: str, rows: list[tuple[str, str]], allow: Sequence[str], deny: Sequence[str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(rows less the allowed PERSON rows, PERSON rows of the deny-list's whole-word occurrences
    in text)``.

    >>> apply_name_lists("Ask Apple or Kim Minji.", [("PERSON", "Apple")], ["apple"], ["Kim Minji"])
    ([], [('PERSON', 'Kim Minji')])
    """
    allowed = {_key(v) for v in allow}
    kept = [(t, v) for t, v in rows if not (t == "PERSON" and _key(v) in allowed)]
    denied: list[tuple[str, str]] = []
    if deny:
        folded = text.casefold() if len(text.casefold()) == len(text) else None
        for name in deny:
            needle = name.casefold() if folded is not None else name
            hay = folded if folded is not None else text
            at = hay.find(needle)
            while at >= 0:
                end = at + len(needle)
                if (
                    is_whole_word(text, at, end)
                    and (surface := text[at:end])
                    and ("PERSON", surface) not in denied
                ):
                    denied.append(("PERSON", surface))
                at = hay.find(needle, at + 1)
    return kept, denied


def name_lists_record(allow: Sequence[str], deny: Sequence[str]) -> dict[str, object]:
    """What a manifest records of the lists: their sizes and a SHA-256 of their sorted values (no
    values)."""
    body = json.dumps(
        {"allow": sorted(allow), "deny": sorted(deny)}, ensure_ascii=False, sort_keys=True
    )
    return {
        "allow": len(allow),
        "deny": len(deny),
        "sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
    }
