"""The masking operators' registry: names, reversibility, and the validation of ``{TYPE: operator}``
settings.

A small module of its own so that the configuration can validate ``mask.operators`` without
importing the masker; what each operator does to a span lives in ``spcl.mask.operators``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Operator:
    """One registry entry: its name, whether the vault can reverse it, and what it says about
    itself."""

    name: str
    reversible: bool
    per_span: bool
    summary: str


OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        Operator("replace", True, True, "the [TYPE_n] placeholder token (default)"),
        Operator(
            "surrogate", True, True, "a realistic fake of the same type and format, stable per key"
        ),
        Operator("hash", True, True, "[TYPE:hex], a keyed HMAC-SHA256: stable per value and key"),
        Operator("redact", False, True, "removed; cannot be unmasked"),
        Operator("keep", True, True, "left in clear on purpose"),
        Operator("generalize", False, False, "whole-document truthful generalization"),
    )
}
"""Every masking operator, by name."""

DEFAULT_OPERATOR = "replace"
_GENERALIZE_REFUSAL = (
    "operator 'generalize' rewrites whole documents, not single spans: run 'spcl generalize' "
    "on the flagged documents instead, or choose one of {names} for {type}"
)


def check_operators(
    operators: Mapping[str, str] | Iterable[str], known_types: Iterable[str]
) -> dict[str, str]:
    """Validated ``{TYPE: operator}`` from a mapping or from ``TYPE=OP`` strings; ``ValueError``
    naming the bad entry (unknown type, unknown operator, ``generalize``, a type given twice with
    different operators).

    >>> check_operators(["person=surrogate", "EMAIL=hash"], ["PERSON", "EMAIL"])
    {'EMAIL': 'hash', 'PERSON': 'surrogate'}
    """
    known = tuple(known_types)
    pairs: list[tuple[str, str]] = []
    if isinstance(operators, Mapping):
        pairs = [(str(k), str(v)) for k, v in operators.items()]
    else:
        for item in operators:
            type_, sep, op = str(item).partition("=")
            if not sep:
                raise ValueError(f"operator {item!r}: write TYPE=OPERATOR, e.g. PERSON=surrogate")
            pairs.append((type_, op))
    out: dict[str, str] = {}
    per_span = [name for name, o in OPERATORS.items() if o.per_span]
    for raw_type, raw_op in pairs:
        type_, op = raw_type.strip().upper(), raw_op.strip().lower()
        if type_ not in known:
            raise ValueError(
                f"operator for unknown entity type {type_!r}; known types: {', '.join(known)}"
            )
        if op not in OPERATORS:
            raise ValueError(
                f"unknown operator {op!r} for {type_}; operators: {', '.join(OPERATORS)}"
            )
        if not OPERATORS[op].per_span:
            raise ValueError(_GENERALIZE_REFUSAL.format(names=", ".join(per_span), type=type_))
        if out.get(type_, op) != op:
            raise ValueError(f"{type_} is given two operators ({out[type_]}, {op})")
        out[type_] = op
    return {k: out[k] for k in sorted(out)}
