"""Deterministic, reversible masking: variants, tokens, the masker and the encrypted mapping vault.

``mask_text(source, candidates) -> MaskResult(masked_text, mapping, spans)`` and
``reassemble_text(masked_text, mapping) == NFC(source)``. The vault lives in ``spcl.mask.vault``
(imported lazily: it needs ``cryptography``).
"""

from spcl.mask.masker import MaskResult, Span, mask_text
from spcl.mask.tokens import TOKEN_RE, reassemble_text

__all__ = ["TOKEN_RE", "MaskResult", "Span", "mask_text", "reassemble_text"]
