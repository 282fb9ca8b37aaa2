"""Issue 25's detectors on written forms: what each finds (span and type) and the hard negatives
it leaves."""

from __future__ import annotations

import pytest

from spcl.config import DetectSettings
from spcl.detect import find_pii

PEM = (
    "-----BEGIN OPENSSH PRIVATE"
    " KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBv3Yq9Lk2pX8rT0cW1nZ4mF6jH7sD5aE3bG9uK2yL0vQ\n"
    "-----END"
    " OPENSSH PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
# (text, type, the value the hit must cover exactly)
POSITIVES = [
    ("SSN 536-90-4399", "SSN", "536-90-4399"),
    ("Social Security No. 536 90 4399.", "SSN", "536 90 4399"),
    ("my social security number is 536904399", "SSN", "536904399"),
    ("사회보장번호 536-90-4399입니다", "SSN", "536-90-4399"),
    ("社会保障番号：536-90-4399 2: next", "SSN", "536-90-4399"),
    ("ITIN 912-70-1234", "ITIN", "912-70-1234"),
    ("Individual Taxpayer Identification Number 912701234", "ITIN", "912701234"),
    ("IBAN DE89 3704 0044 0532 0130 00 bitte", "IBAN", "DE89 3704 0044 0532 0130 00"),
    ("振込先 GB82WEST12345698765432 まで", "IBAN", "GB82WEST12345698765432"),
    ("IBAN: FR14 2004 1010 0505 0001 3M02 606.", "IBAN", "FR14 2004 1010 0505 0001 3M02 606"),
    ("iban: de89 3704 0044 0532 0130 00", "IBAN", "de89 3704 0044 0532 0130 00"),
    ("Failed login from 93.184.216.34:443 at noon", "IP", "93.184.216.34"),
    ("...119.109.186.93 からのアクセス", "IP", "119.109.186.93"),
    ("접속 IP: 2a00:1450:4001:80b::200e", "IP", "2a00:1450:4001:80b::200e"),
    ("aws_access_key_id = AKIAQ3EGRBJ5VZX7ABCD", "CREDENTIAL", "AKIAQ3EGRBJ5VZX7ABCD"),
    (
        "GITHUB_TOKEN=ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3jK5",
        "CREDENTIAL",
        "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3jK5",
    ),
    ("PRIVATE-TOKEN: glpat-Xy7Kq2LmN9pR4sT6vW8z", "CREDENTIAL", "glpat-Xy7Kq2LmN9pR4sT6vW8z"),
    (
        "SLACK_BOT_TOKEN=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "CREDENTIAL",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (f"Authorization: Bearer {JWT}", "CREDENTIAL", JWT),
    (f"key:\n{PEM}\n", "CREDENTIAL", PEM),
    ('password = "t7#Qz9!vLm"', "CREDENTIAL", "t7#Qz9!vLm"),
    ("export PGPASSWORD=jyMV*63 next", "CREDENTIAL", "jyMV*63"),
    ('{"user": "admin", "password": "Tr0ub4dor&3"}', "CREDENTIAL", "Tr0ub4dor&3"),
    ("  password: s3cr3t99!", "CREDENTIAL", "s3cr3t99!"),
    ("여권번호: M123A4567", "PASSPORT", "M123A4567"),
    ("旅券番号：TK1234567", "PASSPORT", "TK1234567"),
    ("My passport 512345678 expires in 2027.", "PASSPORT", "512345678"),
    ("운전면허번호 서울 12-345678-90", "DRIVER_LICENSE", "서울 12-345678-90"),
    ("免許証番号 第301234567890号", "DRIVER_LICENSE", "301234567890"),
    (
        "I live at 1420 Pine Street, Seattle, WA 98101.",
        "ADDRESS",
        "1420 Pine Street, Seattle, WA 98101",
    ),
    (
        "Ship to 77 N Lake Ave, Apt 4B, Salt Lake City, Utah 84111-2345 please",
        "ADDRESS",
        "77 N Lake Ave, Apt 4B, Salt Lake City, Utah 84111-2345",
    ),
    ("My address is 12 Elm Drive.", "ADDRESS", "12 Elm Drive."),
    (
        "I live at 1420 Pine Street, Seattle WA 98101.",
        "ADDRESS",
        "1420 Pine Street, Seattle WA 98101",
    ),
    ("10 Downing Street, London SW1A 2AA", "ADDRESS", "10 Downing Street, London SW1A 2AA"),
]
NEGATIVES = [
    "SSN 000-12-3456, 666-12-3456, 123-00-4567, 123-45-0000, 078-05-1120",
    (
        "Order no. 123-45-6789 has shipped; invoice 234-56-7890; Order 345-67-8901; ticket"
        " #456-78-9012"
    ),
    "Chrome/121.4.6099.109 and Firefox 115.3.2.1",
    "aws_access_key_id = AKIA1234567890ABCDEF; ghp_1234567890abcdefghijklmnopqrstuvwxyz",
    "the ticket 536904399 was closed",  # nine plain digits without an SSN word
    "IBAN DE89 3704 0044 0532 0130 01",  # one digit off
    "Connect to 192.168.1.10, 10.0.0.1, 127.0.0.1, 203.0.113.7, 8.8.8.8 or fe80::1",
    (
        "Upgrade to version 2.6.32.1 today; see section 4.3.2.1; OID 1.3.6.1.4.1.311; build"
        " 10.0.19045.3803"
    ),
    "Last confirmed on 2.6.38.6; C11 7.21.6.2/10",
    "gnu.org: 209.51.188.116 and 146.82.138.7 master.debian.org",
    "subnet 204.254.239.0/24 and 2001:e20:2000:40f::/64",
    (
        "commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c, sha256 "
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    ),
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE; token ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    (
        'password = "changeme"; password: "<your-password>"; DB_PASSWORD=${DB_PASSWORD}; api_key:'
        " YOUR_API_KEY"
    ),
    (
        "password = get_password(); secret = os.environ['SECRET']; token = self.token;"
        " password=password"
    ),
    "group_name:password:GID:user_list; ray rushmore = NOPASSWD: /bin/kill",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "Model M12345678 is out of stock; part TK1234567",
    "tracking 123456789012 and 11-12-123456-12 in the log",
    "Springfield, IL 62704; we walked down Pine Street; 3 Main Street",
    (
        "write to the Free Software Foundation, 51 Franklin Street, Fifth Floor, Boston, MA"
        " 02110-1301, USA"
    ),
    "00:1a:2b:3c:4d:5e at 12:34:56, std::vector<int> a::b::c",
]


@pytest.mark.parametrize(("text", "pii_type", "value"), POSITIVES)
def test_new_types_are_found_whole(text: str, pii_type: str, value: str) -> None:
    got = [(h.type, text[h.start : h.end]) for h in find_pii(text)]
    assert (pii_type, value) in got, got


@pytest.mark.parametrize("text", NEGATIVES)
def test_hard_negatives_of_the_new_shapes_are_not_hits(text: str) -> None:
    got = [(h.type, h.detector) for h in find_pii(text)]
    assert got == []


def test_private_addresses_are_reported_when_configured() -> None:
    text = "server 192.168.1.10"
    assert find_pii(text) == []
    assert [h.type for h in find_pii(text, DetectSettings(ip_private=True))] == ["IP"]


def test_placeholders_are_kept_only_as_invalid() -> None:
    hits = find_pii("AKIAIOSFODNN7EXAMPLE", DetectSettings(keep_invalid=True))
    assert [(h.type, h.validated) for h in hits] == [("CREDENTIAL", False)]


def test_email_allow_list() -> None:
    text = (
        "mail noreply@github.com, bug-make@gnu.org, kim@example.com or kim@mail.example.org or"
        " lee@naver.com"
    )
    # an empty allow-list: every address
    assert len(find_pii(text, DetectSettings(email_allow_domains=()))) == 5
    docs = DetectSettings(email_allow_domains=("docs",))
    assert docs == DetectSettings()  # the default: documentation domains only
    assert [text[h.start : h.end] for h in find_pii(text)] == [
        "noreply@github.com",
        "bug-make@gnu.org",
        "lee@naver.com",
    ]
    roles = DetectSettings(email_allow_domains=("docs",), email_allow_locals=("noreply", "bug-*"))
    assert [text[h.start : h.end] for h in find_pii(text, roles)] == ["lee@naver.com"]


def test_every_registered_type_is_wired_everywhere() -> None:
    """One row in spcl.rule_types drives the detectors, the policy, the mask stage's types and
    the config."""
    from spcl.config import PolicySettings, load_settings
    from spcl.detect import DETECTORS, TYPE_PRIORITY
    from spcl.entity_types import DEFAULT_TYPES, RULE_HIT_TYPES
    from spcl.generalize.ladders import LABEL_TYPES, ladder
    from spcl.rule_types import RULE_TYPES

    conf = load_settings()
    assert len({t.rank for t in RULE_TYPES}) == len(RULE_TYPES)
    for t in RULE_TYPES:
        assert DETECTORS[t.name].type == t.name and t.name in TYPE_PRIORITY
        assert PolicySettings().action(t.name) == "flag" and conf.policy.action(t.name) == "flag"
        assert t.name in conf.detect.types
        assert RULE_HIT_TYPES[t.name] == t.entity and t.entity in DEFAULT_TYPES
    # identifiers get labels, no ladder
    for entity in ("ID", "IP", "CREDENTIAL", "SSN", "IBAN", "PASSPORT"):
        assert entity in LABEL_TYPES and ladder(entity, "536-90-4399") is None
