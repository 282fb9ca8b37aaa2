"""Which input files a run reads, and whether its output may be written where asked.

One listing for both engines (local paths): directories are walked recursively, following symbolic
links once (a link back to a folder already walked is not followed again, so a loop cannot repeat
files), every file is named by its canonical source (the resolved absolute path) and read once,
however many ``--input`` items, links or globs reach it. Hidden names (``.x``, ``_x``) and spcl's
own side files (``stats.json``, ``manifest.json``, ``metrics.json``, found while walking a folder)
are skipped and reported, never read as records. The output must not equal, contain or lie inside
any input (after resolving links; URLs compared as given, ``s3a``/``s3n`` read as ``s3``).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spcl.errors import UsageError
from spcl.io.outputs import is_filter_output
from spcl.io.storage import is_local, local_path

SIDE_FILES: frozenset[str] = frozenset({"stats.json", "manifest.json", "metrics.json"})
"""JSON files spcl writes beside its outputs; skipped when met while walking an input folder."""

_GLOB_CHARS = "*?["


class UnsafeOutput(UsageError, ValueError):
    """The output would overwrite, contain or be read as input; the message names both paths."""


def canonical_source(path: str) -> str:
    """The source name of an input file: resolved absolute path when local, the URL as given
    otherwise.

    >>> canonical_source("s3a://bucket/crawl/a.jsonl")
    's3a://bucket/crawl/a.jsonl'
    """
    if is_local(path):
        return os.path.realpath(local_path(path))
    return path


def _comparable(location: str) -> str:
    """A location for containment checks: a resolved local path, or ``scheme://rest`` without a
    final ``/``."""
    if is_local(location):
        return os.path.realpath(local_path(location)).rstrip("/") or "/"
    scheme, rest = location.split("://", 1)
    scheme = "s3" if scheme.lower() in ("s3a", "s3n") else scheme.lower()
    return f"{scheme}://{rest.rstrip('/')}"


def _static_prefix(pattern: str) -> str:
    """The folder part of a glob before its first wildcard (the pattern itself when it has none)."""
    cut = min((i for i, ch in enumerate(pattern) if ch in _GLOB_CHARS), default=None)
    if cut is None:
        return pattern
    head = pattern[:cut]
    return head.rsplit("/", 1)[0] if "/" in head else "."


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def _locations(item: str) -> list[str]:
    """The locations an input item stands for: itself; for a local glob, what it matches now (its
    folder part too when it recurses with ``**``); for a remote glob, its folder part."""
    if not any(c in item for c in _GLOB_CHARS):
        return [item]
    if not is_local(item) or "**" in item:
        return [_static_prefix(item)]
    return sorted(glob.glob(local_path(item)))


def _relation(out: str, where: str) -> str | None:
    if out == where:
        return "is"
    if _inside(out, where):
        return "lies inside"
    if _inside(where, out):
        return "contains"
    return None


def check_output(inputs: Sequence[str], output: str, files: Sequence[str] = ()) -> None:
    """Raise :class:`UnsafeOutput` when ``output`` equals, contains or lies inside an input
    location, or when any input file (``files``, canonical sources) lies inside ``output``.
    """
    out = _comparable(output)
    for item in inputs:
        for location in _locations(item):
            relation = _relation(out, _comparable(location))
            if relation:
                shown = item if location == item else f"{location} (from {item})"
                raise UnsafeOutput(
                    f"output {output} {relation} input {shown}: refusing to write there "
                    "(it would delete or re-read the input); choose an output outside every input"
                )
    for f in files:
        if _inside(_comparable(f), out):
            raise UnsafeOutput(
                f"input file {f} lies inside output {output}: refusing to write there"
            )


def check_outside_filter_outputs(location: str, role: str = "output") -> None:
    """Raise :class:`UnsafeOutput` when the local ``location`` is or lies inside a filter output
    folder (``spcl.io.outputs.is_filter_output``): what another job keeps there (a mask output, a
    vault) is not the filter's, and a later ``spcl filter --overwrite`` of that folder would have to
    remove it. URLs are not checked.
    """
    if not is_local(location):
        return
    resolved = os.path.realpath(local_path(location))
    for folder in (resolved, *[str(p) for p in Path(resolved).parents]):
        if os.path.isdir(folder) and is_filter_output(folder):
            relation = "is" if folder == resolved else "lies inside"
            raise UnsafeOutput(
                f"{role} {location} {relation} filter output folder {folder}: refusing to write "
                "there (a later `spcl filter --overwrite` of it would delete it); choose a folder "
                "outside every filter output"
            )


def check_job_output(inputs: Sequence[str], location: str, role: str = "output") -> None:
    """The path checks of a job that reads ``inputs`` and writes ``location`` (an output or a
    vault): :func:`check_output` and :func:`check_outside_filter_outputs`."""
    check_output(inputs, location)
    check_outside_filter_outputs(location, role)


@dataclass
class Listing:
    """Files to read (canonical sources, sorted, each once) and files left out, each with a
    reason."""

    files: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    duplicates: int = 0
    """How many times a file was reached again (overlapping inputs, links) and read only once."""


def _walk(root: str, listing: Listing, seen_dirs: set[str], found: list[str]) -> None:
    """Files under ``root`` (links followed, each real folder entered once), into ``found``."""
    real = os.path.realpath(root)
    if real in seen_dirs:
        return
    seen_dirs.add(real)
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as err:
        listing.skipped[root] = f"cannot_list:{type(err).__name__}"
        return
    for entry in entries:
        if entry.name.startswith((".", "_")):
            listing.skipped[entry.path] = "hidden_name"
            continue
        try:
            is_dir = entry.is_dir()  # follows links
            is_file = entry.is_file()
        except OSError as err:
            listing.skipped[entry.path] = f"cannot_list:{type(err).__name__}"
            continue
        if is_dir:
            _walk(entry.path, listing, seen_dirs, found)
        elif is_file:
            if entry.name in SIDE_FILES:
                listing.skipped[entry.path] = "spcl_side_file"
            else:
                found.append(entry.path)
        else:
            listing.skipped[entry.path] = "not_a_file_or_broken_link"


def list_local_inputs(inputs: Sequence[str]) -> Listing:
    """Every file reached by the local ``inputs`` (files, folders, globs), once, by canonical
    source.

    Raises ``FileNotFoundError`` naming an input that matches nothing.
    """
    listing = Listing()
    found: list[str] = []
    seen_dirs: set[str] = set()
    for item in inputs:
        path = local_path(item)
        if os.path.isdir(path):
            _walk(path, listing, seen_dirs, found)
        elif os.path.isfile(path):
            found.append(path)
        else:
            matches = (
                sorted(glob.glob(path, recursive=True))
                if any(c in path for c in _GLOB_CHARS)
                else []
            )
            if not matches:
                raise FileNotFoundError(f"input not found: {item}")
            for m in matches:
                if os.path.isdir(m):
                    _walk(m, listing, seen_dirs, found)
                elif os.path.isfile(m):
                    found.append(m)
    unique = {canonical_source(f) for f in found}
    listing.duplicates = len(found) - len(unique)
    listing.files = sorted(unique)
    return listing
