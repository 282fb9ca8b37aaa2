"""Which failures of a model backend are *transient*, and how a request is retried: one policy for
every job.

A transient failure says nothing about the document: the server or engine was unwell (a timeout, a
refused or reset connection, HTTP 408/409/425/429/5xx, a malformed reply, an engine error for a
whole batch). The chat client (``spcl.extract.backends.openai_chat.OpenAIChat``) retries exactly
these, ``retries`` times with exponential back-off and jitter, honouring ``Retry-After``; what is
still failing after the last try is left *retryable* by the jobs (``spcl mask``, ``spcl annotate``,
``spcl generalize``): the record is kept out of the permanent outputs, the run exits
:data:`EXIT_TRANSIENT`, and a rerun asks again for exactly those records. Everything else (HTTP
400/401/404/422, output cut by the token limit, input too long, output that breaks the contract) is
about the document or the model's answer to it, and permanent.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

EXIT_TRANSIENT = 3
"""Exit status of a job run that left transient failures: rerun the same command to retry exactly
those."""

TRANSIENT_STATUS: frozenset[int] = frozenset({408, 409, 425, 429})
"""HTTP statuses below 500 that are transient (every 5xx is too)."""

_TRANSIENT_EXACT = frozenset({"timeout", "unreachable", "bad_response", "no_output"})
_TRANSIENT_PREFIXES = ("generation_error:", "engine_error:")


def is_transient_status(status: int) -> bool:
    """True for an HTTP status worth asking again: 408, 409, 425, 429 and every 5xx."""
    return status in TRANSIENT_STATUS or 500 <= status <= 599


def is_transient(reason: str | None) -> bool:
    """True when the reason code ``reason`` names a failure of the serving side, not of the
    document.

    >>> [is_transient(r) for r in ("timeout", "http_503", "http_425", "http_400",
    ...                            "output_truncated", "engine_error:OSError", "http_5xx")]
    [True, True, True, False, False, True, False]
    """
    if not reason:
        return False
    if reason in _TRANSIENT_EXACT or reason.startswith(_TRANSIENT_PREFIXES):
        return True
    code = reason.removeprefix("http_")
    return code != reason and code.isdigit() and is_transient_status(int(code))


def retry_after_seconds(
    headers: Mapping[str, str] | None, now: float | None = None
) -> float | None:
    """The wait a reply's ``retry-after-ms`` / ``Retry-After`` header asks for (seconds or an HTTP
    date), ``None`` when there is none or it cannot be read."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    try:
        if "retry-after-ms" in lower:
            return max(0.0, float(lower["retry-after-ms"]) / 1000.0)
        value = lower.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value).timestamp()
            return max(0.0, when - (time.time() if now is None else now))
    except (TypeError, ValueError, OverflowError):
        return None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``retries`` more tries after the first; the wait before try ``n + 1`` is the server's
    ``Retry-After`` (capped at ``max_retry_after_s``) or ``base_s * 2**n`` (capped at
    ``max_backoff_s``) less up to 25 % jitter."""

    retries: int = 3
    base_s: float = 0.5
    max_backoff_s: float = 8.0
    max_retry_after_s: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed try ``attempt`` (0 = the first) before the next one."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        backoff = min(self.max_backoff_s, self.base_s * (2**attempt))
        return backoff * (1.0 - 0.25 * random.random())  # jitter: many clients do not retry in step
