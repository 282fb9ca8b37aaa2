"""The error every LLM client raises when it cannot serve at all, chat and extractor alike.

Its own module so that the chat clients (``spcl.extract.backends.chat`` and its client modules) and
the engine loaders (``spcl.extract.backends.engines``) share it without importing the extractor
interface.
"""

from __future__ import annotations

from spcl.errors import RunFailed


class BackendUnavailable(RunFailed, RuntimeError):
    """The backend cannot serve at all (endpoint unreachable, model missing); messages name no
    document text.

    >>> str(BackendUnavailable("cannot reach http://127.0.0.1:9/v1"))
    'cannot reach http://127.0.0.1:9/v1'
    """
