"""EMAIL: addresses with an ASCII local part and a dotted domain ending in an alphabetic TLD.

Also the forms written to escape harvesters: ``name [at] naver [dot] com``, ``name(at)gmail.com``,
``name @ naver.com``, ``name at naver dot com`` (a bare "at" only with "dot" words).

An allow-list leaves role and example addresses unreported: ``detect.email_allow_domains`` (a domain
and its subdomains; the word ``docs`` stands for ``spcl.config.EMAIL_DOC_DOMAINS``:
example.com/net/org/edu, .example, .test, .invalid, .localhost, example.jp …) and
``detect.email_allow_locals`` (``noreply``, or a prefix ``bug-*``). By default the documentation
domains are allowed (``email_allow_domains: [docs]``: an address there is never a person's) and no
local part is; ``email_allow_domains: []`` reports every address.

The local part may only start where the character before it cannot belong to a local part, so each
run of local-part characters is scanned once (a 100k-letter run without '@' costs one pass, not n²).
"""

from __future__ import annotations

import re

from spcl.config import EMAIL_DOC_DOMAINS, DetectSettings
from spcl.detect._common import lowered, window_has
from spcl.detect.base import Hit

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@"
    r"[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.(?P<tld>[A-Za-z]{2,24})(?![A-Za-z0-9\-])"
)
# Addresses written so that a harvester misses them: "name [at] naver [dot] com",
# "name(at)gmail.com", "name at naver dot com". A bracketed "at" takes a dotted or "dot"-worded
# domain; a bare " at " only a domain with "dot" words (English "available at example.org" is no
# address).
_BR_AT = r"\s{0,2}(?:[\[(](?i:at)[\])]|[\[(] (?i:at) [\])])\s{0,2}"
_BR_DOT = r"\s{0,2}(?:[\[(](?i:dot)[\])]|[\[(] (?i:dot) [\])])\s{0,2}"
_LABEL = r"[A-Za-z0-9\-]{1,63}"
_OBFUSCATED = re.compile(
    r"(?<![A-Za-z0-9._%+\-])(?P<local>[A-Za-z0-9._%+\-]{1,64})"
    r"(?:(?P<br>" + _BR_AT + r"| @ )|\s(?i:at)\s)"
    r"(?P<domain>"
    + _LABEL
    + r"(?:(?:"
    + _BR_DOT
    + r"|\s(?i:dot)\s|(?P<plain>\.))"
    + _LABEL
    + r"){1,4})"
    r"(?![A-Za-z0-9\-])"
)
_DOT_WORD = re.compile(_BR_DOT + r"|\s(?i:dot)\s")
_COMMON_TLDS = frozenset(
    (
        "com",
        "net",
        "org",
        "edu",
        "gov",
        "info",
        "biz",
        "io",
        "me",
        "co",
        "kr",
        "jp",
        "us",
        "uk",
        "ca",
        "au",
        "de",
        "fr",
        "cn",
        "tw",
        "hk",
        "sg",
        "in",
        "ru",
        "br",
        "es",
        "it",
        "nl",
        "eu",
    )
)
# A closing bracket right after "at" ("(at)", "[ AT ]"): the scan stops only at ')' and ']' (a cheap
# gate).
_AT_CLOSER = re.compile(r"[)\]](?:(?<=[aA][tT].)|(?<=[aA][tT] .))")
_NOT_A_WORD = re.compile(r"[^A-Za-z]")
_MAIL_WORDS = re.compile(r"e-?mail|mail|contact|write to|메일|연락|メール|連絡", re.IGNORECASE)
_LOCAL_RUN = re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@")
# "logo@2x.png" and friends: file names, not mailboxes.
_FILE_TLDS = frozenset(
    {"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "js", "css", "map"}
)


class EmailDetector:
    """E-mail addresses (``validated=None``: there is nothing to check beyond the shape)."""

    name = "email@1"
    type = "EMAIL"

    def __init__(self, settings: DetectSettings) -> None:
        domains = {d.strip().lower().lstrip(".") for d in settings.email_allow_domains}
        if "docs" in domains:  # the documentation domains by one word
            domains = (domains - {"docs"}) | set(EMAIL_DOC_DOMAINS)
        self._domains = frozenset(domains)
        locals_ = [x.strip().lower() for x in settings.email_allow_locals]
        self._locals = frozenset(x for x in locals_ if not x.endswith("*"))
        self._prefixes = tuple(x[:-1] for x in locals_ if x.endswith("*"))

    def allowed(self, address: str) -> bool:
        """True when ``address`` is on the allow-list (its domain or a parent domain, or its local
        part).

        >>> detector = EmailDetector(DetectSettings(email_allow_domains=("example.com",)))
        >>> detector.allowed("a@mail.example.com")
        True
        """
        local, _, domain = address.lower().rpartition("@")
        if local in self._locals or (self._prefixes and local.startswith(self._prefixes)):
            return True
        if self._domains:
            labels = domain.split(".")
            return any(".".join(labels[i:]) in self._domains for i in range(len(labels)))
        return False

    def find(self, text: str) -> list[Hit]:
        """EMAIL hits in ``text``.

        >>> EmailDetector(DetectSettings()).find("메일: kim.minsu@mailbox.co.kr 로")
        [Hit(type='EMAIL', start=4, end=27, validated=None, detector='email@1')]
        """
        hits: list[Hit] = []
        pos = 0
        while (at := text.find("@", pos)) != -1:
            # The local part lies between the previous '@' (or match) and this one, at most 64
            # characters: each character is looked at a bounded number of times, however many '@'
            # there are.
            local = _LOCAL_RUN.search(text, max(pos, at - 64), at + 1)
            m = _EMAIL.match(text, local.start()) if local is not None else None
            if m is None:
                pos = at + 1
                continue
            pos = m.end()
            if m.group("tld").lower() in _FILE_TLDS or m.group().startswith("."):
                continue
            if (self._domains or self._locals or self._prefixes) and self.allowed(m.group()):
                continue
            hits.append(Hit(self.type, m.start(), m.end(), None, self.name))
        if (
            ("@" in text and " @ " in text)
            or _AT_CLOSER.search(text) is not None
            or " dot " in lowered(text)
        ):
            hits += self._obfuscated(text)
        return hits

    def _obfuscated(self, text: str) -> list[Hit]:
        """Hits of addresses written with "at"/"dot" words (the span covers the whole written form).

        >>> EmailDetector(DetectSettings()).find("mail: hong [at] naver [dot] com")
        [Hit(type='EMAIL', start=6, end=31, validated=None, detector='email@1')]
        """
        hits: list[Hit] = []
        pos = 0
        while (m := _OBFUSCATED.search(text, pos)) is not None:
            # a skipped candidate ("reach me at name AT …") must not swallow the real local part
            # after it: the next search starts right after this candidate's local part, after a hit
            # at its end
            pos = m.end("local") + 1
            if m.group("br") is None and (
                m.group("plain") is not None
                or not (
                    _NOT_A_WORD.search(m.group("local"))
                    or window_has(_MAIL_WORDS, text, m.start(), 24)
                )
            ):
                # "available at example.org", "look at this dot com": a bare "at" needs "dot" words
                # throughout and a local part no word could be (digits, '.', '_' …) or a mail word
                # before it
                continue
            domain = _DOT_WORD.sub(".", m.group("domain"))
            tld = domain.rpartition(".")[2]
            if not tld.isalpha() or not 2 <= len(tld) <= 24 or tld.lower() in _FILE_TLDS:
                continue
            if m.group("br") in (None, " @ ") and tld.lower() not in _COMMON_TLDS:
                # "hi @ john.doe": an unbracketed form only with a mail provider's usual TLD
                continue
            address = f"{m.group('local')}@{domain}"
            if (self._domains or self._locals or self._prefixes) and self.allowed(address):
                continue
            hits.append(Hit(self.type, m.start(), m.end(), None, self.name))
            pos = m.end()
        return hits
