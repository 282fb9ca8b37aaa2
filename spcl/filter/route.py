"""The decision policy: which rule hits and screen flags make a document ``flagged``, and why."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spcl.config import PolicySettings
from spcl.detect.base import Hit


def rule_reasons(hits: Sequence[Hit], policy: PolicySettings) -> list[str]:
    """Reasons ``rule:TYPE`` (sorted, unique) for the hits whose type the policy says to ``flag``.

    Hits whose validator answered ``False`` never flag. Nothing is returned when fewer than
    ``policy.min_hits`` hits qualify.

    >>> rule_reasons([Hit("EMAIL", 0, 5, None, "email@1")], PolicySettings())
    ['rule:EMAIL']
    """
    flagging = [h for h in hits if h.validated is not False and policy.action(h.type) == "flag"]
    if len(flagging) < policy.min_hits:
        return []
    return sorted({f"rule:{h.type}" for h in flagging})


def reported_hits(hits: Sequence[Hit], policy: PolicySettings) -> list[Hit]:
    """The hits kept in the output: every hit whose type is not ``ignore``d."""
    return [h for h in hits if policy.action(h.type) != "ignore"]


def screen_reasons(flags: Mapping[str, bool]) -> list[str]:
    """Reasons ``screen:NAME`` for the screen models that fired (the union), in the kind's flag
    order.

    >>> screen_reasons({"lgbm": True, "svc": False})
    ['screen:lgbm']
    """
    return [f"screen:{name}" for name, fired in flags.items() if fired]


def decide(reasons: Sequence[str]) -> str:
    """``flagged`` when there is any reason, else ``clean``."""
    return "flagged" if reasons else "clean"
