"""Issue 25's validators: SSN/ITIN/IBAN against python-stdnum as an independent oracle, IP ranges
against Python's ``ipaddress``, and the three-way answers of the credential checks."""

from __future__ import annotations

import base64
import ipaddress
import re
from pathlib import Path

import pytest
import stdnum
from hypothesis import example, given, settings
from hypothesis import strategies as st
from stdnum import iban as stdnum_iban
from stdnum.iso7064 import mod_97_10 as stdnum_mod97
from stdnum.us import itin as stdnum_itin
from stdnum.us import ssn as stdnum_ssn

from spcl.detect.validators import (
    IBAN_LENGTHS,
    iban_mod97,
    ip_is_public,
    ipv4_is_placeholder,
    secret_is_placeholder,
    validate_iban,
    validate_ipv4,
    validate_itin,
    validate_jwt,
    validate_key_id,
    validate_private_key_body,
    validate_ssn,
)

FAST = settings(max_examples=200, deadline=None)
nine = st.text(alphabet="0123456789", min_size=9, max_size=9)


@FAST
@given(nine)
@example("078051120")
@example("666123456")
@example("123004567")
@example("123450000")
@example("900701234")
def test_ssn_agrees_with_stdnum(digits: str) -> None:
    assert validate_ssn(digits) is stdnum_ssn.is_valid(digits)


@FAST
@given(nine)
@example("912701234")
@example("912551234")
@example("912931234")
def test_itin_agrees_with_stdnum_plus_the_groups_50_to_65(digits: str) -> None:
    # python-stdnum predates the IRS's 50-65 groups; everything else must agree exactly
    extra = digits[0] == "9" and 50 <= int(digits[3:5]) <= 65
    assert validate_itin(digits) is (stdnum_itin.is_valid(digits) or extra)


def test_ssn_and_itin_never_both() -> None:
    for area in ("123", "912", "666", "000"):
        digits = area + "701234"
        assert not (validate_ssn(digits) and validate_itin(digits))


def test_iban_lengths_are_those_of_the_swift_registry_stdnum_ships() -> None:
    dat = Path(stdnum.__file__).parent / "iban.dat"
    lengths = {}
    for line in dat.read_text(encoding="utf-8").splitlines():
        m = re.match(r'^([A-Z]{2}) .*bban="([^"]*)"', line)
        if m:
            lengths[m.group(1)] = 4 + sum(int(n) for n in re.findall(r"(\d+)!", m.group(2)))
    assert lengths == IBAN_LENGTHS


countries = st.sampled_from(sorted(IBAN_LENGTHS))


@FAST
@given(countries, st.data())
def test_iban_with_stdnum_check_digits_validates(country: str, data: st.DataObject) -> None:
    n = IBAN_LENGTHS[country] - 4
    bban = data.draw(
        st.text(alphabet="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=n, max_size=n)
    )
    number = country + stdnum_iban.calc_check_digits(country + "00" + bban) + bban
    assert validate_iban(number) is True
    assert iban_mod97(number) == 1


@FAST
@given(countries, st.data(), st.integers(0, 40), st.integers(1, 9))
def test_iban_mutations_agree_with_stdnum_mod97(
    country: str, data: st.DataObject, pos: int, delta: int
) -> None:
    n = IBAN_LENGTHS[country] - 4
    bban = data.draw(st.text(alphabet="0123456789", min_size=n, max_size=n))
    number = country + stdnum_iban.calc_check_digits(country + "00" + bban) + bban
    i = 2 + pos % (len(number) - 2)
    mutated = number[:i] + str((int(number[i]) + delta) % 10) + number[i + 1 :]
    # stdnum's full check adds per-country BBAN rules on top of mod 97: it may refuse what we
    # accept, never accept what we refuse; and our answer is exactly its mod-97 answer
    assert validate_iban(mutated) is stdnum_mod97.is_valid(mutated[4:] + mutated[:4])
    if not validate_iban(mutated):
        assert not stdnum_iban.is_valid(mutated)


@pytest.mark.parametrize(
    "number",
    [
        "DE89370400440532013000",
        "GB82WEST12345698765432",
        "FR1420041010050500013M02606",
        "NL91ABNA0417164300",
        "CH9300762011623852957",
        "NO9386011117947",
    ],
)
def test_published_ibans_validate_like_stdnum(number: str) -> None:
    assert validate_iban(number) is True and stdnum_iban.is_valid(number)


@pytest.mark.parametrize(
    "number",
    [
        "DE89370400440532013001",
        "DE8937040044053201300",
        "XX89370400440532013000",
        "de89370400440532013000",
        "DEAB370400440532013000",
        "",
    ],
)
def test_not_ibans(number: str) -> None:
    assert validate_iban(number) is False


octets = st.integers(0, 255)


@FAST
@given(octets, octets, octets, octets)
def test_ipv4_public_agrees_with_ipaddress(a: int, b: int, c: int, d: int) -> None:
    value = f"{a}.{b}.{c}.{d}"
    assert validate_ipv4(value)
    ip = ipaddress.ip_address(value)
    if ip_is_public(value):
        assert ip.is_global and not ip.is_multicast and d not in (0, 255)
    elif ip.is_global and not ip.is_multicast and not ip.is_reserved and d not in (0, 255):
        # 1.2.3.4, 11.22.33.44 … (its own property test: test_detect_ip_context)
        assert ipv4_is_placeholder(value)


@pytest.mark.parametrize(
    "value", ["256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "a.b.c.d", "1..2.3"]
)
def test_not_ipv4(value: str) -> None:
    assert validate_ipv4(value) is False


@pytest.mark.parametrize(
    "value",
    [
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "127.0.0.1",
        "169.254.1.1",
        "100.64.0.1",
        "192.0.2.7",
        "198.51.100.7",
        "203.0.113.7",
        "224.0.0.251",
        "240.0.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "2001:db8::1",
        "fc00::1",
        "ff02::1",
    ],
)
def test_private_documentation_and_special_ranges_are_not_public(value: str) -> None:
    assert ip_is_public(value) is False


@pytest.mark.parametrize(
    "value", ["93.184.216.34", "73.22.14.5", "2a00:1450:4001:80b::200e", "2606:4700::6810:84e5"]
)
def test_public_addresses(value: str) -> None:
    assert ip_is_public(value) is True


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_jwt_decodes_or_is_false() -> None:
    alg, sub, typ = _b64(b'{"alg":"HS256"}'), _b64(b'{"sub":"1"}'), _b64(b'{"typ":"JWT"}')
    assert validate_jwt(f"{alg}.{sub}.{'s' * 20}") is True
    assert validate_jwt(f"{typ}.{sub}.sig") is False  # no alg
    assert validate_jwt("eyJhbGciOi.eyJzdWIi.sig") is False  # not JSON
    assert validate_jwt("a.b") is False


@pytest.mark.parametrize(
    "value",
    [
        "AKIAIOSFODNN7EXAMPLE",
        "AKIAXXXXXXXXXXXXXXXX",
        "AKIA0000000000000000",
        "ghp_" + "x" * 36,
        "xoxb-xxxxxxxxxxxx-xxxxxxxxxxxx-xxxxxxxx",
    ],
)
def test_placeholder_key_ids_are_false(value: str) -> None:
    assert validate_key_id(value) is False


@pytest.mark.parametrize(
    "value", ["AKIAQ3EGRBJ5VZX7ABCD", "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3jK5"]
)
def test_real_looking_key_ids_cannot_be_told(value: str) -> None:
    assert validate_key_id(value) is None


@pytest.mark.parametrize(
    "value",
    [
        "",
        "abc",
        "changeme",
        "<your-password>",
        "${DB_PASSWORD}",
        "{{ secret }}",
        "********",
        "xxxxxxxx",
        "password",
        "YOUR_API_KEY_HERE",
        "example123",
        "%s",
        "...",
    ],
)
def test_placeholders(value: str) -> None:
    assert secret_is_placeholder(value)


@pytest.mark.parametrize(
    "value", ["t7#Qz9!vLm", "jyMV*63", "s3cr3t99!", "Tr0ub4dor&3", "correct-horse-77"]
)
def test_not_placeholders(value: str) -> None:
    assert not secret_is_placeholder(value)


def test_private_key_body() -> None:
    assert validate_private_key_body(
        "\nMIIEowIBAAKCAQEAq7BFUpkGp3+Xk3vR9tYp2Lm8QzW4nJs6abcdefghijklmnop\nQRSTuvwx\n"
    )
    assert not validate_private_key_body("\n...\n")
    assert not validate_private_key_body("\n" + "A" * 80 + "\n")  # one repeated character
    assert not validate_private_key_body("\n<paste your key here>\n")
