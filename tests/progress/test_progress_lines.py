"""On a terminal the progress bar and log lines share stderr: neither may overwrite the other."""

from __future__ import annotations

import io
import logging

from spcl.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _screen(raw: str) -> list[str]:
    """What a terminal shows: each line after its last carriage return (a ``\\r`` moves to the line
    start and later text overwrites earlier text from there)."""
    shown = []
    for line in raw.split("\n"):
        cells: list[str] = []
        col = 0
        for ch in line:
            if ch == "\r":
                col = 0
                continue
            if col < len(cells):
                cells[col] = ch
            else:
                cells.append(ch)
            col += 1
        shown.append("".join(cells).rstrip())
    return shown


def test_log_lines_and_the_bar_do_not_overwrite_each_other() -> None:
    stream = _Tty()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.INFO)
    try:
        with Progress("mask", total=10, stream=stream, enabled=True, interval=0.0) as bar:
            bar.advance(3)
            logging.getLogger("spcl.test").info("part-00001.parquet done")
            bar.advance(3)
            logging.getLogger("spcl.test").info("part-00002.parquet done")
            bar.advance(4)
        assert handler.filters == []  # the bar's guard is gone with the bar
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    lines = [line for line in _screen(stream.getvalue()) if line]
    assert "INFO part-00001.parquet done" in lines and "INFO part-00002.parquet done" in lines
    assert lines[-1].startswith("mask  10/10 docs")
    assert all(line.startswith(("INFO ", "mask ")) for line in lines)
