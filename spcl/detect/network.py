"""IP: IPv4 and IPv6 addresses that can point at a person (public unicast addresses).

IPv4 is a dotted quad not glued to letters, digits, dots or hyphens (so version strings
``2.6.32.1-rc1``, OIDs ``1.3.6.1.4.1`` and section numbers ``1.2.3.4.5`` are not read as addresses),
each part 0-255 without a leading zero. A quad of small numbers (first part below 10, each part at
most two digits: ``2.6.38.6``, ``7.21.6.2`` — a version, revision or section number as often as an
address) counts only after a network word (IP, address, host, server, client …). Not reported: a
network written with its prefix length (``203.0.113.0/24``, ``2001:e20:2000:40f::/64``; ``/32`` and
``/128`` are hosts), an address beside a host name (``gnu.org: 209.51.188.116``, ``146.82.138.7
master.debian.org``: a DNS listing or hosts file of a server), and a quad right after a version or
configuration word (version, release, build, kernel, subnet, range, netmask …). IPv6 is a run of hex
groups and colons that Python's ``ipaddress`` parses, starting with a global-unicast group
(2000::/3; ``ip_private`` adds no IPv6 ranges). Private, loopback, link-local, documentation,
multicast and reserved IPv4 ranges are not reported unless ``detect.ip_private`` is true
(:func:`validators.ip_is_public`; made-up example quads such as ``1.2.3.4`` or ``11.22.33.44``
neither), nor the addresses of ``detect.ip_allow`` (default ``[dns]``: the well-known public DNS
resolvers 8.8.8.8, 1.1.1.1 …).

Addresses of network configuration, command examples and protocol traces are not a person's either:
a quad with a netmask within 64 characters, with another quad within 10 (a range, a list, ``A ->
B``, ``who-has A tell B``), after a configuration word (gateway, nameserver, listen-on, allow, deny
…), after a shell prompt and command (``$ ./a.out A``), or marked as an example (e.g., for example,
例えば, 例:, 예를 들어 … earlier in its sentence; …のように, …같이 right after). Such a veto holds
for that occurrence only: the same address elsewhere in the text, in a sentence of its own, is still
reported (a login address that a later firewall line allows is still a person's), and the masker
then replaces every whole-word occurrence of it. ``validated`` is ``True``.
"""

from __future__ import annotations

import ipaddress
import re

from spcl.config import IP_DNS_RESOLVERS, DetectSettings
from spcl.detect._common import window_has
from spcl.detect.base import Hit
from spcl.detect.validators import ip_is_public, validate_ipv4

# The patterns start with their first character class (no lookbehind first), so the regex engine
# skips to candidate characters at C speed; the left boundary is checked in Python on the few
# candidates.
_IPV4 = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![A-Za-z0-9_\-])(?!\.[A-Za-z0-9])")
_IPV4_LEFT = re.compile(r"(?:[A-Za-z0-9_\-]|\d\.|[fF]{4}:)$")
# a public IPv6 address lies in 2000::/3: its first group is four hex digits starting with 2 or 3
_HEX = frozenset("0123456789abcdefABCDEF")
_IPV6 = re.compile(r"[23][0-9A-Fa-f]{3}:[0-9A-Fa-f:]{2,35}(?:\.\d{1,3}){0,3}(?![A-Za-z0-9_:])")
_VERSION_CONTEXT = re.compile(
    r"version|ver\.|release|build|kernel|linux|firmware|revision|rev\.|patch|update|confirmed on|"
    r"subnet|range|netmask|routers|chrome|firefox|safari|android|windows|macos|ios|python|java|"
    r"node|openssl|nginx|apache|gcc|glibc|php|perl|ruby|버전|빌드|リビジョン|バージョン|ビルド|版",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"/(\d{1,3})(?!\d)")
# a host name right before or after the address: a DNS listing or hosts-file line of a server, not a
# person
_HOST_BEFORE = re.compile(
    r"[A-Za-z0-9\-]\.(?:org|com|net|edu|gov|io|jp|kr|de|uk)[:\s]{1,3}$", re.IGNORECASE
)
_HOST_AFTER = re.compile(
    r"[\s:]{1,3}[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,4}\.(?:org|com|net|edu|gov|io|jp|kr|"
    r"de|uk)(?![A-Za-z])",
    re.IGNORECASE,
)
# Addresses of network configuration, command examples and protocol traces, not of a person. A veto
# holds for its own occurrence only: fail closed for the same address written elsewhere.
_NETMASK = re.compile(
    r"(?<![\d.])255\.(?:255|254|252|248|240|224|192|128|0)\.\d{1,3}\.\d{1,3}(?![\d.])"
)
_QUAD = re.compile(r"(?<![\d.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\d.])")
_CONFIG_CONTEXT = re.compile(
    r"gateway|ゲートウェイ|게이트웨이|name-?servers?|nameserver|listen-on|only_from|no_access|"
    r"allow|deny|route|who-has|is-at",
    re.IGNORECASE,
)
_EXAMPLE_BEFORE = re.compile(
    r"例えば|例[:：]|[(（]例|e\.g\.|for example|for instance|such as|예를 들어|예[:：]|예시",
    re.IGNORECASE,
)
_EXAMPLE_AFTER = re.compile(r"[\s'\"`]{0,3}(?:のよう|などの|같이|와 같은|과 같은)")
_PROMPT = re.compile(r"(?:^|\s)[$#%] \S{1,40}(?: \S{1,40}){0,3} $")  # "$ ./a.out 193.168.1.128"
_SENTENCE_END = re.compile(r"[。！？\n]|[.!?](?:\s|$)")
_NET_CONTEXT = re.compile(
    r"(?<![A-Za-z])ip(?![A-Za-z])|addr|host|server|client|ping|connect|from|dns|서버|주소|접속|"
    r"アドレス|サーバ|ホスト",
    re.IGNORECASE,
)


class IpDetector:
    """Public IPv4/IPv6 addresses (all addresses with ``ip_private``).

    >>> IpDetector(DetectSettings()).find("login from 93.184.216.34 at noon")
    [Hit(type='IP', start=11, end=24, validated=True, detector='ip@1')]
    >>> IpDetector(DetectSettings()).find("server 192.168.0.1, version 2.6.32.1")
    []
    """

    name = "ip@1"
    type = "IP"

    def __init__(self, settings: DetectSettings) -> None:
        self._private = settings.ip_private
        self._window = settings.context_window
        allow = {a.strip() for a in settings.ip_allow}
        if "dns" in allow:  # the public DNS resolvers by one word
            allow = (allow - {"dns"}) | set(IP_DNS_RESOLVERS)
        self._allow = frozenset(allow)

    def find(self, text: str) -> list[Hit]:
        """IP hits in ``text``.

        Candidates are found from the dots and colons of the text (``str.find``: a dotted quad has a
        digit on both sides of a dot, a public IPv6 address starts with a four-hex-digit group
        before its first colon), so ordinary prose costs a few string searches, not a regex scan
        over every character.
        """
        hits: list[Hit] = []
        seen = -1
        i = text.find(".")
        while i != -1:
            if 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit():
                s = i - 1
                while s > 0 and i - s < 3 and text[s - 1].isdigit():
                    s -= 1
                if s > seen and (m := _IPV4.match(text, s)) is not None:
                    seen = m.end()
                    hit = self._ipv4(text, m)
                    if hit is not None:
                        hits.append(hit)
                    i = text.find(".", m.end())
                    continue
            i = text.find(".", i + 1)
        i = text.find(":")
        while i != -1:
            s = i - 4
            if (
                s >= 0
                and text[s] in "23"
                and all(c in _HEX for c in text[s + 1 : i])
                and (m := _IPV6.match(text, s))
            ):
                hit = self._ipv6(text, m)
                if hit is not None:
                    hits.append(hit)
                i = text.find(":", m.end())
                continue
            i = text.find(":", i + 1)
        return hits

    def _ipv4(self, text: str, m: re.Match[str]) -> Hit | None:
        """The hit of one dotted quad; ``None`` when this occurrence is no personal address (a
        version, a network, configuration, an example or a server's address beside its host
        name)."""
        s = m.start()
        if s and _IPV4_LEFT.search(text, max(0, s - 5), s):
            return None
        value = m.group()
        if (
            not validate_ipv4(value)
            or (not self._private and not ip_is_public(value))
            or value in self._allow
        ):
            return None
        if window_has(_VERSION_CONTEXT, text, s, 12):
            return None
        if self._example(text, s, m.end()):
            return None
        parts = value.split(".")
        small = int(parts[0]) < 10 and all(len(p) <= 2 for p in parts)  # 2.6.38.6, C11 7.21.6.2
        if small and not window_has(_NET_CONTEXT, text, s, self._window):
            return None
        if _HOST_BEFORE.search(text, max(0, s - 12), s) or _HOST_AFTER.match(text, m.end()):
            return None  # a server's address in a DNS listing or hosts file
        if _network_prefix(text, m.end(), 32):
            return None
        return Hit(self.type, s, m.end(), True, self.name)

    @staticmethod
    def _example(text: str, s: int, e: int) -> bool:
        """True when the quad at ``[s, e)`` is network configuration, a command example or a
        protocol trace: a netmask within 64 characters, another quad within 10, a configuration word
        (gateway, nameserver, allow, who-has …) right before, a shell prompt and command before it,
        or an example word (e.g., for example, 例えば, 예를 들어 …) earlier in its sentence or one
        right after it (…のように, …같이)."""
        n = len(text)
        if _NETMASK.search(text, max(0, s - 64), min(n, e + 64)):
            return True
        for q in _QUAD.finditer(text, max(0, s - 26), min(n, e + 26)):
            if q.start() != s and (q.end() >= s - 10 and q.start() <= e + 10):
                return True
        if window_has(_CONFIG_CONTEXT, text, s, 16) or _PROMPT.search(text, max(0, s - 80), s):
            return True
        if _EXAMPLE_AFTER.match(text, e, min(n, e + 12)):
            return True
        cue_end = -1
        for c in _EXAMPLE_BEFORE.finditer(text, max(0, s - 32), s):
            cue_end = c.end()
        return cue_end >= 0 and _SENTENCE_END.search(text, cue_end, s) is None

    def _ipv6(self, text: str, m: re.Match[str]) -> Hit | None:
        s = m.start()
        if s and (text[s - 1].isalnum() or text[s - 1] in "_:."):
            return None
        value = m.group()
        if value.count(":") < 2:
            return None
        try:
            ipaddress.IPv6Address(value)
        except ValueError:
            return None
        if (not self._private and not ip_is_public(value)) or _network_prefix(text, m.end(), 128):
            return None
        if value in self._allow or ipaddress.IPv6Address(value).compressed in self._allow:
            return None
        return Hit(self.type, s, m.end(), True, self.name)


def _network_prefix(text: str, end: int, bits: int) -> bool:
    """True when ``/N`` with ``N < bits`` follows the address: a network (``2001:e20::/64``), not
    a host."""
    m = _PREFIX.match(text, end)
    return m is not None and int(m.group(1)) < bits
