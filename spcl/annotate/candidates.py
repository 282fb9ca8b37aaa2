"""The candidates step: which texts the teachers see.

``person``: only texts that mention a person, found by the rules backend's CPU name finders
(``spcl.extract.backends.rules_backend``: unidic ``人名`` tags for Japanese, honorific patterns and
mecab-ko-dic ``인명`` for Korean, titles and cue phrases for English) — the published pipeline's NER step.
``all``: every readable text.
"""

from __future__ import annotations

from spcl.extract.backends.rules_backend import en_person_names, ja_person_names, ko_person_names

CANDIDATE_MODES: tuple[str, ...] = ("person", "all")


_FINDERS = (en_person_names, ja_person_names, ko_person_names)  # cheapest first


def person_mentions(text: str) -> int:
    """How many person-name mentions the CPU name finders see in ``text`` (ja, ko and en finders)."""
    return sum(len(finder(text)) for finder in _FINDERS)


def has_person(text: str) -> bool:
    """True when some name finder sees a person in ``text`` (stops at the first finder that does)."""
    return any(finder(text) for finder in _FINDERS)


def is_candidate(text: str, mode: str) -> bool:
    """True when ``text`` goes to the teachers under candidates ``mode`` (``person`` or ``all``).

    >>> is_candidate("山田太郎さんは入院した。", "person"), is_candidate("晴れです。", "person")
    (True, False)
    """
    if mode == "all":
        return True
    if mode != "person":
        raise ValueError(f"unknown candidates mode {mode!r}; choose one of {', '.join(CANDIDATE_MODES)}")
    return has_person(text)
