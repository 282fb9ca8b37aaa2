"""Failure reasons of the mask job, and which of them a rerun retries.

*Transient* failures say nothing about the document: the server or engine was unwell (timeouts, refused
connections, HTTP 408/409/425/429/5xx, a malformed reply, an engine error for a whole batch). A rerun
with the same ``--output`` retries exactly those documents. *Permanent* failures are about the document
or the model's answer to it (unparseable or truncated output, only hallucinated rows, input too long, a
masking error, a rule hit left uncovered); ``--retry-failed`` retries them too.
"""

from __future__ import annotations

_TRANSIENT_EXACT = frozenset({"timeout", "unreachable", "bad_response", "no_output"})
_TRANSIENT_PREFIXES = ("generation_error:", "engine_error:", "http_5")
_TRANSIENT_HTTP = frozenset({"http_408", "http_409", "http_425", "http_429"})


def is_transient(reason: str) -> bool:
    """True when ``reason`` names a failure of the serving side, not of the document.

    >>> [is_transient(r) for r in ("timeout", "http_503", "http_400", "output_truncated", "engine_error:OSError")]
    [True, True, False, False, True]
    """
    return reason in _TRANSIENT_EXACT or reason in _TRANSIENT_HTTP or reason.startswith(_TRANSIENT_PREFIXES)
