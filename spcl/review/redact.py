"""Masking of rule-hit spans for ``--redact`` exports: each hit becomes ``[TYPE]``.

Other occurrences of a hit's value are found on the folded view of the text
(:mod:`spcl.detect.folding`), so a copy written with other invisible or look-alike characters
("010\u200b-1234-5678", full-width digits) is hidden too, its invisible characters included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spcl.detect.folding import fold
from spcl.review.labels import ReviewError

MIN_SURFACE = 2
"""Other occurrences of a hit's surface (at least this long) are masked too."""


def check_hits(doc_id: str, text: str, hits: Sequence[Mapping[str, Any]]) -> None:
    """Raise ``ReviewError`` (naming the id and offsets only) when a hit span lies outside
    ``text``."""
    for h in hits:
        if not 0 <= h["start"] < h["end"] <= len(text):
            raise ReviewError(
                f"id {doc_id!r}: hit {h['type']} [{h['start']}, {h['end']}) outside the text"
            )


def redact(
    doc_id: str, text: str, hits: Sequence[Mapping[str, Any]]
) -> tuple[str, list[dict[str, Any]]]:
    """``text`` with every hit span (and every other occurrence of a hit's value, compared on the
    folded view) replaced by ``[TYPE]``.

    Overlapping spans merge into one token named after the earliest-starting (then longest) hit.
    Returns the masked text and the hits re-pointed at their tokens.

    >>> hits = [{"type": "PHONE", "start": 5, "end": 18}]
    >>> redact("d1", "call 010-1234-5678 or 010-1234-5678", hits)[0]
    'call [PHONE] or [PHONE]'
    """
    check_hits(doc_id, text, hits)
    spans = [(int(h["start"]), int(h["end"]), str(h["type"]), dict(h)) for h in hits]
    folded = fold(text)
    view = folded.text if folded is not None else text
    for h in hits:
        surface = text[h["start"] : h["end"]]
        folded_surface = fold(surface)
        key = folded_surface.text if folded_surface is not None else surface
        if len(key.strip()) < MIN_SURFACE:
            continue
        pos = view.find(key)
        while pos >= 0:
            start, end = (
                folded.span(pos, pos + len(key)) if folded is not None else (pos, pos + len(key))
            )
            spans.append((start, end, str(h["type"]), dict(h)))
            pos = view.find(key, pos + 1)
    spans.sort(key=lambda s: (s[0], -s[1], s[2]))
    merged: list[list[Any]] = []
    for start, end, typ, hit in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, typ, hit])
    out: list[str] = []
    new_hits: list[dict[str, Any]] = []
    cursor = 0
    length = 0
    for start, end, typ, hit in merged:
        out.append(text[cursor:start])
        length += start - cursor
        token = f"[{typ}]"
        new_hits.append({**hit, "type": typ, "start": length, "end": length + len(token)})
        out.append(token)
        length += len(token)
        cursor = end
    out.append(text[cursor:])
    return "".join(out), new_hits
