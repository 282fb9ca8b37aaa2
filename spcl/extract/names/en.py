"""English person names: a light heuristic — a title (Mr, Ms, Dr …) or a cue (``my name is``,
``named``) followed by capitalized words, and a common given name followed by a capitalized word."""

from __future__ import annotations

import re

from spcl.extract.names.ko import longest_per_overlap


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Jane, O'Brien, D’Angelo, Smith-Jones, McCarthy, MacDonald; never a piece of a longer word (Smith's
# is fine)
_CAP = r"[A-Z](?:[a-z]+(?:[A-Z][a-z]+)?|['\u2019][A-Z][a-z]+)(?:-[A-Z][a-z]+)?(?![A-Za-z])"
_EN_TITLE = re.compile(rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?\s+({_CAP}(?:\s+{_CAP}){{0,2}})")
_EN_CUE = re.compile(
    r"\b(?:(?:[Mm]y name is|[Nn]ame:|[Cc]ontact(?: person)?:|[Pp]atient:?|[Ss]incerely,|"
    r"[Rr]egards,|[Rr]efund|[Dd]ear|(?:mother|father|husband|wife|son|daughter|brother|sister|"
    r"spouse|partner),)\s+"
    # 'named' then one line break at most: not "named\n\n Example 2:"
    r"|[Nn]amed(?:[ \t]+|[ \t]*\n[ \t]*))"
    rf"({_CAP}(?:\s+{_CAP}){{0,2}})"
)
# credits of manuals and programs: "Written by Torbjorn Granlund and Richard M. Stallman." Only full
# names (two words or more, a middle initial allowed) so that "written by default" or "maintained by
# Debian" stay clear
_FULL = rf"{_CAP}(?:\s+(?:[A-Z]\.|{_CAP})){{1,3}}"
_EN_BY = re.compile(
    rf"\b(?:[Ww]ritten|[Mm]aintained|[Dd]eveloped|[Cc]reated|[Cc]ontributed|[Aa]uthored)\s+by\s+"
    rf"((?:{_FULL})(?:(?:,\s*(?:and\s+)?|\s+and\s+){_FULL})*)"
)
_EN_ONE_FULL = re.compile(_FULL)
EN_GIVEN_NAMES = _words(
    """James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel
    Matthew Anthony Mark Donald Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald
    Edward Jason Jeffrey Ryan Jacob Gary Nicholas Eric Jonathan Stephen Larry Justin Scott Brandon
    Benjamin Samuel Gregory Alexander Frank Patrick Raymond Jack Dennis Jerry Tyler Aaron Jose Adam
    Nathan Henry Douglas Zachary Peter Kyle Noah Ethan Jeremy Walter Christian Keith Roger Terry
    Austin Sean Gerald Carl Harold Dylan Arthur Lawrence Jordan Jesse Bryan Billy Bruce Gabriel Joe
    Logan Alan Juan Albert Willie Elijah Wayne Randy Vincent Liam Mason Lucas Mary Patricia Jennifer
    Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty Sandra Margaret Ashley
    Kimberly Emily Donna Michelle Carol Amanda Melissa Deborah Stephanie Dorothy Rebecca Sharon
    Laura Cynthia Amy Kathleen Angela Shirley Brenda Emma Anna Pamela Nicole Samantha Katherine
    Christine Helen Debra Rachel Carolyn Janet Maria Catherine Heather Diane Olivia Julie Joyce
    Victoria Ruth Virginia Lauren Kelly Christina Joan Evelyn Judith Andrea Hannah Megan Cheryl
    Jacqueline Martha Madison Teresa Gloria Sara Janice Ann Kathryn Abigail Sophia Frances Jean
    Alice Judy Isabella Julia Grace Amber Denise Danielle Marilyn Beverly Charlotte Natalie Theresa
    Diana Brittany Doris Kayla Alexis Lori Marie Ava Mia Harper Ella Morgan Jamie Avery Riley Casey
    Taylor Alex Sam Jordan Quinn Skyler Cameron Drew Reese Rowan Parker Peyton Kendall Hayden
    Emerson Finley Dakota Charlie Robin Jesse Blake Sage"""
)
_EN_NOT_SURNAME = _words(
    """Street Avenue Road Lane Court Drive University Hospital Bank Inc Company Project Team
    Developers Contributors Community Foundation Group Authors Software Systems Corporation Labs"""
)
_EN_GIVEN_FULL = re.compile(rf"\b([A-Z][a-z]+)\s+({_CAP})\b")


def en_name_spans(text: str) -> list[tuple[int, int]]:
    """English person-name spans after a title or a cue phrase (``Written by A, B and C``: each full
    name), or a known given name + a capitalized word.

    >>> t = "Please call Dr. Jane Roe; my name is Sam Lee."
    >>> [t[s:e] for s, e in en_name_spans(t)]
    ['Jane Roe', 'Sam Lee']
    """

    if not re.search(r"[A-Z]", text):
        return []
    found: list[tuple[int, int]] = []
    for pattern in (_EN_TITLE, _EN_CUE):
        found += [(m.start(1), m.end(1)) for m in pattern.finditer(text)]
    # each full name of the credit list, not a team (the Debian Project)
    for m in _EN_BY.finditer(text):
        found += [
            (m.start(1) + n.start(), m.start(1) + n.end())
            for n in _EN_ONE_FULL.finditer(m.group(1))
            if n.group(0).split()[-1] not in _EN_NOT_SURNAME
        ]
    for m in _EN_GIVEN_FULL.finditer(text):
        if m.group(1) in EN_GIVEN_NAMES and m.group(2) not in EN_GIVEN_NAMES | _EN_NOT_SURNAME:
            found.append((m.start(1), m.end(0)))
    return longest_per_overlap(found)
