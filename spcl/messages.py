"""How user-controlled strings (ids, file names, URLs, reasons read from data) appear in messages
and logs.

A value from the data may hold a newline, a carriage return or a terminal escape: printed raw, an id
such as ``"a\\n2026-01-01 INFO spcl: all good"`` forges a second log line. :func:`shown` escapes
every character that is not printable (and the backslash, so the escaped form is unambiguous);
:class:`OneLineFormatter` applies it to every log message, so a log record is always one line (a
traceback, when logged, follows it as usual). Printable text — Japanese, Korean, spaces — is kept as
is.
"""

from __future__ import annotations

import errno
import logging
import os

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def shown(value: object) -> str:
    r"""``str(value)`` with every non-printable character (and ``\``) escaped: always one line, no
    control codes.

    >>> print(shown("doc-1\n2026 INFO forged"), shown("連絡先 a b"), shown("a\x1b[2Jb"))
    doc-1\n2026 INFO forged 連絡先 a b a\x1b[2Jb
    """
    text = str(value)
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(ch if ch.isprintable() and ch != "\\" else _escape(ch) for ch in text)


def shown_lines(value: object) -> str:
    r"""A multi-line message (a configuration error naming one key per line) with each line
    :func:`shown`: real line breaks stay line breaks, every other control character is escaped.

    >>> print(shown_lines("invalid configuration in c.yaml:\n  mask.operators: bad\x1b[2J"))
    invalid configuration in c.yaml:
      mask.operators: bad\x1b[2J
    """
    return "\n".join(shown(line) for line in str(value).splitlines()) if str(value) else ""


_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


def os_error_line(err: OSError) -> str:
    """One line for a failed read or write: the path and the cause, e.g.
    ``cannot write /out/stats.json: No space left on device (ENOSPC)``.

    >>> os_error_line(OSError(errno.ENOSPC, "Error writing bytes to file", "/out/a.parquet"))
    'cannot write /out/a.parquet: No space left on device (ENOSPC)'
    >>> os_error_line(PermissionError(errno.EACCES, "Permission denied", "/ro/vault"))
    'cannot access /ro/vault: Permission denied (EACCES)'
    """
    code = err.errno if isinstance(err.errno, int) else None
    cause = os.strerror(code) if code else (err.strerror or str(err) or type(err).__name__)
    if code:
        cause += f" ({errno.errorcode.get(code, code)})"
    verb = "cannot write" if code in _WRITE_ERRORS else "cannot access"
    paths = [p for p in (err.filename, getattr(err, "filename2", None)) if p is not None]
    where = (
        f"{verb} {' -> '.join(shown(os.fsdecode(p)) for p in paths)}"
        if paths
        else "input/output failed"
    )
    return f"{where}: {shown(cause)}"


def with_path(err: OSError, path: str | os.PathLike[str]) -> OSError:
    """``err`` naming ``path`` when it names none (pyarrow's write errors do not): the same type
    and errno."""
    if err.filename is not None:
        return err
    named = (
        type(err)(err.errno, err.strerror or str(err), os.fspath(path))
        if err.errno
        else OSError(errno.EIO, str(err) or type(err).__name__, os.fspath(path))
    )
    return named


class OneLineFormatter(logging.Formatter):
    """A ``logging.Formatter`` that escapes the message (:func:`shown`): one log record, one
    line."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The formatted line, with the record's message escaped."""
        record.message = shown(record.message)
        return super().formatMessage(record)
