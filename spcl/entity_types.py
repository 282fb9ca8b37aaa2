"""The entity-type vocabulary of the LLM stage: the types an extractor prints and the masker
tokenizes.

One small module so that the prompt, the contract parser, the backends and the masker share it
without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable

from spcl.rule_types import RULE_TYPES

_LLM_TYPES: tuple[str, ...] = (
    "PERSON",
    "RRN",
    "DOB",
    "REL",
    "ADDRESS",
    "PHONE",
    "EMAIL",
    "ACCOUNT",
    "CARD",
    "ID",
    "IP",
    "CREDENTIAL",
)

DEFAULT_TYPES: tuple[str, ...] = (
    *_LLM_TYPES,
    *dict.fromkeys(t.entity for t in RULE_TYPES if t.entity not in _LLM_TYPES),
)
"""Every type the LLM stage knows, in the prompt's order: the extractor's types, then the entity
type of any registered rule type (``spcl.rule_types``) that is none of them."""

RULE_HIT_TYPES: dict[str, str] = {t.name: t.entity for t in RULE_TYPES}
"""Rule-detector type (``spcl.config.PII_TYPES``) → entity type: ``MYNUMBER`` → ``RRN``, the US
taxpayer numbers ``SSN`` and ``ITIN`` → their own types, ``IBAN`` → ``ACCOUNT``, ``POSTAL`` →
``ADDRESS``, identity documents (``PASSPORT``, ``DRIVER_LICENSE``) → ``ID``; derived from
``spcl.rule_types.RULE_TYPES``."""


def check_known_types(types: Iterable[str]) -> tuple[str, ...]:
    """``types`` trimmed and upper-cased, or ``ValueError`` naming the first unknown one (never
    empty).

    >>> check_known_types(["email", " PHONE "])
    ('EMAIL', 'PHONE')
    """
    out: list[str] = []
    for raw in types:
        t = str(raw).strip().upper()
        if t not in DEFAULT_TYPES:
            raise ValueError(f"unknown entity type {t!r}; known types: {', '.join(DEFAULT_TYPES)}")
        if t not in out:
            out.append(t)
    if not out:
        raise ValueError(f"no entity types given; known types: {', '.join(DEFAULT_TYPES)}")
    return tuple(out)
