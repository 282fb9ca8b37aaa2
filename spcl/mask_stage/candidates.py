"""What the masker masks in one document: the stages add up, never fewer.

``candidates = extractor rows ∪ rule hits ∪ CPU name finders``:

- **extractor**: the accepted ``(TYPE, VALUE)`` rows of the backend's answer
  (``spcl.extract.contract``);
- **rules**: the filter's rule hits (the flagged row's ``hits`` column, ``validated`` not False)
  *and* the detectors run again on the NFC text — both, always: the second costs ~0.1 ms per
  document and covers input without ``hits`` columns, hits whose offsets do not fit the text, and
  detectors newer than the filter run;
- **names**: the rules backend's person-name finders (MeCab / mecab-ko / English cues), where
  enabled.

Rule hits whose type flags a document (the row's ``rule:TYPE`` reasons; the default policy when the
row has none) are *required*: the release check (``spcl.mask_stage.release``) refuses the document
unless every one of them lies inside masked spans.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from spcl.config import PolicySettings
from spcl.detect import find_pii
from spcl.entity_types import RULE_HIT_TYPES
from spcl.extract.names import find_person_names
from spcl.mask.variants import (
    alternatives,
    canonical_alternatives,
    normalize_type,
    normalize_value,
    scan_all,
)
from spcl.mask_stage.name_lists import apply_name_lists
from spcl.rule_types import HitRow

SOURCES: tuple[str, ...] = ("extractor", "rules", "names")


@dataclass(frozen=True, slots=True)
class RuleHit:
    """One rule hit at ``[start, end)`` of the NFC text: its entity ``type`` and whether it flags
    the document."""

    type: str
    start: int
    end: int
    flagging: bool


def _flag_types(reasons: Sequence[str] | None) -> set[str] | None:
    if reasons is None:
        return None
    return {r.split(":", 1)[1] for r in reasons if r.startswith("rule:")}


def rule_hits(
    text: str,
    column_hits: Sequence[HitRow] | None = None,
    reasons: Sequence[str] | None = None,
) -> list[RuleHit]:
    """The rule hits of NFC ``text``: the filter's ``column_hits`` that fit the text ∪ the detectors
    run again.

    A hit whose validator said False is dropped. A hit is ``flagging`` when its detector type is
    among the row's ``rule:TYPE`` ``reasons`` or, for hits found again here (and rows without
    reasons), when the default policy flags its type. Sorted by ``(start, end, type)``, one entry
    per ``(start, end, type)``.
    """
    policy = PolicySettings()
    flag_types = _flag_types(reasons)
    found: dict[tuple[int, int, str], bool] = {}

    def add(det_type: str, start: int, end: int, validated: bool | None, from_column: bool) -> None:
        if validated is False or not (0 <= start < end <= len(text)):
            return
        etype = RULE_HIT_TYPES.get(det_type, det_type)
        by_reasons = from_column and flag_types is not None
        flagging = det_type in (flag_types or ()) if by_reasons else _policy_flags(policy, det_type)
        key = (start, end, etype)
        found[key] = found.get(key, False) or flagging

    for h in column_hits or ():
        try:
            add(str(h["type"]), int(h["start"]), int(h["end"]), h.get("validated"), True)
        except (KeyError, TypeError, ValueError):
            continue  # a malformed hit record: the detectors below find the value again
    for hit in find_pii(text):
        add(hit.type, hit.start, hit.end, hit.validated, False)
    return [RuleHit(t, s, e, f) for (s, e, t), f in sorted(found.items())]


def _policy_flags(policy: Any, det_type: str) -> bool:
    try:
        return bool(policy.action(det_type) == "flag")
    except AttributeError:
        return True  # a detector type the policy does not know: require it (fail closed)


def person_name_rows(text: str, lang: str | None = None) -> list[tuple[str, str]]:
    """``("PERSON", name)`` rows of the CPU name finders (``spcl.extract.names``) for NFC
    ``text``."""
    return [
        ("PERSON", text[s:e].strip()) for s, e in find_person_names(text, lang) if text[s:e].strip()
    ]


@dataclass(slots=True)
class Candidates:
    """Candidate ``(TYPE, VALUE)`` rows of one document, by the source that found them."""

    by_source: dict[str, list[tuple[str, str]]]

    def union(self) -> list[tuple[str, str]]:
        """Every distinct row of every source, in a canonical order."""
        return sorted({row for rows in self.by_source.values() for row in rows})

    def found_by(self, text: str, spans: Iterable[tuple[int, int]]) -> list[list[str]]:
        """For each ``[start, end)`` masked span, the sources whose candidates occur overlapping it
        (sorted).

        One scan with the union's alternatives — the regex the masker compiled for the same
        candidates (cached), so attributing sources compiles nothing new; each alternative maps back
        to the sources that yield it.
        """
        alts = canonical_alternatives(self.union())
        sources_of: dict[str, set[str]] = {}
        for src, rows in self.by_source.items():
            for type_, value in rows:
                for alt in alternatives(normalize_type(type_), normalize_value(value)):
                    sources_of.setdefault(alt.pattern, set()).add(src)
        found = [(s, e, sources_of.get(alts[i].pattern, set())) for s, e, i in scan_all(text, alts)]
        found.sort(key=lambda f: f[0])
        starts = [s for s, _, _ in found]
        longest = max((e - s for s, e, _ in found), default=0)
        out: list[list[str]] = []
        # only occurrences starting within ``longest`` before the span can reach it
        for start, end in spans:
            hit: set[str] = set()
            for s, e, srcs in found[
                bisect.bisect_left(starts, start - longest) : bisect.bisect_left(starts, end)
            ]:
                if s < end and start < e:
                    hit |= srcs
            out.append(sorted(hit))
        return out


def collect_candidates(
    text: str,
    extractor_rows: Iterable[tuple[str, str]],
    hits: Sequence[RuleHit],
    types: Sequence[str],
    names: bool,
    lang: str | None = None,
    *,
    allow_names: Sequence[str] = (),
    deny_names: Sequence[str] = (),
) -> Candidates:
    """The document's candidates: extractor rows, rule-hit surfaces of allowed ``types``, and
    name-finder rows.

    ``text`` is the NFC source the hits index. Rule-hit rows are ``(type, text[start:end])``; only
    types in ``types`` become candidates (a required hit of another type then fails the release
    check: fail closed). ``allow_names`` / ``deny_names``: the run's allow- and deny-lists
    (:mod:`spcl.mask_stage.name_lists`): allowed PERSON values leave the extractor and name-finder
    rows; each deny-listed name in ``text`` is a name row.
    """
    allowed = set(types)
    rule_rows = [(h.type, text[h.start : h.end].strip()) for h in hits if h.type in allowed]
    by_source = {
        "extractor": [(t, v) for t, v in extractor_rows if t in allowed],
        "rules": [(t, v) for t, v in rule_rows if v],
        "names": person_name_rows(text, lang) if names and "PERSON" in allowed else [],
    }
    if (allow_names or deny_names) and "PERSON" in allowed:
        by_source["extractor"], denied = apply_name_lists(
            text, by_source["extractor"], allow_names, deny_names
        )
        by_source["names"] = apply_name_lists(text, by_source["names"], allow_names, ())[0] + denied
    return Candidates(by_source)
