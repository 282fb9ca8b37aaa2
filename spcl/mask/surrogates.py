"""Surrogates: a realistic, locale-aware fake of the same type and format for one found value.

``surrogate(type_, surface, key)`` is a pure function of the run key, the type, the surface and a
``salt`` (the masker raises the salt when a fake would collide with the source): the same person
gets the same fake across a corpus masked with the same key, and the vault maps the fake back to the
original.

What each type gets:

- ``PERSON``: a name of the same script and shape: a Korean name (surname + given syllables) for
  Hangul, a Japanese name (kanji surname and given name, kana kept kana) for Japanese, capitalized
  English names for Latin letters; words and the spaces between them are kept.
- ``RRN``: 13 digits → a Korean resident registration number with a real birth date, the same
  century/sex digit class and a valid check digit; 12 digits → a Japanese My Number with a valid
  check digit; 9 digits → a US SSN outside the never-issued ranges. Separators stay where they were.
- ``CARD``: the same length and issuer prefix (first four digits), fresh digits, a valid Luhn check
  digit.
- ``PHONE``: the country code and the first group (area or mobile prefix) kept, the other digits
  fresh, the separators kept: a phone of the same national format.
- ``EMAIL``: a local part of the same shape at a reserved example domain of the same country
  (``example.jp``, ``example.kr``, ``example.com``).
- ``DOB``: another real calendar date (born 1940–2005) written the same way (order, separators, zero
  padding, English month names, 年月日).
- ``ADDRESS``: the same shape with the address words kept: Korean and Japanese administrative
  suffixes (시/도/구/동/로/길, 都/道/府/県/市/区/町/村/丁目…) and English street words (Street, Ave,
  Apt…) stay, names and numbers around them are replaced (a Korean place name by Hangul syllables, a
  Japanese one by kanji).
- every other type (``ACCOUNT``, ``ID``…): the same shape — each digit a digit, each Latin letter a
  letter of the same case, each Hangul syllable a Hangul syllable, each kana a kana of the same
  kind, each kanji a kanji; punctuation and spaces kept.

Digits keep their width (ASCII or full-width). Surrogates are for people reading or training on the
text, not for hiding the format: the format (lengths, separators, issuer prefix, area code) is kept
on purpose.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re

from spcl.detect.validators import (
    is_calendar_date,
    luhn_check_digit,
    mynumber_check_digit,
    rrn_check_digit,
)
from spcl.mask.surrogate_addresses import fake_address
from spcl.mask.surrogate_shapes import (
    KO_GIVEN_SYLLABLES,
    WORD,
    case_like,
    digit_like,
    digit_value,
    digits_of,
    fresh_digits,
    is_digit,
    is_hangul,
    is_kanji,
    shape_fake,
)

KO_SURNAMES = "김이박최정강조윤장임한오서신권황안송류홍"
JA_SURNAMES = ("佐藤", "鈴木", "高橋", "田中", "伊藤", "渡辺", "山本", "中村", "小林", "加藤",
               "吉田", "山田", "松本", "井上", "木村", "清水", "山崎", "池田", "橋本", "石川",
               "前田", "藤田", "小川", "岡田", "林", "森", "原", "堀",
               "佐々木", "長谷川")  # fmt: skip
JA_GIVEN = ("太郎", "健一", "翔太", "大輔", "直樹", "拓也", "誠", "浩二", "陽子", "美咲", "由美",
            "恵子", "彩", "花子", "裕子", "愛", "明美", "和也", "隆", "真由美")  # fmt: skip
EN_FIRST = (
    "James",
    "Mary",
    "John",
    "Linda",
    "Robert",
    "Susan",
    "Michael",
    "Karen",
    "David",
    "Emily",
    "Daniel",
    "Sarah",
    "Thomas",
    "Laura",
    "Kevin",
    "Anna",
    "Alex",
    "Jordan",
    "Taylor",
    "Morgan",
)
EN_LAST = (
    "Smith",
    "Johnson",
    "Brown",
    "Miller",
    "Davis",
    "Wilson",
    "Moore",
    "Clark",
    "Lewis",
    "Walker",
    "Hall",
    "Young",
    "Allen",
    "King",
    "Wright",
    "Scott",
    "Green",
    "Baker",
    "Adams",
    "Nelson",
)
_RRN_G = {"1": "12", "2": "12", "3": "34", "4": "34", "5": "56", "6": "56", "7": "78", "8": "78",
          "9": "12", "0": "34"}  # fmt: skip


def rng_for(key: bytes, type_: str, surface: str, salt: int = 0) -> random.Random:
    """A generator seeded by HMAC-SHA256 of ``(type, salt, surface)`` under ``key``: explicit,
    keyed, stable."""
    msg = f"surrogate\x1f{type_}\x1f{salt}\x1f{surface}".encode()
    return random.Random(int.from_bytes(hmac.new(key, msg, hashlib.sha256).digest(), "big"))


def _fill_digits(surface: str, digits: str) -> str:
    """``surface`` with its digits replaced, in order, by ``digits`` (same count), keeping
    separators/width."""
    it = iter(digits)
    return "".join(digit_like(ch, int(next(it))) if is_digit(ch) else ch for ch in surface)


def fake_rrn(digits: str, rng: random.Random) -> str:
    """13 digits: a Korean RRN with a real birth date, the same G-digit class and a valid check
    digit."""
    g = rng.choice(_RRN_G.get(digits[6:7], "12"))
    century = 1900 if g in "1256" else 2000
    while True:
        yy, mm, dd = rng.randrange(100), rng.randrange(1, 13), rng.randrange(1, 29)
        if century == 2000 and yy > 20:
            yy %= 21
        if is_calendar_date(century + yy, mm, dd):
            break
    body = f"{yy:02d}{mm:02d}{dd:02d}{g}{fresh_digits(rng, 5)}"
    return body + str(rrn_check_digit(body))


def fake_mynumber(rng: random.Random) -> str:
    """12 digits with a valid My Number check digit (never starting with 0)."""
    body = str(rng.randrange(1, 10)) + fresh_digits(rng, 10)
    return body + str(mynumber_check_digit(body))


def fake_ssn(rng: random.Random) -> str:
    """9 digits: area 001-665/667-899, group 01-99, serial 0001-9999 (the ranges ever issued)."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}{rng.randrange(1, 100):02d}{rng.randrange(1, 10000):04d}"


def fake_card(digits: str, rng: random.Random) -> str:
    """The same length and first four digits, fresh middle digits, a valid Luhn check digit."""
    n = len(digits)
    payload = digits[:4] + fresh_digits(rng, n - 5)
    return payload + str(luhn_check_digit(payload))


def _fresh_group(text: str, rng: random.Random) -> str:
    """New digits for one digit group: a leading 0 or 1 stays (trunk and service prefixes), a
    leading 2-9 stays 2-9 (a North American exchange never starts with 0 or 1), the other digits are
    free."""
    out = []
    for i, ch in enumerate(text):
        if i == 0 and digit_value(ch) <= 1:
            out.append(ch)
        elif i == 0:
            out.append(digit_like(ch, rng.randrange(2, 10)))
        else:
            out.append(digit_like(ch, rng.randrange(10)))
    return "".join(out)


def _phone_prefix_len(digits: str) -> int:
    """How many leading digits of a number written without separators are its prefix (kept)."""
    if re.match(r"0(?:1\d|[5-9]0)", digits):
        return 3  # 010, 011…, 050, 070, 080, 090
    if digits.startswith("0"):
        return 2  # an area code's first digits
    return 3  # a North American area code


def _fake_phone(surface: str, rng: random.Random) -> str:
    # keep '+CC' and the first digit group (area / mobile prefix), refresh the rest group by group
    groups = list(re.finditer(r"[0-9０-９]+", surface))
    if not groups:
        return shape_fake(surface, rng)
    if len(groups) == 1:  # 01012345678: keep the prefix
        g = groups[0]
        keep = _phone_prefix_len(digits_of(g.group(0)))
        text = g.group(0)
        return (
            surface[: g.start()] + text[:keep] + _fresh_group(text[keep:], rng) + surface[g.end() :]
        )
    keep = 2 if surface.lstrip().startswith("+") and len(groups) >= 3 else 1
    out, pos = [surface[: groups[keep - 1].end()]], groups[keep - 1].end()
    for g in groups[keep:]:
        out += [surface[pos : g.start()], _fresh_group(g.group(0), rng)]
        pos = g.end()
    out.append(surface[pos:])
    return "".join(out)


def _fake_email(surface: str, rng: random.Random) -> str:
    local, _, domain = surface.rpartition("@")
    if not local:
        return shape_fake(surface, rng)
    tld = domain.rsplit(".", 1)[-1].lower()
    fake_domain = {"jp": "example.jp", "kr": "example.kr"}.get(tld, "example.com")
    return shape_fake(local, rng) + "@" + fake_domain


def _fake_person(surface: str, rng: random.Random) -> str:
    words = list(WORD.finditer(surface))
    pieces: list[str] = []
    pos = 0
    for i, m in enumerate(words):
        w = m.group(0)
        pieces.append(surface[pos : m.start()])
        pos = m.end()
        if all(is_hangul(c) for c in w):
            if len(words) == 1 and len(w) >= 2:  # 김민수: surname + given syllables
                fake = rng.choice(KO_SURNAMES) + "".join(
                    rng.choice(KO_GIVEN_SYLLABLES) for _ in w[1:]
                )
            elif i == 0 and len(w) == 1:
                fake = rng.choice(KO_SURNAMES)
            else:
                fake = "".join(rng.choice(KO_GIVEN_SYLLABLES) for _ in w)
        elif all(is_kanji(c) for c in w):
            pool = JA_SURNAMES if i == 0 else JA_GIVEN
            same = [p for p in pool if len(p) == len(w)]
            fake = rng.choice(same or list(pool))
        elif w.isalpha() and w.isascii():
            pool = EN_LAST if i == len(words) - 1 and len(words) > 1 else EN_FIRST
            fake = case_like(rng.choice(pool), w)
        else:
            fake = shape_fake(w, rng)
        pieces.append(fake)
    pieces.append(surface[pos:])
    return "".join(pieces)


def _fake_rrn_surface(surface: str, rng: random.Random) -> str:
    digits = digits_of(surface)
    if len(digits) == 13:
        return _fill_digits(surface, fake_rrn(digits, rng))
    if len(digits) == 12:
        return _fill_digits(surface, fake_mynumber(rng))
    if len(digits) == 9:
        return _fill_digits(surface, fake_ssn(rng))
    return shape_fake(surface, rng)


def _fake_card_surface(surface: str, rng: random.Random) -> str:
    digits = digits_of(surface)
    if 13 <= len(digits) <= 19:
        return _fill_digits(surface, fake_card(digits, rng))
    return shape_fake(surface, rng)


_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def _fake_dob(surface: str, rng: random.Random) -> str:
    groups = list(re.finditer(r"[0-9０-９]+", surface))
    month_name = next(
        (
            mn
            for mn in _MONTHS
            if mn.lower() in surface.lower() or mn[:3].lower() in surface.lower()
        ),
        None,
    )
    while True:
        y, mo, d = rng.randrange(1940, 2006), rng.randrange(1, 13), rng.randrange(1, 29)
        if is_calendar_date(y, mo, d):
            break
    values: list[int]
    if month_name and len(groups) == 2:  # "March 3, 1985" / "3 March 1985"
        values = [d, y] if len(groups[0].group(0)) <= 2 else [y, d]
    elif len(groups) == 3:
        lens = [len(g.group(0)) for g in groups]
        first = int(digits_of(groups[0].group(0)))
        if lens[0] >= 4 or first > 31:
            values = [y, mo, d]
        elif lens[2] >= 4 or first <= 12:
            values = [mo, d, y] if first <= 12 and "/" in surface else [d, mo, y]
        else:
            values = [d, mo, y]
    else:
        return shape_fake(surface, rng)
    out, pos = [], 0
    for g, v in zip(groups, values, strict=True):
        text = g.group(0)
        width = len(text)
        digits = f"{v:0{width}d}"[-width:] if width >= 2 else str(v)
        if width == 2 and v >= 100:
            digits = f"{v % 100:02d}"
        out.append(surface[pos : g.start()])
        out.append("".join(digit_like(text[0], int(c)) for c in digits))
        pos = g.end()
    out.append(surface[pos:])
    fake = "".join(out)
    if month_name:
        name = _MONTHS[mo - 1]
        for candidate in (month_name, month_name[:3]):
            for variant in (candidate, candidate.upper(), candidate.lower()):
                if variant in fake:
                    repl = name if len(candidate) > 3 else name[:3]
                    return fake.replace(variant, case_like(repl, variant), 1)
    return fake


_BY_TYPE = {
    "PERSON": _fake_person,
    "RRN": _fake_rrn_surface,
    "CARD": _fake_card_surface,
    "PHONE": _fake_phone,
    "EMAIL": _fake_email,
    "ADDRESS": fake_address,
    "DOB": _fake_dob,
}


def surrogate(type_: str, surface: str, key: bytes, salt: int = 0) -> str:
    """The fake for ``surface`` of ``type_`` under ``key`` (see the module docstring); never equal
    to ``surface`` unless the surface holds nothing to replace (no letter, digit or CJK character).

    >>> s = surrogate("CARD", "4111-1111-1111-1111", b"k" * 32)
    >>> s[:5], len(s), s.count("-")
    ('4111-', 19, 3)
    """
    make = _BY_TYPE.get(type_, shape_fake)
    for attempt in range(16):
        fake = make(surface, rng_for(key, type_, surface, salt * 16 + attempt))
        if fake != surface:
            return fake
    return fake
