"""Failure reasons of the mask job, and which of them a rerun retries.

*Transient* failures say nothing about the document: the server or engine was unwell (timeouts,
refused connections, HTTP 408/409/425/429/5xx, a malformed reply, an engine error for a whole
batch). A rerun with the same ``--output`` retries exactly those documents. *Permanent* failures are
about the document or the model's answer to it (unparseable or truncated output, only hallucinated
rows, input too long, a masking error, a rule hit left uncovered); ``--retry-failed`` retries them
too.

The classification is the one the chat client retries by (``spcl.extract.backends.transient``),
shared with ``spcl annotate`` and ``spcl generalize``.
"""

from __future__ import annotations

from spcl.extract.backends.transient import is_transient

__all__ = ["is_transient"]
