"""How each screen head is shown and read by the screen's consumers (report, review, evaluation,
tier, Spark).

A *head* is one model of a screen kind that gives a score and, usually, a flag (the shipped
``lgbm_svc`` kind: LightGBM's probability and the LinearSVC margin). Consumers never name a head:
they take the heads from the output they read (the ``scores`` struct lists them, :func:`heads_in`)
or from the model (``outputs``), and ask this module how to draw one (:func:`head_view`). A new head
or kind adds its view here (or shows with the default margin bins) and touches nothing outside
``spcl/screen/``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from spcl.screen.kinds import LGBM_SVC_OUTPUTS, ScreenOutputs

DEFAULT_OUTPUTS: ScreenOutputs = LGBM_SVC_OUTPUTS
"""The heads of the shipped kind: what an output without a ``scores`` struct (no screen ran) is
shown with."""
PRIMARY_HEAD: str = DEFAULT_OUTPUTS.scores[0]
"""The head whose score bands the review's ``bucket`` strata and the report's by-decision
histogram use."""
MARGIN_RANGE: tuple[float, float] = (-2.5, 2.5)
"""A margin head's scores outside this range are counted in the end bins."""
PROBABILITY_EDGES: tuple[float, ...] = tuple(float(x) for x in np.linspace(0.0, 1.0, 41))
"""Histogram bins of a probability head (0.025 wide)."""
MARGIN_EDGES: tuple[float, ...] = tuple(float(x) for x in np.linspace(*MARGIN_RANGE, 41))
"""Histogram bins of a margin head (and of any head without its own view)."""


@dataclass(frozen=True)
class HeadView:
    """How one head's score is histogrammed and titled.

    ``scale`` is ``probability`` (in [0, 1]) or ``margin`` (unbounded; :data:`MARGIN_RANGE` clips
    the bins).
    """

    name: str
    title: str
    scale: str
    edges: tuple[float, ...]


_VIEWS: dict[str, HeadView] = {
    "lgbm": HeadView("lgbm", "LightGBM probability", "probability", PROBABILITY_EDGES),
    "svc": HeadView("svc", "LinearSVC margin", "margin", MARGIN_EDGES),
}


def head_view(name: str) -> HeadView:
    """The view of head ``name``; a head without its own is a margin titled by its name.

    >>> head_view("kw").edges == MARGIN_EDGES, head_view("kw").title
    (True, 'kw score')
    """
    return _VIEWS.get(name) or HeadView(name, f"{name} score", "margin", MARGIN_EDGES)


def heads_in(field_names: Iterable[str]) -> list[str]:
    """The heads among the fields of a ``scores`` struct (or the keys of one row's ``scores``), in
    their order: every name that has a ``<name>_flag`` beside it.

    >>> heads_in(["a", "b", "a_flag", "b_flag", "medical"])
    ['a', 'b']
    """
    names = list(field_names)
    return [n for n in names if f"{n}_flag" in names]


def flagging_heads(scores: Mapping[str, object]) -> list[str]:
    """The heads of one row's ``scores`` whose flag is set, in the struct's order.

    >>> flagging_heads({"a": 0.1, "b": 2.0, "a_flag": False, "b_flag": True})
    ['b']
    """
    return [h for h in heads_in(scores) if scores.get(f"{h}_flag")]
