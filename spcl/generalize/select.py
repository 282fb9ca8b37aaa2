"""Selection: the first candidate that no attacker guess recovers (INTACT stage 2's decision
rule)."""

from __future__ import annotations

from collections.abc import Sequence

from spcl.generalize.match import matches


def choose(
    original: str,
    entity_type: str,
    candidates: Sequence[str],
    guesses: Sequence[Sequence[str]],
    lang: str = "en",
) -> int | None:
    """Index of the first candidate whose guesses don't MATCH ``original``, or None when every one
    is risky.

    ``guesses[i]`` are the attacker's guesses for ``candidates[i]``; a candidate without guesses
    (not attacked, or the attacker gave none) is never chosen — an unanswered attack proves nothing,
    so the caller falls back to the label (fail closed). Each candidate is passed to ``matches`` as
    ``disclosed``: what the candidate itself says does not count as recovered.

    >>> guesses = [["3 August 2003"], ["2004", "2002"]]
    >>> choose("3 August 2003", "DATETIME", ["August 2003", "2003"], guesses)
    1
    """
    for i in range(min(len(candidates), len(guesses))):
        got = guesses[i]
        if got and not any(
            matches(original, g, entity_type, lang, disclosed=candidates[i]) for g in got
        ):
            return i
    return None
