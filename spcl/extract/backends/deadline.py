"""A whole-request deadline for the OpenAI-compatible client.

An HTTP client's timeout bounds each socket operation (connect, one read, one write), not the
request: a server that sends one byte every few seconds keeps a request alive for as long as it
likes. Here every socket operation of a request gets at most the time left until the request's
deadline (set by :func:`deadline` around the call), and none starts once it has passed, so the
request ends as a timeout when its time is up, whatever the server does. The deadline travels in a
context variable: the SDK's synchronous client does its socket work in the calling thread.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import Any

_DEADLINE: ContextVar[float | None] = ContextVar("spcl_request_deadline", default=None)


def _module(*names: str) -> ModuleType:
    """The first importable of ``names`` (the OpenAI SDK ships on ``httpx`` or on its renamed
    fork)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(f"none of {names} is installed")


def _httpx() -> ModuleType:
    import openai._base_client as base  # the HTTP library the installed SDK itself uses

    return _module("httpx2", "httpx") if hasattr(base, "httpx2") else _module("httpx", "httpx2")


def _httpcore() -> ModuleType:
    return (
        _module("httpcore2", "httpcore") if _httpx().__name__ == "httpx2" else _module("httpcore")
    )


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every socket operation inside the block ends by ``seconds`` from now (a timeout after
    that)."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to the time left before the deadline; ``error`` once it has passed."""
    end = _DEADLINE.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


def deadline_client(timeout_s: float, max_connections: int) -> Any:
    """An HTTP client for the OpenAI SDK (``http_client=``) whose requests honour :func:`deadline`.

    Proxies from the environment are not used (a custom transport turns them off); the endpoint is
    reached directly.
    """
    # Any: the SDK's HTTP library is picked at run time (httpx or its fork), so its classes are
    # values here
    httpx: Any = _httpx()
    httpcore: Any = _httpcore()

    class DeadlineStream(httpcore.NetworkStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            self._inner.close()

        def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> Any:
            return DeadlineStream(
                self._inner.start_tls(
                    ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)
                )
            )

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class DeadlineBackend(httpcore.NetworkBackend):
        def __init__(self) -> None:
            self._inner = httpcore.SyncBackend()

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> Any:
            return DeadlineStream(
                self._inner.connect_tcp(
                    host,
                    port,
                    _left(timeout, httpcore.ConnectTimeout),
                    local_address,
                    socket_options,
                )
            )

        def connect_unix_socket(
            self,
            path: str,
            timeout: float | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> Any:
            return DeadlineStream(
                self._inner.connect_unix_socket(
                    path, _left(timeout, httpcore.ConnectTimeout), socket_options
                )
            )

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    class DeadlineTransport(httpx.HTTPTransport):
        def __init__(self) -> None:
            super().__init__()
            self._pool = httpcore.ConnectionPool(
                ssl_context=httpx.create_ssl_context(),
                max_connections=max_connections,
                max_keepalive_connections=max_connections,
                keepalive_expiry=5.0,
                network_backend=DeadlineBackend(),
            )

    return httpx.Client(transport=DeadlineTransport(), timeout=timeout_s, follow_redirects=True)


__all__ = ["deadline", "deadline_client"]
