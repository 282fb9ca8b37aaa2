"""Paths as URLs: one small layer over ``pyarrow.fs`` so local paths and ``s3://``, ``s3a://``, ``gs://``,
``hdfs://`` outputs are the same code."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO
from urllib.parse import urlparse

import pyarrow.fs as pafs

from spcl.messages import with_path


def is_local(url: str) -> bool:
    """True for plain paths and ``file:`` URLs."""
    return urlparse(url).scheme in ("", "file")


def local_path(url: str) -> str:
    """The filesystem path of a plain path or ``file:`` URL."""
    return urlparse(url).path if url.startswith("file:") else url


def filesystem(url: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a local path or URL; Hadoop's ``s3a``/``s3n`` are read as ``s3``."""
    if is_local(url):
        return pafs.LocalFileSystem(), os.path.abspath(local_path(url))
    scheme, rest = url.split("://", 1)
    if scheme in ("s3a", "s3n"):
        scheme = "s3"
    return pafs.FileSystem.from_uri(f"{scheme}://{rest}")


def join(url: str, *parts: str) -> str:
    """``url`` with ``parts`` appended with ``/``."""
    return "/".join([url.rstrip("/"), *parts])


def is_nonempty_dir(url: str) -> bool:
    """True when ``url`` exists and is a non-empty folder (or a file)."""
    fs, path = filesystem(url)
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.NotFound:
        return False
    if info.type != pafs.FileType.Directory:
        return True
    return bool(fs.get_file_info(pafs.FileSelector(path, recursive=False)))


def is_existing_file(url: str) -> bool:
    """True when ``url`` exists and is not a folder."""
    fs, path = filesystem(url)
    return fs.get_file_info(path).type not in (pafs.FileType.NotFound, pafs.FileType.Directory)


@contextmanager
def atomic_local_file(path: str | Path, *, private: bool = False) -> Iterator[IO[bytes]]:
    """A binary file to write the local ``path`` through: it is a hidden temporary file beside ``path``, flushed
    to disk and moved into place when the block ends, so a reader sees the old file or the whole new one, never a
    part (a full disk or a kill leaves no half-written file under the real name; the temporary file is removed
    on any error, and an ``OSError`` names ``path``). ``private`` creates it with mode 0600.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o666)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise with_path(err, target) from err
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, text: str, *, private: bool = False) -> None:
    """Write UTF-8 ``text`` to the local ``path`` atomically (:func:`atomic_local_file`); ``private`` creates it
    with mode 0600."""
    with atomic_local_file(path, private=private) as fh:
        fh.write(text.encode("utf-8"))


def write_text(url: str, text: str) -> None:
    """Write a UTF-8 text file at ``url``: atomically for a local path (:func:`write_atomic`); an object store
    publishes an object only when its upload completes."""
    if is_local(url):
        write_atomic(local_path(url), text)
        return
    fs, path = filesystem(url)
    with fs.open_output_stream(path) as out:
        out.write(text.encode("utf-8"))
