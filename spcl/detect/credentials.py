"""CREDENTIAL: secrets in code, configuration and logs — access-key ids, service tokens, JWTs, PEM
private keys and ``password = "…"``-style assignments.

- Token shapes with a fixed prefix: AWS access-key ids (``AKIA``/``ASIA``/… + 16 upper-case letters
  or digits), GitHub (``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36, ``github_pat_…``), GitLab
  (``glpat-`` …), Slack (``xoxb-``/``xoxp-``/… and ``hooks.slack.com/services/…`` webhooks), JSON
  Web Tokens (``eyJ….eyJ….sig``, checked by decoding). A placeholder (``AKIAIOSFODNN7EXAMPLE``,
  ``ghp_xxxx…``) is ``validated=False`` and so not reported.
- PEM private-key blocks ``-----BEGIN … PRIVATE KEY-----`` … ``-----END … PRIVATE KEY-----``: the
  span is the whole block (a block cut off before its END line: the BEGIN line and the base64 body
  after it); a body of ``...`` or a few characters is a placeholder.
- Assignments: a secret word (password, passwd, pwd, passphrase, secret, token, api_key, access_key,
  client_secret …, also inside ``DB_PASSWORD``, ``PGPASSWORD`` or ``"password":``) then ``=``, ``:``
  or ``=>`` and a value; the span is the value only. A quoted value counts unless it is a
  placeholder (:func:`spcl.detect.validators.secret_is_placeholder`); an unquoted one must also hold
  a digit or a symbol and must not read as code (``self.password``, ``get_token()``), an ALL_CAPS
  name, a path (``NOPASSWD: /bin/kill``) or a field list (``name:passwd:uid``).

Every pattern is bounded; a PEM END line is looked up with ``str.find`` within 16 KB of its BEGIN
line.
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect._common import lowered
from spcl.detect.base import Hit
from spcl.detect.validators import (
    secret_is_placeholder,
    validate_jwt,
    validate_key_id,
    validate_private_key_body,
)

# One pattern per family, each starting with a literal, so the engine finds candidates with a fast
# string search; the left boundary (no letter, digit, "_" or "-" before) is checked in Python.
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "aws_key",
        re.compile(
            r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|PKA|ROA|SCA)[A-Z0-9]{16}(?![A-Za-z0-9_\-])"
        ),
    ),
    (
        "github_token",
        re.compile(
            r"gh(?:[pousr]_[A-Za-z0-9]{36}|ithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})"
            r"(?![A-Za-z0-9_\-])"
        ),
    ),
    (
        "gitlab_token",
        re.compile(
            r"gl(?:pat|dt|rt|ptt|cbt|imt|soat|ft|agent|oas|ffct)-[A-Za-z0-9_\-]{20,64}"
            r"(?![A-Za-z0-9_\-])"
        ),
    ),
    (
        "slack_token",
        re.compile(r"xox[abposre]-[0-9A-Za-z]{2,40}(?:-[0-9A-Za-z]{2,64}){1,4}(?![A-Za-z0-9_\-])"),
    ),
    (
        "jwt",
        re.compile(
            r"eyJ[A-Za-z0-9_\-]{8,4000}\.eyJ[A-Za-z0-9_\-]{8,8000}\.[A-Za-z0-9_\-]{16,4000}"
            r"(?![A-Za-z0-9_\-])"
        ),
    ),
    (
        "slack_token",
        re.compile(
            r"hooks\.slack\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{20,32}"
        ),
    ),
)
_LEFT = frozenset("_-")

_PEM_BEGIN = re.compile(
    r"-----BEGIN (?P<kind>(?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----"
)
_PEM_BODY = re.compile(r"\r?\n?(?:[ \t]*[A-Za-z0-9+/=]{1,128}[ \t]*\r?\n?){1,256}")
_PEM_MAX = 16_384

# secret words, found in the lower-cased text by their prefix (``str.find``) and then matched here
_WORD_PREFIXES = (
    "pass",
    "pwd",
    "secret",
    "token",
    "api",
    "access",
    "auth",
    "private",
    "credential",
)
_SECRET_WORD = re.compile(
    r"password|passwd|passphrase|pwd|secret|token|api[_\-]?key|access[_\-]?key|auth[_\-]?key|"
    r"private[_\-]?key|credentials?"
)
_SECRET_WORD_ANY_CASE = re.compile(_SECRET_WORD.pattern, re.IGNORECASE)
_ASSIGN = re.compile(
    r"[A-Za-z0-9_\-]{0,24}[\"']?[ \t]{0,3}(?P<op>:=|=>|[:=])(?P<sp>[ \t]{0,3})"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,200})(?P=q)|(?P<v>[A-Za-z0-9!#$%*+\-./:=?@^_~]{1,200}))"
)
_CODE_VALUE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[A-Z][A-Z0-9_]*|[A-Za-z]+|\d+"
)


class CredentialDetector:
    """Access keys, tokens, JWTs, PEM private keys and secret assignments (one ``CREDENTIAL`` type;
    the ``detector`` name says which: ``aws_key@1``, ``github_token@1``, ``gitlab_token@1``,
    ``slack_token@1``, ``jwt@1``, ``private_key@1``, ``password@1``).

    >>> detector = CredentialDetector(DetectSettings())
    >>> [h.detector for h in detector.find('db_password = "t7#Qz9!vLm"')]
    ['password@1']
    """

    name = "credential@1"
    type = "CREDENTIAL"

    def __init__(self, settings: DetectSettings) -> None:
        self._keep_invalid = settings.keep_invalid

    def _add(self, hits: list[Hit], start: int, end: int, valid: bool | None, name: str) -> None:
        if valid is not False or self._keep_invalid:
            hits.append(Hit(self.type, start, end, valid, name))

    def find(self, text: str) -> list[Hit]:
        """CREDENTIAL hits in ``text``."""
        hits: list[Hit] = []
        for label, pattern in _TOKENS:
            for m in pattern.finditer(text):
                s = m.start()
                if s and (
                    (text[s - 1].isascii() and text[s - 1].isalnum()) or text[s - 1] in _LEFT
                ):
                    continue
                value = m.group()
                valid = (
                    validate_jwt(value)
                    if label == "jwt"
                    else (None if value.startswith("hooks.") else validate_key_id(value))
                )
                self._add(hits, s, m.end(), valid, f"{label}@1")
        if "-----BEGIN" in text:
            self._pem(text, hits)
        low = lowered(text)
        if len(low) == len(text):  # lower() kept every offset (it does for all but a few letters)
            ends: set[int] = set()
            for prefix in _WORD_PREFIXES:
                i = low.find(prefix)
                while i != -1:
                    w = _SECRET_WORD.match(low, i)
                    if w is not None and (prefix != "pwd" or not (i and low[i - 1].isalpha())):
                        ends.add(w.end())
                    i = low.find(prefix, i + 1)
            for end in sorted(ends):
                self._assignment(text, end, hits)
        else:
            for w in _SECRET_WORD_ANY_CASE.finditer(text):
                self._assignment(text, w.end(), hits)
        return hits

    def _pem(self, text: str, hits: list[Hit]) -> None:
        pos = 0
        while (m := _PEM_BEGIN.search(text, pos)) is not None:
            end_line = f"-----END {m.group('kind')}-----"
            stop = text.find(end_line, m.end(), m.end() + _PEM_MAX)
            if stop != -1:
                body = text[m.end() : stop]
                end = stop + len(end_line)
                valid: bool | None = validate_private_key_body(body)
            else:  # cut off: the BEGIN line and the base64 lines after it
                b = _PEM_BODY.match(text, m.end())
                body = text[m.end() : b.end()] if b else ""
                end = m.end() + len(body.rstrip())
                valid = None if validate_private_key_body(body) else False
            self._add(hits, m.start(), end, valid, "private_key@1")
            pos = max(end, m.end())

    def _assignment(self, text: str, at: int, hits: list[Hit]) -> None:
        m = _ASSIGN.match(text, at)
        if m is None:
            return
        if m.group("qv") is not None:
            value, start = m.group("qv"), m.start("qv")
            ok = (
                value.count(" ") < 3 and value.strip() == value and not secret_is_placeholder(value)
            )
        else:
            value, start = m.group("v"), m.start("v")
            # "name:passwd:uid" (a field list) is no assignment: after a bare ":" a YAML value needs
            # a space
            ok = (
                (m.group("op") != ":" or bool(m.group("sp")))
                and len(value) >= 6
                and ":" not in value
                and not value.startswith(("/", "./", "~/", "http"))
                and not _CODE_VALUE.fullmatch(value)
                and not secret_is_placeholder(value)
                and text[m.end("v") : m.end("v") + 1] not in ("(", "[")
            )
        value = value.rstrip(".")
        if value and (ok or self._keep_invalid):
            hits.append(
                Hit(self.type, start, start + len(value), None if ok else False, "password@1")
            )
