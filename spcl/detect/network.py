"""IP: IPv4 and IPv6 addresses that can point at a person (public unicast addresses).

IPv4 is a dotted quad not glued to letters, digits, dots or hyphens (so version strings ``2.6.32.1-rc1``,
OIDs ``1.3.6.1.4.1`` and section numbers ``1.2.3.4.5`` are not read as addresses), each part 0-255 without
a leading zero. A quad of single digits (``1.2.3.4``: a revision or section number as often as an address)
counts only after a network word (IP, address, host, server, client …). IPv6 is a run of hex groups and
colons that Python's ``ipaddress`` parses. Private, loopback, link-local, documentation, multicast and
reserved ranges are not reported unless ``detect.ip_private`` is true (:func:`validators.ip_is_public`);
version words (version, release, build, kernel …) right before a quad veto it. ``validated`` is ``True``.
"""

from __future__ import annotations

import ipaddress
import re

from spcl.config import DetectSettings
from spcl.detect._common import window_has
from spcl.detect.base import Hit
from spcl.detect.validators import ip_is_public, validate_ipv4

_IPV4 = re.compile(r"(?<![A-Za-z0-9_.\-])(?:\d{1,3}\.){3}\d{1,3}(?![A-Za-z0-9_\-])(?!\.[A-Za-z0-9])")
_IPV6 = re.compile(
    r"(?<![A-Za-z0-9_:.])(?=[0-9A-Fa-f]{0,4}::?[0-9A-Fa-f])[0-9A-Fa-f:]{3,39}(?:\.\d{1,3}){0,3}(?![A-Za-z0-9_:])"
)
_VERSION_CONTEXT = re.compile(
    r"version|ver\.|release|build|kernel|linux|firmware|revision|rev\.|patch|update|"
    r"버전|빌드|リビジョン|バージョン|ビルド|版",
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
                if len(value) == 7 and not window_has(_NET_CONTEXT, text, s, self._window):
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
                hits.append(Hit(self.type, m.start(), m.end(), True, self.name))
        return hits
