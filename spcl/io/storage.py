"""Paths as URLs: one small layer over ``pyarrow.fs`` so local paths and ``s3://``, ``s3a://``,
``gs://``, ``hdfs://`` outputs are the same code."""

from __future__ import annotations

import os
from urllib.parse import urlparse

import pyarrow.fs as pafs

from spcl.io.atomic import write_atomic


def is_local(url: str) -> bool:
    """True for plain paths and ``file:`` URLs."""
    return urlparse(url).scheme in ("", "file")


def local_path(url: str) -> str:
    """The filesystem path of a plain path or ``file:`` URL."""
    return urlparse(url).path if url.startswith("file:") else url


def filesystem(url: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a local path or URL; Hadoop's ``s3a``/``s3n`` are read as
    ``s3``."""
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


def write_text(url: str, text: str) -> None:
    """Write a UTF-8 text file at ``url``: atomically for a local path (:func:`write_atomic`); an
    object store publishes an object only when its upload completes."""
    if is_local(url):
        write_atomic(local_path(url), text)
        return
    fs, path = filesystem(url)
    with fs.open_output_stream(path) as out:
        out.write(text.encode("utf-8"))
