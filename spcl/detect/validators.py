"""Pure check-digit and structure validators with Presidio's three-way answer.

Each validator takes the digits only (separators already removed) and answers ``True`` (the check
digit or structure confirms the number), ``False`` (shown not to be valid) or ``None`` (cannot
tell). The algorithms are those in ``FACTS.md``; python-stdnum is the independent oracle in the
property tests. Nothing here logs or raises with a value in the message.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from itertools import pairwise

_NON_DIGIT = re.compile(r"\D+")

_RRN_WEIGHTS = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)
_MYNUMBER_WEIGHTS = (6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2)
_RRN_CENTURY = {"9": 1800, "0": 1800, "1": 1900, "2": 1900, "3": 2000, "4": 2000,
                "5": 1900, "6": 1900, "7": 2000, "8": 2000}  # fmt: skip


def digits_of(value: str) -> str:
    """The decimal digits of ``value`` as ASCII, every other character dropped.

    >>> digits_of("０９０-1234 5678")
    '09012345678'
    """
    digits = _NON_DIGIT.sub("", value)
    if not digits.isascii():
        digits = "".join(str(unicodedata.decimal(ch)) for ch in digits)
    return digits


def is_calendar_date(year: int, month: int, day: int) -> bool:
    """True when ``year-month-day`` exists in the Gregorian calendar (leap years included).

    >>> is_calendar_date(2024, 2, 29), is_calendar_date(2023, 2, 29)
    (True, False)
    """
    if not (1 <= month <= 12) or day < 1 or year < 1:
        return False
    return day <= calendar.monthrange(year, month)[1]


def luhn_ok(digits: str) -> bool:
    """True when ``digits`` pass the Luhn (mod 10) check.

    >>> luhn_ok("4111111111111111"), luhn_ok("4111111111111112")
    (True, False)
    """
    if not digits or not digits.isdigit() or not digits.isascii():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = ord(ch) - 48
        if i % 2:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def luhn_check_digit(payload: str) -> int:
    """The digit that makes ``payload + digit`` pass the Luhn check (for generators of test data).

    >>> luhn_check_digit("411111111111111")
    1
    """
    return next(d for d in range(10) if luhn_ok(f"{payload}{d}"))


def card_brand(digits: str) -> str | None:
    """The card network whose IIN range and length fit ``digits`` (FACTS.md), else ``None``.

    >>> card_brand("4111111111111111"), card_brand("9784061234567")
    ('visa', None)
    """
    n = len(digits)
    if not (13 <= n <= 19) or not digits.isdigit():
        return None
    p2, p3, p4 = int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return "visa" if n in (13, 16, 18, 19) else None
    if (51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16:
        return "mastercard"
    if p2 in (34, 37) and n == 15:
        return "amex"
    if 3528 <= p4 <= 3589 and n >= 16:
        return "jcb"
    if (p4 == 6011 or 644 <= p3 <= 649 or p2 == 65) and n >= 16:
        return "discover"
    if (300 <= p3 <= 305 or p2 in (36, 38, 39)) and n >= 14:
        return "diners"
    if p2 == 62 and n >= 16:
        return "unionpay"
    if 2200 <= p4 <= 2204 and n >= 16:
        return "mir"
    return None


def validate_card(digits: str) -> bool:
    """Payment card number: ``True`` when Luhn passes *and* an IIN range with its length fits.

    A Luhn pass with an unknown IIN is ``False`` too: one random number in ten passes Luhn, so the
    checksum alone does not make a card.

    >>> validate_card("4111111111111111"), validate_card("4111111111111112")
    (True, False)
    """
    return luhn_ok(digits) and card_brand(digits) is not None


def rrn_birth_date_ok(digits: str) -> bool:
    """True when the first seven digits of a Korean RRN give a real birth date (G decides the
    century)."""
    if len(digits) < 7 or not digits[:7].isdigit():
        return False
    century = _RRN_CENTURY.get(digits[6])
    if century is None:
        return False
    return is_calendar_date(century + int(digits[:2]), int(digits[2:4]), int(digits[4:6]))


def rrn_check_digit(digits: str) -> int:
    """The check digit of the first 12 digits of a Korean RRN or foreigner number (by G, FACTS.md).

    >>> rrn_check_digit("900101123456")
    8
    """
    total = sum(w * (ord(c) - 48) for w, c in zip(_RRN_WEIGHTS, digits[:12], strict=True))
    if digits[6] in "5678":
        return (13 - total % 11) % 10
    return (11 - total % 11) % 10


def validate_rrn(digits: str) -> bool | None:
    """Korean resident registration (or foreigner registration) number, 13 digits.

    ``False`` when the length, the G digit or the birth date is impossible; ``True`` when the check
    digit matches; ``None`` when the date is valid but the check digit fails (numbers issued from
    October 2020 carry random digits and no check digit, so a failed check proves nothing).

    >>> validate_rrn("9001011234568"), validate_rrn("9001011234561"), validate_rrn("9002301234560")
    (True, None, False)
    """
    if len(digits) != 13 or not digits.isdigit() or not digits.isascii():
        return False
    if not rrn_birth_date_ok(digits):
        return False
    return True if rrn_check_digit(digits) == ord(digits[12]) - 48 else None


def mynumber_check_digit(digits: str) -> int:
    """The check digit of the first 11 digits of a Japanese My Number (FACTS.md, not Verhoeff).

    >>> mynumber_check_digit("12345678901")
    8
    """
    r = sum(w * (ord(c) - 48) for w, c in zip(_MYNUMBER_WEIGHTS, digits[:11], strict=True)) % 11
    return 0 if r <= 1 else 11 - r


def validate_mynumber(digits: str) -> bool:
    """Japanese individual number (My Number), 12 digits: ``True`` when the check digit matches.

    >>> validate_mynumber("123456789018"), validate_mynumber("123456789012")
    (True, False)
    """
    if len(digits) != 12 or not digits.isdigit() or not digits.isascii():
        return False
    return mynumber_check_digit(digits) == ord(digits[11]) - 48


# ------------------------------------------------------------------------------------ US, IBAN, IP
# published (wallet cards, ads): never personal
_SSN_BLOCKED = frozenset({"078051120", "219099999", "457555462"})
_ITIN_GROUPS = frozenset([*range(50, 66), *range(70, 89), *range(90, 93), *range(94, 100)])


def validate_ssn(digits: str) -> bool:
    """US Social Security number, 9 digits: ``True`` when the area, group and serial can be issued.

    ``False`` for area 000, 666 or 9xx (9xx are ITINs and advertising numbers), group 00, serial
    0000 and the published numbers python-stdnum also refuses (078-05-1120 …). There is no check
    digit.

    >>> validate_ssn("536904399"), validate_ssn("666123456"), validate_ssn("078051120")
    (True, False, False)
    """
    if len(digits) != 9 or not digits.isdigit() or not digits.isascii():
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
        return False
    return digits not in _SSN_BLOCKED


def validate_itin(digits: str) -> bool:
    """US Individual Taxpayer Identification Number ``9XX-GG-NNNN``: ``True`` when G is an issued
    group.

    Groups 50-65, 70-88, 90-92 and 94-99 (the IRS ranges; python-stdnum knows all but 50-65).

    >>> validate_itin("912701234"), validate_itin("912891234")
    (True, False)
    """
    if len(digits) != 9 or not digits.isdigit() or not digits.isascii() or digits[0] != "9":
        return False
    return int(digits[3:5]) in _ITIN_GROUPS


IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip
"""IBAN length per country (the SWIFT IBAN registry, release 101; the same table python-stdnum
ships)."""


def iban_mod97(compact: str) -> int:
    """ISO 7064 MOD 97-10 remainder of an IBAN (country and check digits moved to the end, letters
    A=10 … Z=35).

    >>> iban_mod97("DE89370400440532013000")
    1
    """
    rearranged = compact[4:] + compact[:4]
    total = 0
    for ch in rearranged:
        total = (total * (100 if ch.isalpha() else 10) + int(ch, 36)) % 97
    return total


def validate_iban(compact: str) -> bool:
    """IBAN without separators: ``True`` when the country's length and the mod-97 check both hold.

    >>> validate_iban("DE89370400440532013000"), validate_iban("DE89370400440532013001")
    (True, False)
    """
    if (
        not compact.isascii()
        or not compact.isalnum()
        or compact.upper() != compact
        or len(compact) < 5
    ):
        return False
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    return iban_mod97(compact) == 1


def validate_ipv4(value: str) -> bool:
    """Dotted-quad IPv4 ``a.b.c.d``: ``True`` when each part is 0-255 without a leading zero.

    >>> validate_ipv4("93.184.216.34"), validate_ipv4("256.1.1.1"), validate_ipv4("01.2.3.4")
    (True, False, False)
    """
    parts = value.split(".")
    if len(parts) != 4:
        return False
    for p in parts:
        if (
            not (1 <= len(p) <= 3)
            or not p.isdigit()
            or not p.isascii()
            or (len(p) > 1 and p[0] == "0")
        ):
            return False
        if int(p) > 255:
            return False
    return True


def ipv4_is_placeholder(value: str) -> bool:
    """True when the dotted quad ``value`` reads as a made-up example: its first three parts step
    evenly (``1.2.3.4``, ``5.6.7.8``, ``11.22.33.44``, ``10.20.30.40``, ``4.3.2.1``), all four parts
    are equal (``123.123.123.123``), or its digits count up (``12.34.56.78``, ``123.45.67.89``).

    >>> ipv4_is_placeholder("11.22.33.55"), ipv4_is_placeholder("12.34.56.78")
    (True, True)
    >>> ipv4_is_placeholder("93.184.216.34")
    False
    """
    parts = [int(p) for p in value.split(".")]
    a, b, c, d = parts
    if b - a == c - b != 0 or a == b == c == d:
        return True
    digits = value.replace(".", "")
    return len(digits) >= 6 and all((int(y) - int(x)) % 10 == 1 for x, y in pairwise(digits))


def ip_is_public(value: str) -> bool:
    """True when ``value`` (an IPv4 or IPv6 address) is a public unicast address that can point at a
    person.

    Private, loopback, link-local, shared (CGN), documentation, benchmark, multicast, reserved and
    unspecified ranges are not public; neither is an IPv4 address ending in .0 or .255 (a network or
    broadcast address in examples), a made-up example address (:func:`ipv4_is_placeholder`: 1.2.3.4,
    11.22.33.44 …), nor an IPv6 address outside 2000::/3 (global unicast). Well-known public DNS
    resolvers are public: the detector's allow-list (``detect.ip_allow``) leaves them out.

    >>> ip_is_public("93.184.216.34"), ip_is_public("192.168.0.1"), ip_is_public("2001:db8::1")
    (True, False, False)
    """
    import ipaddress

    try:
        ip = ipaddress.ip_address(value)
    except ValueError:
        return False
    if not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return False
    if ip.version == 4:
        return value.rsplit(".", 1)[-1] not in ("0", "255") and not ipv4_is_placeholder(value)
    return int(ip) >> 125 == 1  # 2000::/3


# ------------------------------------------------------------------------------------ credentials
_PLACEHOLDER_WORDS = re.compile(
    r"example|sample|dummy|placeholder|change[_-]?me|your|redacted|xxxx|\*\*\*|\.\.\.|…|[<>]|\{\{|"
    r"\$\{|%[sd]|^\$|^(?:none|null|nil|true|false|undefined|test|todo|fixme|admin|root|pass|"
    r"password|passwd|secret|token|api[_-]?key|key|value|string|required|optional|empty|default|"
    r"foo|bar|foobar|1234(?:5(?:6(?:78?)?)?)?|abcd(?:ef)?|qwerty)$",
    re.IGNORECASE,
)


def secret_is_placeholder(value: str) -> bool:
    """True when a secret-shaped ``value`` is a documentation placeholder, not a secret.

    Placeholders: empty or short values, words such as
    ``example``/``your…``/``changeme``/``password``, ``<…>``/``${…}``/``{{…}}``/``%s`` templates,
    ``xxxx``/``***``/``...`` fillers, a value of one repeated character, and values with three or
    fewer distinct characters.

    >>> secret_is_placeholder("AKIAIOSFODNN7EXAMPLE"), secret_is_placeholder("<your-password>")
    (True, True)
    >>> secret_is_placeholder("t7#Qz9!vLm")
    False
    """
    v = value.strip()
    if len(v) < 4 or len(set(v)) <= 3:
        return True
    return _PLACEHOLDER_WORDS.search(v) is not None


def validate_key_id(value: str) -> bool | None:
    """A cloud access-key id or service token (AWS ``AKIA…``, GitHub, GitLab, Slack): ``False`` for
    a placeholder (``AKIAIOSFODNN7EXAMPLE``, ``ghp_xxxx…``, ``AKIA1234567890ABCDEF``, a run of one
    character); ``None`` otherwise (the format holds and nothing more can be checked offline).

    >>> validate_key_id("AKIAIOSFODNN7EXAMPLE"), validate_key_id("AKIA2E0A8F3B244C9986")
    (False, None)
    """
    body = value.split("_", 1)[-1] if value.startswith(("gh", "github_pat_")) else value[4:]
    if len(set(body)) <= 4 or re.search(
        r"(?i)example|sample|dummy|x{6}|0{8}|(.)\1{7}|123456|abcdef", value
    ):
        return False
    return None


def validate_jwt(value: str) -> bool:
    """A JSON Web Token ``header.payload.signature``: ``True`` when the header decodes (base64url)
    to a JSON object with an ``alg`` and the payload to a JSON object.

    >>> validate_jwt("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ")
    True
    """
    import base64
    import binascii
    import json

    parts = value.split(".")
    if len(parts) != 3:
        return False
    decoded = []
    for part in parts[:2]:
        try:
            raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
            obj = json.loads(raw)
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return False
        decoded.append(obj)
    return all(isinstance(o, dict) for o in decoded) and "alg" in decoded[0]


def validate_private_key_body(body: str) -> bool:
    """The body of a PEM private-key block: ``True`` when it is base64 (optional ``Key: value``
    header lines) of at least 64 characters, ``False`` for a placeholder (``...``, ``<key>``, too
    short).

    >>> validate_private_key_body("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 3)
    True
    >>> validate_private_key_body("...")
    False
    """
    lines = [ln.strip() for ln in body.splitlines() if ln.strip() and ":" not in ln]
    b64 = "".join(lines)
    if len(b64) < 64 or "..." in b64:
        return False
    return re.fullmatch(r"[A-Za-z0-9+/=]+", b64) is not None and len(set(b64)) > 16
