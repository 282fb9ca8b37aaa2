"""Masking operators: what each found span becomes, chosen per entity type, from one registry.

The masker (``spcl.mask.masker.mask_text``) finds the spans and gives each a ``[TYPE_n]`` token;
this module is the step after it: :func:`apply_operators` turns each span into its operator's
replacement.

======================  ==============================================  ============================
operator                a span becomes                                  reversible through the vault
======================  ==============================================  ============================
``replace`` (default)   its ``[TYPE_n]`` token                          yes
``surrogate``           a realistic fake of the same type and format    yes
                        (``spcl.mask.surrogates``), keyed and stable
``hash``                ``[TYPE:<16 hex digits>]``, an HMAC-SHA256 of   yes (the vault keeps the
                        type and value under the run key: the same      value; the hash alone is
                        value hashes the same across the corpus         one-way)
``redact``              nothing (the value is removed)                  no: ``spcl unmask`` refuses
                                                                        the row
                                                                        (``irreversible_span``)
``keep``                itself (left in clear, on purpose)              nothing to reverse
``generalize``          refused here: generalization rewrites whole     —
                        documents (``spcl generalize``)
======================  ==============================================  ============================

A replacement never occurs in the source, never equals another replacement of a different value, and
the masked text reassembles to the source with the mapping (``reassemble_text``) for every
reversible operator; a collision raises the salt of the fakes until none is left, and the release
check proves the round trip. The operator key is derived from the vault key, so fakes and hashes are
stable per key and secret without it.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping

from spcl.mask.masker import MaskResult, Span
from spcl.mask.surrogates import surrogate
from spcl.mask.tokens import reassemble_text
from spcl.operator_types import DEFAULT_OPERATOR, OPERATORS, Operator, check_operators

__all__ = [
    "DEFAULT_OPERATOR",
    "OPERATORS",
    "Operator",
    "apply_operators",
    "check_operators",
    "is_reversible",
    "keyed_hash",
    "operator_key",
]


def operator_key(vault_key: bytes) -> bytes:
    """The key of fakes and hashes, derived from the vault key (never the vault key itself)."""
    return hmac.new(vault_key, b"spcl-mask-operators-v1", hashlib.sha256).digest()


def keyed_hash(type_: str, surface: str, key: bytes) -> str:
    """``[TYPE:<16 hex>]``: HMAC-SHA256 of type and value under ``key`` (stable per value and
    key)."""
    digest = hmac.new(key, f"hash\x1f{type_}\x1f{surface}".encode(), hashlib.sha256).hexdigest()[
        :16
    ]
    return f"[{type_}:{digest}]"


def is_reversible(operators: Mapping[str, str], types: Iterable[str]) -> bool:
    """True when every type in ``types`` has a reversible operator under ``operators``."""
    return all(OPERATORS[operators.get(t, DEFAULT_OPERATOR)].reversible for t in types)


def _replacement(op: str, span: Span, surface: str, key: bytes, salt: int) -> str:
    if op == "surrogate":
        return surrogate(span.type, surface, key, salt)
    if op == "hash":
        return keyed_hash(span.type, surface, key)
    if op == "redact":
        return ""
    return span.token


def _build(
    text: str, result: MaskResult, operators: Mapping[str, str], key: bytes, salt: int
) -> MaskResult | None:
    mapping: dict[str, str] = {}
    spans: list[Span] = []
    pieces: list[str] = []
    pos = 0
    for span in result.spans:
        op = operators.get(span.type, DEFAULT_OPERATOR)
        if op == "keep":
            continue
        surface = text[span.start : span.end]
        rep = _replacement(op, span, surface, key, salt)
        if op != "redact":
            if mapping.get(rep, surface) != surface or (op != "replace" and rep in text):
                return None  # a fake that collides with the source or another value: next salt
            mapping[rep] = surface
        spans.append(Span(span.type, span.start, span.end, rep))
        pieces.append(text[pos : span.start])
        pieces.append(rep)
        pos = span.end
    pieces.append(text[pos:])
    out = MaskResult("".join(pieces), mapping, spans)
    reversible = all(operators.get(s.type, DEFAULT_OPERATOR) != "redact" for s in out.spans)
    if reversible and reassemble_text(out.masked_text, out.mapping) != text:
        return None
    return out


def apply_operators(
    source: str, result: MaskResult, operators: Mapping[str, str], key: bytes
) -> MaskResult:
    """``result`` (the masker's, over NFC ``source``) with each span replaced by its type's
    operator.

    Spans of ``keep`` types leave the result (their text stays); ``redact`` spans keep their offsets
    with an empty replacement and no mapping entry; every other span's replacement maps back to its
    surface. With only ``replace`` the result is ``result`` itself. ``ValueError`` when no
    collision-free fakes are found.
    """
    if all(operators.get(s.type, DEFAULT_OPERATOR) == "replace" for s in result.spans):
        return result
    for salt in range(8):
        out = _build(source, result, operators, key, salt)
        if out is not None:
            return out
    raise ValueError("no collision-free replacement found")
