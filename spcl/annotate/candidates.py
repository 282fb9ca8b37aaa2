"""The candidates step: which texts the teachers see.

``person``: only texts that mention a person, found by the project's CPU name finders
(``spcl.extract.names.find_person_names``: unidic ``人名`` tags for Japanese, mecab-ko-dic ``인명``
and honorific patterns for Korean, titles, cues and given names for English, plus GiNZA / spaCy NER
where the ``names`` extra is installed) — the published pipeline's NER step. ``all``: every readable
text.
"""

from __future__ import annotations

from spcl.extract.names import find_person_names

CANDIDATE_MODES: tuple[str, ...] = ("person", "all")


def person_mentions(text: str, lang: str | None = None) -> int:
    """How many person-name spans the finders see in ``text`` (``lang`` picks the NER model, if
    installed)."""
    return len(find_person_names(text, lang))


def is_candidate(text: str, mode: str, lang: str | None = None) -> bool:
    """True when ``text`` goes to the teachers under candidates ``mode`` (``person`` or ``all``).

    >>> is_candidate("山田太郎さんは入院した。", "person"), is_candidate("晴れです。", "person")
    (True, False)
    """
    if mode == "all":
        return True
    if mode != "person":
        raise ValueError(
            f"unknown candidates mode {mode!r}; choose one of {', '.join(CANDIDATE_MODES)}"
        )
    return person_mentions(text, lang) > 0
