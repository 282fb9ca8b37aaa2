"""The driver's listing of one filter run (the executor's ``Plan.context``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from spcl.io.inputs import Listing

__all__ = ["FilterPlan"]


@dataclass
class FilterPlan:
    """The driver's listing of one run (``Plan.context``): files to read, files skipped with a
    reason, the URLs Spark still has to list, and the driver's timings."""

    listing: Listing
    files: list[str]
    skipped: dict[str, str]
    remote: list[str]
    started: float = field(default_factory=time.time)
    timings: dict[str, float] = field(default_factory=dict)
    listed_at: float = 0.0
