"""Units of work: the input files a job reads, each named by a stable key.

Every job whose unit of work is a file (mask, generalize, annotate) lists its input the same way: a
file is itself; a folder is searched recursively, names starting with ``.`` or ``_`` (Spark's
``_SUCCESS``, temporary files, a job's ``_work``) are skipped, and the job's ``accept`` rule says
which files are input. The key of a file (its stem and a hash of its path under the input root)
names its parts and done-marker.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from spcl.executor.errors import JobError
from spcl.io.writers import file_key as path_hash

_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of work: an input file and its key."""

    path: str
    key: str


def list_unit_files(
    input_path: str | Path,
    accept: Callable[[Path], bool],
    *,
    what: str = "file",
    error: type[Exception] = JobError,
) -> list[Path]:
    """The files under ``input_path`` (a file or a folder, searched recursively) that ``accept``
    takes, sorted; under a folder, paths with a part starting with ``.`` or ``_`` are skipped.
    ``error`` (naming the path) when the input is neither a file nor a folder.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for name in ("b.parquet", "a.parquet", "_tmp/c.parquet", ".x.parquet", "n.txt"):
    ...     (root / name).parent.mkdir(exist_ok=True); _ = (root / name).write_text("")
    >>> [p.name for p in list_unit_files(root, lambda p: p.suffix == ".parquet")]
    ['a.parquet', 'b.parquet']
    """
    root = Path(input_path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise error(f"input {root} is neither a {what} nor a folder")
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and accept(p)
        and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
    )


def _relative(path: Path, root: str | Path) -> str:
    base = Path(root)
    return path.relative_to(base).as_posix() if base.is_dir() else path.name


def file_key(path: Path, root: str | Path) -> str:
    """A stable, filesystem-safe name for one input file: its stem and a hash of its path under
    ``root``.

    >>> file_key(Path("/in/decision=flagged/part-0.parquet"), "/in")[:7]
    'part-0-'
    """
    digest = hashlib.sha256(_relative(path, root).encode("utf-8")).hexdigest()[:12]
    return f"{_KEY_UNSAFE.sub('_', path.stem)[:80]}-{digest}"


def part_path(folder: Path, key: str) -> Path:
    """The Parquet part of the unit ``key`` in ``folder``: ``part-<key>.parquet``, or
    ``<key>.parquet`` when the key already starts with ``part-`` (an input ``part-00000.parquet``
    gives ``part-00000-<hash>.parquet``, not ``part-part-…``). A part an earlier version wrote under
    the doubled name is still found (and kept using).

    >>> (part_path(Path("out"), "part-00000-0123abcd").name,
    ...  part_path(Path("out"), "docs-0123abcd").name)
    ('part-00000-0123abcd.parquet', 'part-docs-0123abcd.parquet')
    """
    legacy = folder / f"part-{key}.parquet"
    if not key.startswith("part-") or legacy.exists():
        return legacy
    return folder / f"{key}.parquet"


def record_file_key(path: Path, root: str | Path) -> str:
    """The key of a record file (JSONL, Parquet, compressed): the name before its first ``.`` and
    ``spcl.io.writers.file_key`` of its path under ``root`` (the annotate job's parts are named so).

    >>> record_file_key(Path("/in/a.jsonl.gz"), "/in").startswith("a-")
    True
    """

    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.name.split(".")[0])[:60]
    return f"{stem}-{path_hash(_relative(path, root))}"


def foreign_input(
    keyed: list[tuple[Path, str]], recorded: Callable[[str], str | None]
) -> tuple[str, Path] | None:
    """``(recorded input, path)`` of the first listed file whose key's done-marker recorded another
    input file (``recorded(key)``: the marker's input path, ``None`` when not done), else ``None``:
    an output folder belongs to one input, so a job never replaces another input's results that
    carry the same key.

    >>> keyed = [(Path("/in/a.parquet"), "a-1"), (Path("/in/b.parquet"), "b-2")]
    >>> foreign_input(keyed, {"a-1": "/in/a.parquet", "b-2": "/other/b.parquet"}.get)
    ('/other/b.parquet', PosixPath('/in/b.parquet'))
    >>> foreign_input(keyed, {}.get) is None
    True
    """
    for path, key in keyed:
        found = recorded(key)
        if found is not None and Path(found).resolve() != path.resolve():
            return found, path
    return None


def other_settings(
    keyed: list[tuple[Path, str]], recorded: Callable[[str], str | None], current: str
) -> list[str]:
    """The keys whose done-marker recorded a release hash other than ``current`` (``recorded(key)``:
    the marker's hash, ``None`` when not done): skipping those files would leave their old output
    under this run's settings, so a job refuses to run. A done unit whose marker holds no hash
    (``""``: an older or edited marker) counts as other settings too: an empty hash never passes the
    check.

    >>> keyed = [(Path("/in/a.parquet"), "a-1"), (Path("/in/b.parquet"), "b-2"),
    ...          (Path("/in/c.parquet"), "c-3")]
    >>> other_settings(keyed, {"a-1": "h1", "b-2": "h2", "c-3": ""}.get, "h1")
    ['b-2', 'c-3']
    >>> other_settings(keyed, {"a-1": "h1"}.get, "h1")
    []
    """
    return [
        key
        for _, key in keyed
        if (found := recorded(key)) is not None and (not found or found != current)
    ]
