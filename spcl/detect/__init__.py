"""Rule detectors: regexes plus check-digit validators for PII in NFC web text (ja/ko/en).

``find_pii(text)`` is the one-call entry point; ``build_detectors(settings)`` builds the detector
set once per worker and its ``find(text)`` is the fast path the Spark job calls per document. Both
return hits sorted by ``(start, -end)``, with overlaps resolved so that each span is reported once.

Reporting rule: ``validated`` True or None is reported; False (a failed check digit or calendar
date) only with ``keep_invalid``. Per type:
PHONE/EMAIL/ACCOUNT/POSTAL/ADDRESS/PASSPORT/DRIVER_LICENSE are always None (no checksum); RRN
True/None (False only for impossible dates); MYNUMBER, CARD, IBAN (mod 97), SSN and ITIN (issuable
area/group/serial) True/False; DOB True/False (calendar); IP True (public addresses only, unless
``ip_private``); CREDENTIAL None, True for a JWT that decodes, False for placeholders.

Crawled text is read as a person reads it: markup is decoded first (:mod:`spcl.detect.markup`: tags
inside a value, ``&#64;``/``&amp;#64;``, ``%40``, ``\\u0040``, dashes and ideographic spaces between
digits, a number wrapped after a hyphen), then invisible and look-alike characters (zero-width
spaces, soft hyphens, marks after digits, mathematical or full-width digits) are folded away
(:mod:`spcl.detect.folding`), and hits are mapped back, so a span covers the whole written value in
the NFC text, the markup inside it included.

Speed: the seven numeric detectors run only inside "number clusters" (one character-class scan for
runs of >= 7 digits and separators); EMAIL, DOB, POSTAL and ADDRESS anchor on their own cue
characters ('@', birth words, 〒/우편, a road name + number, 都道府県), so a typical 1.5 KB document
costs a few regex scans. ``tests/detect/test_engine.py`` checks that this fast path returns exactly
what running every detector over the whole text returns.

Example (a doctest):

    >>> [(h.type, h.validated) for h in find_pii("연락처 010-1234-5678, 주민번호 900101-1234568")]
    [('PHONE', None), ('RRN', True)]
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from importlib import import_module
from itertools import pairwise

from spcl.config import PII_TYPES, DetectSettings
from spcl.detect.base import Detector, Hit, NumericDetector
from spcl.detect.folding import Folded, fold
from spcl.detect.markup import WRAPPED_NUMBER, Decoded, decode_markup, join_digits
from spcl.rule_types import BY_NAME, RULE_TYPES

__all__ = [
    "TYPE_PRIORITY",
    "Detector",
    "DetectorSet",
    "Hit",
    "NumericDetector",
    "build_detectors",
    "find_pii",
    "resolve_overlaps",
]


def _detector_class(path: str) -> type:
    module, _, name = path.partition(":")
    return getattr(import_module(module), name)


DETECTORS: dict[str, type] = {t.name: _detector_class(t.detector) for t in RULE_TYPES}
"""The detector class of each PII type in ``spcl.config.PII_TYPES`` (registered in
``spcl.rule_types``)."""

TYPE_PRIORITY: dict[str, int] = {t.name: t.rank for t in RULE_TYPES}
"""Last tie-breaker between overlapping hits (lower wins), after validation and span length."""

# Numeric detectors run only inside "number clusters": maximal runs of digits and the separators a
# number may hold, found by one scan. A cluster shorter than a detector's shortest form is skipped.
# A detector is numeric when it takes clusters (``find_in``, :class:`NumericDetector`).
_NUMERIC = frozenset(
    t for t, cls in DETECTORS.items() if hasattr(cls, "find_in") and hasattr(cls, "min_len")
)
# >= 7 characters (shorter runs hold no PII); ASCII and full-width digits. A leading "+" or "(" is
# added in Python: an optional first character would cost the scan its fast first-character search.
_CLUSTER = re.compile(r"[0-9０-９][-0-9０-９‐‑‒–—−－.．() ー―﹣\u3000]{6,}")
# A cluster the between-digits view changes: a dash or space the detectors' separators do not take
# (a number wrapped after a hyphen is found by markup.WRAPPED_NUMBER, whatever its length).
_JOINABLE = re.compile("[ー―﹣‒—\u3000]")
_VALIDATION_RANK = {True: 2, None: 1, False: 0}


def resolve_overlaps(hits: list[Hit]) -> list[Hit]:
    """Keep one hit per overlapping group, sorted by ``(start, -end)``.

    Preference: ``validated=True`` over ``None`` over ``False``, then the longer span, then
    :data:`TYPE_PRIORITY`, then the earlier start and the detector name (so the answer is
    deterministic).

    >>> a = Hit("ACCOUNT", 0, 14, None, "account@1"); b = Hit("RRN", 0, 14, True, "rrn_kr@1")
    >>> resolve_overlaps([a, b]) == [b]
    True
    """
    if len(hits) <= 1:
        return hits
    hits.sort(key=lambda h: (h.start, -h.end))
    if all(a.end <= b.start for a, b in pairwise(hits)):
        return hits
    ranked = sorted(
        hits,
        key=lambda h: (
            -_VALIDATION_RANK[h.validated],
            h.start - h.end,
            TYPE_PRIORITY.get(h.type, 99),
            h.start,
            h.detector,
        ),
    )
    starts: list[int] = []
    kept: list[Hit] = []  # disjoint, sorted by start
    for h in ranked:
        i = bisect_right(starts, h.start)
        if i and kept[i - 1].end > h.start:
            continue
        if i < len(kept) and kept[i].start < h.end:
            continue
        starts.insert(i, h.start)
        kept.insert(i, h)
    return kept


class DetectorSet:
    """The detectors one settings object switches on, with prefilters and overlap resolution.

    Build it once per worker (compiled regexes are module-level and shared) and call :meth:`find`
    per document.
    """

    def __init__(self, settings: DetectSettings) -> None:
        self.settings = settings
        langs = set(settings.languages)
        on = [t for t in PII_TYPES if t in settings.types and langs & set(BY_NAME[t].languages)]
        self.numeric: list[NumericDetector] = [DETECTORS[t](settings) for t in on if t in _NUMERIC]
        self.other: list[Detector] = [DETECTORS[t](settings) for t in on if t not in _NUMERIC]

    @property
    def detectors(self) -> list[Detector]:
        """Every detector in this set."""
        return [*self.numeric, *self.other]

    def find(self, text: str) -> list[Hit]:
        """All hits in ``text`` (NFC), overlaps resolved, sorted by ``(start, -end)``.

        The detectors run on the decoded view of the text (:mod:`spcl.detect.markup`: tags dropped,
        character references, percent-escapes and literal escapes decoded, dashes and ideographic
        spaces between digits folded, hyphen-wrapped lines joined), folded
        (:mod:`spcl.detect.folding`: invisible characters dropped, look-alike digits folded), and
        each hit is mapped back, so that its span covers the whole written value in ``text``, the
        markup and invisible characters inside it included. When decoding changed the text, the
        folded text as written is read as well and both views' hits are merged (decoding never loses
        a hit).

        >>> build_detectors(DetectSettings(types=("EMAIL",))).find("a@mailbox.com 010-1234-5678")
        [Hit(type='EMAIL', start=0, end=13, validated=None, detector='email@1')]
        >>> build_detectors().find("tel 010\u200b1234\u200b5678")
        [Hit(type='PHONE', start=4, end=17, validated=None, detector='phone_kr@1')]
        >>> build_detectors().find("tel 010-<b>1234</b>-5678")
        [Hit(type='PHONE', start=4, end=24, validated=None, detector='phone_kr@1')]
        """
        markup = decode_markup(text)
        view = text if markup is None else markup.text
        folded = fold(view)
        view = view if folded is None else folded.text
        needs_join: list[bool] = []
        hits = self.find_folded(view, needs_join)
        # a number cluster holds a wide dash or space, " - ", or a number is wrapped after a hyphen
        if needs_join or WRAPPED_NUMBER.search(view):
            joined = join_digits(view)
            # hits on the joined view, merged with those on the view as it was
            if joined is not None:
                hits = resolve_overlaps(_mapped(self.find_folded(joined.text), (joined,)) + hits)
        hits = _mapped(hits, (markup, folded))
        if markup is None:
            return hits
        # Decoding may also join what belongs apart ("Tel<b>010-…" reads "Tel010-…"): the text as
        # written is read too (folded), and the hits of both are merged, so decoding never loses a
        # hit the text gives.
        folded = fold(text)
        written = _mapped(self.find_folded(text if folded is None else folded.text), (folded,))
        return resolve_overlaps(hits + written) if written else hits

    def find_folded(self, text: str, needs_join: list[bool] | None = None) -> list[Hit]:
        """All hits in an already folded ``text`` (offsets into it), overlaps resolved.

        ``needs_join`` (a list) gets ``True`` appended when a number cluster holds a character that
        :func:`spcl.detect.markup.join_digits` would fold (the detectors then read the joined view
        too).
        """
        hits: list[Hit] = []
        if self.numeric:
            n = len(text)
            for m in _CLUSTER.finditer(text):
                s, e = m.span()
                if (
                    needs_join is not None
                    and not needs_join
                    and (_JOINABLE.search(text, s, e) or " - " in m.group())
                ):
                    needs_join.append(True)
                if s and text[s - 1] in "+(（":
                    s -= 1
                e = min(n, e + 2)  # let the right-hand lookarounds see past the cluster
                for d in self.numeric:
                    if e - s >= d.min_len:
                        hits += d.find_in(text, s, e)
        for other in self.other:  # each gates itself on one-character searches for its cue words
            hits += other.find(text)
        return resolve_overlaps(hits)


def _mapped(hits: list[Hit], views: tuple[Decoded | Folded | None, ...]) -> list[Hit]:
    """``hits`` on the last of ``views`` mapped back through each view (``None``: that step
    changed nothing)."""
    for view in reversed(views):
        if view is not None:
            hits = [Hit(h.type, *view.span(h.start, h.end), h.validated, h.detector) for h in hits]
    return hits


def build_detectors(settings: DetectSettings | None = None) -> DetectorSet:
    """The detector set for ``settings`` (defaults when ``None``): build once, reuse over many
    texts."""
    return DetectorSet(settings if settings is not None else DetectSettings())


@lru_cache(maxsize=16)
def _cached(settings: DetectSettings) -> DetectorSet:
    return DetectorSet(settings)


_DEFAULT = DetectSettings()


def find_pii(text: str, settings: DetectSettings | None = None) -> list[Hit]:
    """All rule hits in the NFC ``text``, sorted by ``(start, -end)``, one hit per span.

    The detector set is cached per settings object (the default settings included), so repeated
    calls cost only the matching.

    >>> find_pii("mail kim@mailbox.com")
    [Hit(type='EMAIL', start=5, end=20, validated=None, detector='email@1')]
    >>> find_pii("mail kim@example.com")  # a documentation domain (``detect.email_allow_domains``)
    []
    """
    return _cached(settings if settings is not None else _DEFAULT).find(text)
