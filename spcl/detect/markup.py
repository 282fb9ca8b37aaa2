"""A decoded view of crawled text for the detectors, with an offset map back to the text.

A crawl is HTML turned into text, and what a reader sees at once a regex does not:
"010-<b>1234</b>-5678", "hong&#64;naver.com", "hong&amp;#64;naver.com" (escaped twice),
"hong%40naver.com", "hong\\u0040naver.com", "03ー1234ー5678", "010 1234 5678", a number wrapped onto
the next line after a hyphen. :func:`decode` undoes these in one scan, before the folding layer
(:mod:`spcl.detect.folding`):

- tags without digits, '@', '%' or '&' in them are dropped: inline ones (``<b>``, ``<span
  class="x">``, ``</a>`` …) to nothing, the others (``<br>``, ``<td>``, ``<p>`` …) to a line break,
  so that table cells never run together into one number; a tag that holds such characters (``<a
  href="mailto:…">``) stays as text, so the detectors still see the value inside it;
- character references, numeric (``&#64;``, ``&#x40;``, with or without ``;``) and named (``&amp;``,
  ``&nbsp;``), also escaped again (``&amp;#64;``), become their character;
- percent-escapes of printable ASCII (``%40``) and literal escapes (``\\u0040``, ``\\x40``) become
  their character;
- between two digits, an ideographic space becomes a space and a dash (``ー``, ``－``, ``–``, ``−``
  …), also one written with a space on each side (``010 - 1234``), a hyphen;
- a line break (and the indentation after it) right after "digit-hyphen" and before a digit is
  dropped.

:meth:`Decoded.span` maps a span of the decoded text back: its start is where the first decoded
character's source begins and its end where the last one's source ends, so the span covers every
source character of the value, the markup inside it included, and nothing of the markup around it. A
text with nothing to decode gets ``None`` (one regex scan).
"""

from __future__ import annotations

import html.entities
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Decoded", "decode", "decode_markup", "join_digits"]

# Inline tags vanish; any other tag becomes a line break (it separates what stands on either side).
_INLINE = frozenset(
    (
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "big",
        "cite",
        "code",
        "del",
        "dfn",
        "em",
        "font",
        "i",
        "ins",
        "kbd",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strike",
        "strong",
        "sub",
        "sup",
        "tt",
        "u",
        "var",
        "wbr",
        "nobr",
    )
)
_NAMED: dict[str, str] = {
    name: value
    for name, value in html.entities.html5.items()
    if name.endswith(";") and len(value) == 1
}
_DIGIT = "0-9０-９"
_DASHES = "ー―‐‑‒–—−－﹣"
_TOKEN = re.compile(
    r"(?P<tag></?(?P<name>[A-Za-z][A-Za-z0-9]{0,15})(?:\s[^<>@&%0-9]{0,300})?/?>)"
    r"|(?P<ent>&(?:amp;){0,3}(?:#[0-9]{1,7};?|#[xX][0-9A-Fa-f]{1,6};?|[A-Za-z][A-Za-z0-9]{1,31};))"
    r"|(?P<pct>%[2-7][0-9A-Fa-f])"
    r"|(?P<esc>\\u[0-9A-Fa-f]{4}|\\x[2-7][0-9A-Fa-f])"
)
_TOKEN_START = re.compile(r"[<&%\\]")
# Second pass, on the folded text (a tag, a reference or an invisible character may stand between a
# digit and a dash). The scan starts at the wide characters themselves (not at every digit or line
# break) and looks behind.
_DIGITS = frozenset("0123456789０１２３４５６７８９")
_WIDE_BETWEEN = re.compile(
    rf"[{_DASHES}\u3000](?:(?<=[{_DIGIT}].)(?=[{_DIGIT}])|(?<=[{_DIGIT}][{_DASHES}])(?=\r?\n)"
    rf"|(?<=[{_DIGIT}] [{_DASHES}])(?= [{_DIGIT}]))"
)
_WRAP = re.compile(rf"\r?\n[ \t]{{0,8}}(?=[{_DIGIT}])")
WRAPPED_NUMBER = re.compile(
    rf"\n(?:(?<=[{_DIGIT}][-{_DASHES}]\n)|(?<=[{_DIGIT}][-{_DASHES}]\r\n))[ \t]{{0,8}}[{_DIGIT}]"
)
"""A number wrapped after a hyphen at the end of a line, as :func:`join_digits` joins it
(``테헤란로 152-`` + newline + ``1990``): the cheap test whether the joined view reads a wrap. It
starts at the newline (the regex engine jumps from one newline to the next) and looks back."""


def _reference(ref: str) -> str | None:
    """The character of an HTML character reference (``&#64;``, ``&amp;#x40;``, ``&nbsp;``), or
    ``None``."""
    body = ref[1:]
    while body.startswith("amp;") and len(body) > 4:
        body = body[4:]
    if body.startswith("#"):
        num = body[1:].rstrip(";")
        try:
            cp = int(num[1:], 16) if num[:1] in "xX" else int(num)
        except ValueError:
            return None
        if cp <= 0 or cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            return None
        return chr(cp)
    return _NAMED.get(body)


def _replacement(m: re.Match[str]) -> str | None:
    """What the token ``m`` decodes to ('' drops it), or ``None`` to keep it as written."""
    kind = m.lastgroup
    raw = m.group()
    if kind == "tag":
        return "" if m.group("name").lower() in _INLINE else "\n"
    if kind == "ent":
        return _reference(raw)
    if kind == "pct":
        ch = chr(int(raw[1:], 16))
        return ch if ch.isprintable() else None
    if kind == "esc":
        ch = chr(int(raw[2:], 16))
        return ch if ch.isprintable() else None
    return None


@dataclass(frozen=True, slots=True)
class Decoded:
    """The decoded ``text`` and its map back to the original.

    Segment ``i`` starts at decoded offset ``seg_dec[i]`` and covers the original ``[seg_orig[i],
    seg_end[i])``; a segment whose decoded and original lengths agree maps one for one, any other is
    one decoded character standing for its whole source. Between two segments lie dropped characters
    (tags, line breaks).
    """

    text: str
    seg_dec: tuple[int, ...]
    seg_orig: tuple[int, ...]
    seg_end: tuple[int, ...]
    inner: Decoded | None = None
    """The view this one decoded further (offsets go through it back to the original), or
    ``None``."""

    def _seg(self, pos: int) -> int:
        return bisect_right(self.seg_dec, pos) - 1

    def start(self, pos: int) -> int:
        """The original offset where decoded character ``pos`` begins."""
        i = self._seg(pos)
        nxt = self.seg_dec[i + 1] if i + 1 < len(self.seg_dec) else len(self.text)
        if nxt - self.seg_dec[i] == self.seg_end[i] - self.seg_orig[i]:
            out = self.seg_orig[i] + pos - self.seg_dec[i]
        else:
            out = self.seg_orig[i]
        return out if self.inner is None else self.inner.start(out)

    def end(self, pos: int) -> int:
        """The original offset where decoded character ``pos - 1`` ends (``pos > 0``)."""
        i = self._seg(pos - 1)
        nxt = self.seg_dec[i + 1] if i + 1 < len(self.seg_dec) else len(self.text)
        if nxt - self.seg_dec[i] == self.seg_end[i] - self.seg_orig[i]:
            out = self.seg_orig[i] + pos - self.seg_dec[i]
        else:
            out = self.seg_end[i]
        return out if self.inner is None else self.inner.end(out)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original half-open span of the non-empty decoded span ``[start, end)``.

        >>> d = decode("tel 010-<b>1234</b>-5678.")
        >>> d.text, d.span(4, 17)
        ('tel 010-1234-5678.', (4, 24))
        """
        return self.start(start), self.end(end)


def decode(text: str) -> Decoded | None:
    """The decoded view of ``text`` (:func:`decode_markup`, then :func:`join_digits`), or ``None``
    when there is nothing to decode.

    >>> decode("mail hong&amp;#64;naver.com").text
    'mail hong@naver.com'
    >>> decode("tel 03ー<b>1234</b>ー5678").text
    'tel 03-1234-5678'
    >>> decode("plain text, 3 < 4 & 5 > 2") is None
    True
    """
    first = decode_markup(text)
    second = join_digits(text if first is None else first.text)
    if second is None:
        return first
    return Decoded(second.text, second.seg_dec, second.seg_orig, second.seg_end, first)


def decode_markup(text: str) -> Decoded | None:
    """``text`` with tags dropped and references and escapes decoded, or ``None`` when it holds
    none."""
    if "<" not in text and "&" not in text and "%" not in text and "\\" not in text:
        return None
    return _decode_pass(text, _TOKEN, None, _TOKEN_START)


def join_digits(text: str) -> Decoded | None:
    """``text`` with dashes and ideographic spaces between digits folded and hyphen-wrapped lines
    joined (run it on the folded text, so that an invisible character between a digit and a dash is
    gone)."""
    edits: list[tuple[int, int, str]] = []
    # isascii() costs nothing on ASCII text
    wide = () if text.isascii() else _WIDE_BETWEEN.finditer(text)
    for m in wide:  # stops only at the wide characters, checks the digits around them
        i = m.start()
        if text[i] == "\u3000":
            edits.append((i, i + 1, " "))
        elif text[i - 1] == " ":
            edits.append((i - 1, i + 2, "-"))  # "0 ー 1"
        else:
            edits.append((i, i + 1, "-"))
            if (w := _WRAP.match(text, i + 1)) is not None:
                edits.append((i + 1, w.end(), ""))
    # a substring search each
    for needle in (" - ", "-\n", "-\r\n") if "\r" in text else (" - ", "-\n"):
        pos = 0
        while (i := text.find(needle, pos)) != -1:
            pos = i + 1
            if not (i and text[i - 1] in _DIGITS):
                continue
            if needle == " - ":
                if text[i + 3 : i + 4] in _DIGITS:
                    edits.append((i, i + 3, "-"))
            elif (w := _WRAP.match(text, i + 1)) is not None:
                edits.append((i + 1, w.end(), ""))
    if not edits:
        return None
    edits.sort()
    return _build(text, edits, None)


def _tokens(
    text: str, pattern: re.Pattern[str], start: re.Pattern[str] | None
) -> Iterator[re.Match[str]]:
    """``pattern``'s matches in ``text``; with ``start`` (the class of their first characters) tried
    only where it matches: a pattern whose alternatives start inside named groups gets no
    first-character scan from ``re`` and would be tried at every position (about six times slower on
    prose)."""
    if start is None:
        yield from pattern.finditer(text)
        return
    pos = 0
    while (c := start.search(text, pos)) is not None:
        m = pattern.match(text, c.start())
        if m is None:
            pos = c.start() + 1
            continue
        yield m
        pos = max(m.end(), c.start() + 1)


def _decode_pass(
    text: str, pattern: re.Pattern[str], inner: Decoded | None, start: re.Pattern[str] | None = None
) -> Decoded | None:
    """One decoding pass of ``pattern``'s tokens over ``text`` (a view of ``inner``), ``None`` if
    none."""
    edits: list[tuple[int, int, str]] = []
    for m in _tokens(text, pattern, start):
        rep = _replacement(m)
        if rep is not None:
            edits.append((m.start(), m.end(), rep))
    return _build(text, edits, inner) if edits else None


def _build(text: str, edits: list[tuple[int, int, str]], inner: Decoded | None) -> Decoded:
    """``text`` with each ``(start, end, replacement)`` of ``edits`` (sorted, disjoint) applied,
    and its map."""
    pieces: list[str] = []
    seg_dec: list[int] = []
    seg_orig: list[int] = []
    seg_end: list[int] = []
    pos = dlen = 0  # text[:pos] is decoded into pieces; dlen = decoded length so far

    def keep(a: int, b: int) -> None:  # text[a:b] unchanged
        nonlocal dlen
        if b > a:
            pieces.append(text[a:b])
            if seg_dec and seg_end[-1] == a and dlen - seg_dec[-1] == a - seg_orig[-1]:
                seg_end[-1] = b  # extend a one-for-one segment
            else:
                seg_dec.append(dlen)
                seg_orig.append(a)
                seg_end.append(b)
            dlen += b - a

    for s, e, rep in edits:
        if s < pos:
            continue  # overlaps the edit before (never for the passes here)
        keep(pos, s)
        if rep:
            pieces.append(rep)
            seg_dec.append(dlen)
            seg_orig.append(s)
            seg_end.append(e)
            dlen += len(rep)
        pos = e
    keep(pos, len(text))
    if not seg_dec:  # everything dropped
        seg_dec, seg_orig, seg_end = [0], [len(text)], [len(text)]
    return Decoded("".join(pieces), tuple(seg_dec), tuple(seg_orig), tuple(seg_end), inner)
