"""Truthful generalization (INTACT-style): replace each sensitive span with the most specific true
generalization that an LLM attacker cannot invert, else with a ``[TYPE_n]`` label.

``matches(original, guess, entity_type, lang)`` is the attack's success test
(``spcl.generalize.match``); ``choose(original, entity_type, candidates, guesses, lang)`` the
selection rule (``spcl.generalize.select``); ``ladder(entity_type, value, lang)`` the rule ladders
(``spcl.generalize.ladders``); ``collect_spans(text, extraction_rows, hits)`` the spans
(``spcl.generalize.spans``); ``Generalizer`` the two-stage loop (``spcl.generalize.engine``); the
job is ``spcl.generalize.job``.
"""

from spcl.generalize.ladders import Ladder, ladder
from spcl.generalize.match import matches
from spcl.generalize.select import choose
from spcl.generalize.spans import Entity, collect_spans

__all__ = ["Entity", "Ladder", "choose", "collect_spans", "ladder", "matches"]
