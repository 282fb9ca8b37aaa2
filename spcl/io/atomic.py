"""Atomic writes of local files: a reader sees the old file or the whole new one, never a part.

Plain Python (no pyarrow), so a module low in the stack (the detectors' table cache) can write
through it; ``spcl.io.storage`` writes local paths through it as well.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from spcl.messages import with_path


@contextmanager
def atomic_local_file(path: str | Path, *, private: bool = False) -> Iterator[IO[bytes]]:
    """A binary file to write the local ``path`` through: it is a hidden temporary file beside
    ``path``, flushed to disk and moved into place when the block ends, so a reader sees the old
    file or the whole new one, never a part (a full disk or a kill leaves no half-written file under
    the real name; the temporary file is removed on any error, and an ``OSError`` names ``path``).
    ``private`` creates it with mode 0600.
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
    """Write UTF-8 ``text`` to the local ``path`` atomically (:func:`atomic_local_file`);
    ``private`` creates it with mode 0600."""
    with atomic_local_file(path, private=private) as fh:
        fh.write(text.encode("utf-8"))
