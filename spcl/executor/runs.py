"""Run ids: the name of one run of a job, written in done-markers, vault file names and metrics."""

from __future__ import annotations

import dataclasses
import secrets
from datetime import UTC, datetime
from typing import TypeVar

from pydantic import BaseModel

C = TypeVar("C")


def new_run_id() -> str:
    """A run id unique per run: UTC time plus 32 random bits (``20261201T101500Z-1a2b3c4d``).

    >>> import re
    >>> bool(re.fullmatch(r"\\d{8}T\\d{6}Z-[0-9a-f]{8}", new_run_id()))
    True
    """
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(4)


def with_run_id(cfg: C) -> C:
    """``cfg`` (a dataclass with a ``run_id`` field) with a fresh run id unless it has one.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Job:
    ...     run_id: str = ""
    >>> with_run_id(Job("given")).run_id, len(with_run_id(Job()).run_id)
    ('given', 25)
    """
    if getattr(cfg, "run_id", ""):
        return cfg
    if isinstance(cfg, BaseModel):  # a job config (spcl.config_models.JobConfig)
        return cfg.model_copy(update={"run_id": new_run_id()})
    return dataclasses.replace(cfg, run_id=new_run_id())  # type: ignore[type-var]  # C: a dataclass
