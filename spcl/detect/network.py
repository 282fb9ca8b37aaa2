"""IP: IPv4 and IPv6 addresses that can point at a person (public unicast addresses).

IPv4 is a dotted quad not glued to letters, digits, dots or hyphens (so version strings ``2.6.32.1-rc1``,
OIDs ``1.3.6.1.4.1`` and section numbers ``1.2.3.4.5`` are not read as addresses), each part 0-255 without
a leading zero. A quad of small numbers (first part below 10, each part at most two digits: ``2.6.38.6``,
``7.21.6.2`` — a version, revision or section number as often as an address) counts only after a network
word (IP, address, host, server, client …). Not reported: a network written with its prefix length
(``203.0.113.0/24``, ``2001:e20:2000:40f::/64``; ``/32`` and ``/128`` are hosts), an address beside a host
name (``gnu.org: 209.51.188.116``, ``146.82.138.7 master.debian.org``: a DNS listing or hosts file of a
server), and a quad right after a version or configuration word (version, release, build, kernel, subnet,
range, netmask …). IPv6 is a run of hex groups and colons that Python's ``ipaddress`` parses. Private,
loopback, link-local, documentation, multicast and reserved ranges are not reported unless
``detect.ip_private`` is true (:func:`validators.ip_is_public`). ``validated`` is ``True``.
"""

from __future__ import annotations

import ipaddress
import re

from spcl.config import DetectSettings
from spcl.detect._common import window_has
from spcl.detect.base import Hit
from spcl.detect.validators import ip_is_public, validate_ipv4

_IPV4 = re.compile(
    r"(?<![A-Za-z0-9_\-])(?<!\d\.)(?<![fF]{4}:)(?:\d{1,3}\.){3}\d{1,3}(?![A-Za-z0-9_\-])(?!\.[A-Za-z0-9])"
)
_IPV6 = re.compile(
    r"(?<![A-Za-z0-9_:.])(?=[0-9A-Fa-f]{0,4}::?[0-9A-Fa-f])[0-9A-Fa-f:]{3,39}(?:\.\d{1,3}){0,3}(?![A-Za-z0-9_:])"
)
_VERSION_CONTEXT = re.compile(
    r"version|ver\.|release|build|kernel|linux|firmware|revision|rev\.|patch|update|confirmed on|subnet|range|"
    r"netmask|routers|chrome|firefox|safari|android|windows|macos|ios|python|java|node|openssl|nginx|apache|"
    r"gcc|glibc|php|perl|ruby|"
    r"버전|빌드|リビジョン|バージョン|ビルド|版",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"/(\d{1,3})(?!\d)")
# a host name right before or after the address: a DNS listing or hosts-file line of a server, not a person
_HOST_BEFORE = re.compile(r"[A-Za-z0-9\-]\.(?:org|com|net|edu|gov|io|jp|kr|de|uk)[:\s]{1,3}$", re.IGNORECASE)
_HOST_AFTER = re.compile(
    r"[\s:]{1,3}[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,4}\.(?:org|com|net|edu|gov|io|jp|kr|de|uk)(?![A-Za-z])",
    re.IGNORECASE,
)
_NET_CONTEXT = re.compile(
    r"(?<![A-Za-z])ip(?![A-Za-z])|addr|host|server|client|ping|connect|from|dns|서버|주소|접속|アドレス|サーバ|ホスト",
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

    def find(self, text: str) -> list[Hit]:
        """IP hits in ``text``."""
        hits: list[Hit] = []
        if "." in text:
            for m in _IPV4.finditer(text):
                value = m.group()
                if not validate_ipv4(value):
                    continue
                if not self._private and not ip_is_public(value):
                    continue
                s = m.start()
                if window_has(_VERSION_CONTEXT, text, s, 12):
                    continue
                parts = value.split(".")
                small = int(parts[0]) < 10 and all(len(p) <= 2 for p in parts)  # 2.6.38.6, C11 7.21.6.2
                if small and not window_has(_NET_CONTEXT, text, s, self._window):
                    continue
                if _HOST_BEFORE.search(text, max(0, s - 12), s) or _HOST_AFTER.match(text, m.end()):
                    continue
                if _network_prefix(text, m.end(), 32):
                    continue
                hits.append(Hit(self.type, s, m.end(), True, self.name))
        if ":" in text:
            for m in _IPV6.finditer(text):
                value = m.group()
                if value.count(":") < 2:
                    continue
                try:
                    ipaddress.IPv6Address(value)
                except ValueError:
                    continue
                if not self._private and not ip_is_public(value):
                    continue
                if _network_prefix(text, m.end(), 128):
                    continue
                hits.append(Hit(self.type, m.start(), m.end(), True, self.name))
        return hits


def _network_prefix(text: str, end: int, bits: int) -> bool:
    """True when ``/N`` with ``N < bits`` follows the address: a network (``2001:e20::/64``), not a host."""
    m = _PREFIX.match(text, end)
    return m is not None and int(m.group(1)) < bits
