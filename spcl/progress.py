"""A progress bar for long local runs: documents done, docs/s and ETA on a terminal, silent
elsewhere.

It prints counts and rates only — never a document, id or value (rule 3 of the house). It draws only
when its stream is a TTY (so logs and CI stay clean) and ``SPCL_PROGRESS`` is not ``0``;
``SPCL_PROGRESS=1`` forces it on. The ETA comes from the document total when known, else from
another measure of work
(e.g. input bytes read against the total input size)::

    with Progress("filter", total_work=sum_of_file_sizes) as bar:
        for batch in batches:
            bar.advance(batch.num_rows, work=bytes_read_so_far)
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import IO, Any

BAR_WIDTH = 24


def progress_enabled(stream: IO[str]) -> bool:
    """Whether a bar should be drawn on ``stream``: a TTY, unless ``SPCL_PROGRESS`` says
    otherwise."""
    forced = os.environ.get("SPCL_PROGRESS", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM", "") != "dumb"


def format_duration(seconds: float) -> str:
    """``h:mm:ss`` (or ``m:ss`` under an hour).

    >>> format_duration(75.4), format_duration(3725)
    ('1:15', '1:02:05')
    """
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class _ClearBar(logging.Filter):
    """Runs before a log handler on the bar's stream writes: wipes the bar, so the log line starts
    at the line's beginning and is not overwritten; the bar is drawn again below it on the next
    update."""

    def __init__(self, bar: Progress) -> None:
        super().__init__()
        self.bar = bar

    def filter(self, record: logging.LogRecord) -> bool:
        self.bar.clear()
        return True


class Progress:
    """Counts documents (``advance``) and, optionally, other work done and redraws at most every
    ``interval`` seconds; ``close`` draws the final line. A context manager.

    While the bar is drawn, log handlers of the root logger that write to the same stream first wipe
    it, so a log line and the bar never overwrite each other on a terminal.
    """

    def __init__(
        self,
        label: str,
        *,
        total: int | None = None,
        total_work: float | None = None,
        unit: str = "docs",
        stream: IO[str] | None = None,
        enabled: bool | None = None,
        interval: float = 0.25,
    ) -> None:
        self.label = label
        self.total = total
        self.total_work = total_work
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = progress_enabled(self.stream) if enabled is None else enabled
        self.interval = interval
        self.done = 0
        self.work_done = 0.0
        self.started = time.monotonic()
        self._drawn = 0.0
        self._width = 0
        self._closed = False
        self._guarded: list[logging.Handler] = []
        if self.enabled:
            self._guard = _ClearBar(self)
            for handler in logging.getLogger().handlers:
                if (
                    isinstance(handler, logging.StreamHandler)
                    and getattr(handler, "stream", None) is self.stream
                ):
                    handler.addFilter(self._guard)
                    self._guarded.append(handler)

    def advance(self, n: int = 1, *, work: float | None = None) -> None:
        """Count ``n`` more documents; ``work`` sets how much of ``total_work`` is done (for the ETA
        when the document total is unknown)."""
        self.done += n
        if work is not None:
            self.work_done = work
        self._maybe_draw()

    def update(self, done: int, *, work: float | None = None) -> None:
        """Set the documents done so far to ``done`` (and the work done to ``work``), e.g. from
        counters that another process keeps (Spark tasks)."""
        self.done = done
        if work is not None:
            self.work_done = work
        self._maybe_draw()

    def fraction(self) -> float | None:
        """Share of the run done, from the document total or else the work total; ``None`` when
        unknown."""
        if self.total:
            return min(1.0, self.done / self.total)
        if self.total_work:
            return min(1.0, self.work_done / self.total_work)
        return None

    def line(self, now: float | None = None) -> str:
        """The text of the bar: label, count, percentage, bar, rate and ETA (counts only)."""
        elapsed = max((now if now is not None else time.monotonic()) - self.started, 1e-9)
        rate = self.done / elapsed
        count = f"{self.done:,}" + (f"/{self.total:,}" if self.total else "") + f" {self.unit}"
        parts = [self.label, count]
        frac = self.fraction()
        if frac is not None:
            filled = int(frac * BAR_WIDTH)
            parts.append(f"{frac * 100:3.0f}% [{'#' * filled}{'.' * (BAR_WIDTH - filled)}]")
        parts.append(f"{rate:,.0f} {self.unit}/s")
        if self._closed:
            parts.append(f"in {format_duration(elapsed)}")
        elif frac:
            parts.append(f"ETA {format_duration(elapsed * (1 - frac) / frac)}")
        return "  ".join(parts)

    def _maybe_draw(self) -> None:
        now = time.monotonic()
        if self.enabled and now - self._drawn >= self.interval:
            self._drawn = now
            self._write(self.line(now))

    def _write(self, text: str) -> None:
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()

    def clear(self) -> None:
        """Wipe the drawn bar from its line (the next update draws it again)."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
            self._drawn = 0.0

    def close(self) -> None:
        """Draw the final line and end it (nothing when disabled); safe to call twice."""
        if self._closed:
            return
        self._closed = True
        for handler in self._guarded:
            handler.removeFilter(self._guard)
        if self.enabled:
            self._write(self.line())
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
