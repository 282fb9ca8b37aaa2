"""Issue 25's identifiers for the detector evaluation set (``data/detect-eval/ids.jsonl``).

US SSN and ITIN, IBAN, public IP addresses, credentials (AWS key ids, GitHub/GitLab/Slack tokens,
JWTs, PEM private keys, password assignments), KR/JP/US passports, KR/JP driver's licences and
English street addresses, each placed in a short statement between two real carrier sentences (the
carriers of :mod:`tools.datasets.detect_set`); plus hard negatives of the same shapes: invalid SSNs,
bad-checksum IBANs, private and documentation IPs, version quads, git hashes and checksums,
placeholder keys and passwords, order numbers, ISBNs, passport-shaped codes without a passport word,
city/state/ZIP without a street, MAC addresses, clock times, C++ scopes. Every value is synthetic; a
pure function of the carriers and ``seed``.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

from spcl.detect.validators import (
    IBAN_LENGTHS,
    iban_mod97,
    ip_is_public,
    validate_itin,
    validate_ssn,
)

Value = tuple[str, str, str, str]  # (head extra, value, tail extra, form)
_B62 = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits


def _d(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def ssn_digits(rng: random.Random) -> str:
    """Nine digits of an issuable SSN."""
    while True:
        d = f"{rng.randint(1, 899):03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
        if validate_ssn(d):
            return d


def itin_digits(rng: random.Random) -> str:
    """Nine digits of an ITIN in an issued group."""
    while True:
        d = f"9{_d(rng, 2)}{rng.randint(50, 99):02d}{_d(rng, 4)}"
        if validate_itin(d):
            return d


def _nine(d: str, rng: random.Random) -> tuple[str, str]:
    form = rng.choices(["dashed", "spaced", "plain"], [6, 2, 2])[0]
    return {
        "dashed": f"{d[:3]}-{d[3:5]}-{d[5:]}",
        "spaced": f"{d[:3]} {d[3:5]} {d[5:]}",
        "plain": d,
    }[form], form


_IBAN_COUNTRIES = ["DE", "GB", "FR", "ES", "IT", "NL", "BE", "CH", "AT", "PL", "SE", "NO", "DK",
                   "IE", "PT", "FI", "SA", "AE", "TR", "GR", "CZ", "HU", "RO", "LU"]  # fmt: skip


def iban(rng: random.Random, country: str | None = None) -> str:
    """A compact IBAN with valid check digits and its country's BBAN layout (four-letter bank codes
    for GB, NL, IE and RO, a check letter first for IT, digits elsewhere)."""
    cc = country or rng.choice(_IBAN_COUNTRIES)
    n = IBAN_LENGTHS[cc] - 4
    letters = {"GB": 4, "NL": 4, "IE": 4, "RO": 4, "IT": 1}.get(cc, 0)
    bban = _s(rng, string.ascii_uppercase, letters) + _d(rng, n - letters)
    check = 98 - iban_mod97(f"{cc}00{bban}")
    return f"{cc}{check:02d}{bban}"


def _group4(value: str) -> str:
    return " ".join(value[i : i + 4] for i in range(0, len(value), 4))


def public_ipv4(rng: random.Random) -> str:
    """A random public unicast IPv4 address."""
    while True:
        v = ".".join(str(rng.randint(1, 254)) for _ in range(4))
        if ip_is_public(v):
            return v


def public_ipv6(rng: random.Random) -> str:
    """A random global unicast IPv6 address, full or compressed."""
    groups = [f"{rng.choice([0x2001, 0x2400, 0x2600, 0x2A00, 0x2A02, 0x2C0F]):x}"]
    groups += [f"{rng.randint(1, 0xFFFF):x}" for _ in range(7)]
    if rng.random() < 0.5:
        return ":".join(groups[:3]) + "::" + groups[7]
    return ":".join(groups)


def _b64url(obj: dict[str, object]) -> str:
    return (
        base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode())
        .decode()
        .rstrip("=")
    )


def credential(rng: random.Random) -> Value:
    """(head, secret, tail, form): a credential in the code, config or log line people write it
    in."""
    form = rng.choice(
        [
            "aws",
            "github",
            "github-fine",
            "gitlab",
            "slack",
            "jwt",
            "pem",
            "password-quoted",
            "password-env",
            "password-json",
            "password-yaml",
            "secret-key",
        ]
    )
    if form == "aws":
        v = rng.choice(["AKIA", "ASIA"]) + _s(rng, _UPPER_DIGITS, 16)
        return (
            rng.choice(
                ["aws_access_key_id = ", "AWS_ACCESS_KEY_ID=", "access key ", "--access-key "]
            ),
            v,
            "",
            form,
        )
    if form == "github":
        return (
            rng.choice(["token: ", "GITHUB_TOKEN=", "git clone https://"]),
            rng.choice(["ghp_", "gho_", "ghs_"]) + _s(rng, _B62, 36),
            "",
            form,
        )
    if form == "github-fine":
        return "GH_TOKEN=", "github_pat_" + _s(rng, _B62, 22) + "_" + _s(rng, _B62, 59), "", form
    if form == "gitlab":
        return (
            rng.choice(["PRIVATE-TOKEN: ", "gitlab token "]),
            "glpat-" + _s(rng, _B62 + "-_", 20),
            "",
            form,
        )
    if form == "slack":
        v = f"xox{rng.choice('bpa')}-{_d(rng, 12)}-{_d(rng, 13)}-{_s(rng, _B62, 24)}"
        return rng.choice(["SLACK_BOT_TOKEN=", "slack token: "]), v, "", form
    if form == "jwt":
        header = _b64url({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
        payload = _b64url({"sub": _d(rng, 8), "iat": rng.randint(1500000000, 1800000000)})
        return "Authorization: Bearer ", f"{header}.{payload}.{_s(rng, _B62 + '-_', 43)}", "", form
    if form == "pem":
        kind = rng.choice(
            ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]
        )
        body = "\n".join(_s(rng, _B62 + "+/", 64) for _ in range(rng.randint(3, 8)))
        return "key:\n", f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----", "\n", form
    secret = _s(rng, _B62, rng.randint(4, 8)) + rng.choice("!#%*-_@") + _d(rng, rng.randint(1, 4))
    if form == "password-quoted":
        head = rng.choice(['password = "', "passwd='", 'db_password := "'])
        return head, secret, head[-1], form
    if form == "password-env":
        return (
            rng.choice(["DB_PASSWORD=", "MYSQL_ROOT_PASSWORD=", "export PGPASSWORD="]),
            secret,
            "",
            form,
        )
    if form == "password-json":
        return '{"user": "admin", "password": "', secret, '"}', form
    if form == "password-yaml":
        return "  password: ", secret, "", form
    return (
        rng.choice(["SECRET_KEY = '", "client_secret: '", "api_key='"]),
        _s(rng, _B62, 32),
        "'",
        form,
    )


def passport(rng: random.Random, lang: str) -> tuple[str, str]:
    """(number, form) of a KR, JP or US passport (by the carrier language; English carriers take
    any)."""
    country = {"ko": "kr", "ja": "jp"}.get(lang) or rng.choice(["kr", "jp", "us"])
    if country == "kr":
        if rng.random() < 0.5:
            return rng.choice("MSRO") + _d(rng, 8), "kr-old"
        return (
            f"{rng.choice('MSRO')}{_d(rng, 3)}{rng.choice(string.ascii_uppercase)}{_d(rng, 4)}",
            "kr-2021",
        )
    if country == "jp":
        return rng.choice(["TK", "TR", "MU", "TZ", "AZ"]) + _d(rng, 7), "jp"
    return (
        (str(rng.randint(1, 9)) + _d(rng, 8), "us-digits")
        if rng.random() < 0.5
        else (rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") + _d(rng, 8), "us-next-gen")
    )


def licence(rng: random.Random, lang: str) -> tuple[str, str]:
    """(number, form) of a KR (``11-23-456789-01``) or JP (12 digits) driver's licence."""
    country = {"ko": "kr", "ja": "jp"}.get(lang) or rng.choice(["kr", "jp"])
    if country == "kr":
        if rng.random() < 0.25:
            return (
                (
                    f"{rng.choice(['서울', '부산', '경기', '대구'])}"
                    f" {_d(rng, 2)}-{_d(rng, 6)}-{_d(rng, 2)}"
                ),
                "kr-region",
            )
        sep = rng.choice(["-", "-", " "])
        return sep.join([str(rng.randint(11, 28)), _d(rng, 2), _d(rng, 6), _d(rng, 2)]), "kr"
    return f"{rng.randint(10, 97)}{_d(rng, 10)}", "jp"


_STREETS = [
    "Pine",
    "Maple",
    "Oak",
    "Cedar",
    "Elm",
    "Washington",
    "Lake",
    "Hill",
    "Park",
    "Sunset",
    "Mill",
    "Church",
    "Highland",
    "Jefferson",
    "Lincoln",
    "Madison",
    "Forest",
    "River",
    "Spring",
    "Martin Luther King",
]
_SUFFIXES = [
    "Street",
    "St.",
    "Avenue",
    "Ave",
    "Road",
    "Rd.",
    "Boulevard",
    "Blvd",
    "Lane",
    "Drive",
    "Dr.",
    "Court",
    "Way",
    "Place",
    "Terrace",
    "Circle",
    "Parkway",
]
_CITIES = [
    ("Seattle", "WA", "98101"),
    ("Portland", "OR", "97205"),
    ("Austin", "TX", "78701"),
    ("Denver", "CO", "80202"),
    ("Boston", "MA", "02108"),
    ("San Jose", "CA", "95112"),
    ("Chicago", "IL", "60614"),
    ("New York", "NY", "10027"),
    ("Atlanta", "GA", "30303"),
    ("Madison", "WI", "53703"),
    ("Salt Lake City", "UT", "84111"),
    ("Miami", "FL", "33130"),
]
_STATE_NAMES = {
    "WA": "Washington",
    "OR": "Oregon",
    "TX": "Texas",
    "CO": "Colorado",
    "MA": "Massachusetts",
    "CA": "California",
    "IL": "Illinois",
    "NY": "New York",
    "GA": "Georgia",
    "WI": "Wisconsin",
    "UT": "Utah",
    "FL": "Florida",
}


def en_address(rng: random.Random) -> tuple[str, str]:
    """(address, form): number, street, suffix, optional direction/unit, city, state, ZIP (+4)."""
    street = (
        f"{rng.randint(1, 19999)}"
        f" {rng.choice(['', '', 'N ', 'S ', 'E ', 'W '])}{rng.choice(_STREETS)}"
        f" {rng.choice(_SUFFIXES)}"
    )
    city, state, zip5 = rng.choice(_CITIES)
    unit = rng.choice(
        [
            "",
            "",
            "",
            f", Apt {rng.randint(1, 40)}{rng.choice(['', 'B'])}",
            f", Suite {rng.randint(100, 999)}",
            f" #{rng.randint(2, 99)}",
        ]
    )
    form = rng.choice(["full", "full", "zip4", "no-comma", "state-name", "no-zip"])
    zip_ = f"{zip5}-{_d(rng, 4)}" if form == "zip4" else zip5
    if form == "no-comma":
        return f"{street}{unit}, {city} {state} {zip_}", form
    if form == "state-name":
        return f"{street}{unit}, {city}, {_STATE_NAMES[state]} {zip_}", form
    if form == "no-zip":
        return f"{street}{unit}, {city}, {state}", form
    return f"{street}{unit}, {city}, {state} {zip_}", form


def make_value(type_: str, lang: str, rng: random.Random) -> Value:
    """(head extra, value, tail extra, form) of one identifier of ``type_`` for ``lang``
    carriers."""
    if type_ in ("SSN", "ITIN"):
        v, form = _nine(ssn_digits(rng) if type_ == "SSN" else itin_digits(rng), rng)
        return "", v, "", form
    if type_ == "IBAN":
        v = iban(rng)
        return ("", _group4(v), "", "grouped") if rng.random() < 0.6 else ("", v, "", "compact")
    if type_ == "IP":
        r = rng.random()
        if r < 0.55:
            return "", public_ipv4(rng), "", "v4"
        if r < 0.75:
            return "", public_ipv4(rng), f":{rng.randint(1024, 65535)}", "v4-port"
        return "", public_ipv6(rng), "", "v6"
    if type_ == "CREDENTIAL":
        return credential(rng)
    if type_ == "PASSPORT":
        v, form = passport(rng, lang)
        return "", v, "", form
    if type_ == "DRIVER_LICENSE":
        v, form = licence(rng, lang)
        return "", v, "", form
    if type_ == "ADDRESS":
        v, form = en_address(rng)
        return "", v, "", form
    raise KeyError(type_)


TEMPLATES: dict[tuple[str, str], list[str]] = {
    ("SSN", "en"): ["SSN: {v}", "Social Security number {v}", "My social security number is {v}.",
                    "SSN# {v}", "Employee SSN {v} is on file.", "Soc. Sec. No. {v}"],
    ("SSN", "ko"): ["미국 사회보장번호(SSN) {v}", "SSN: {v} 입니다."],
    ("SSN", "ja"): ["社会保障番号（SSN）：{v}", "SSN {v} を記入してください。"],
    ("ITIN", "en"): ["ITIN: {v}", "Individual Taxpayer Identification Number {v}",
                     "my ITIN is {v}."],
    ("ITIN", "ko"): ["납세자 번호(ITIN) {v}"],
    ("ITIN", "ja"): ["ITIN（個人納税者番号）：{v}"],
    ("IBAN", "en"): ["IBAN: {v}", "Please wire the deposit to {v}.",
                     "Account (IBAN) {v}, BIC DEUTDEFF."],
    ("IBAN", "ko"): ["IBAN {v}로 송금해 주세요.", "해외 계좌(IBAN): {v}"],
    ("IBAN", "ja"): ["IBAN：{v}", "振込先IBAN {v} までお願いします。"],
    ("IP", "en"): ["Failed login from {v}{t}.", "client IP {v}{t}",
                   "My home IP is {v}{t} if you need it.", "Access from {v}{t} was blocked."],
    ("IP", "ko"): ["접속 IP: {v}{t}", "{v}{t}에서 로그인했습니다."],
    ("IP", "ja"): ["接続元IP：{v}{t}", "{v}{t} からのアクセスを確認しました。"],
    ("CREDENTIAL", "en"): ["{h}{v}{t}"],
    ("CREDENTIAL", "ko"): ["{h}{v}{t}"],
    ("CREDENTIAL", "ja"): ["{h}{v}{t}"],
    ("PASSPORT", "en"): ["Passport No. {v}", "passport number {v}",
                         "My passport {v} expires in 2027.", "Passport: {v}"],
    ("PASSPORT", "ko"): ["여권번호 {v}", "여권 번호: {v}",
                         "여권({v})을 지참하세요."],
    ("PASSPORT", "ja"): ["旅券番号：{v}", "パスポート番号 {v}",
                         "パスポートNo. {v}"],
    ("DRIVER_LICENSE", "en"): ["driver's license number {v}", "Driving licence: {v}"],
    ("DRIVER_LICENSE", "ko"): ["운전면허번호 {v}", "운전면허증 번호: {v}",
                               "면허번호 {v} 확인"],
    ("DRIVER_LICENSE", "ja"): ["運転免許証番号：{v}", "免許証番号 第{v}号",
                               "運転免許 {v}"],
    ("ADDRESS", "en"): ["I live at {v}.", "Ship to {v}", "Her address is {v}.",
                        "Send the documents to {v} by Friday.", "Mailing address: {v}",
                        "The office at {v} is closed."],
}  # fmt: skip
"""Statements per (type, carrier language); ``{h}``/``{t}`` take the generator's head and tail."""


def _bad_iban(rng: random.Random) -> str:
    v = iban(rng)
    i = rng.randint(4, len(v) - 1)
    return _group4(v[:i] + str((int(v[i], 36) + rng.randint(1, 8)) % 10) + v[i + 1 :])


NEGATIVES: dict[str, tuple[Callable[[random.Random], str], dict[str, list[str]]]] = {
    "invalid-ssn": (
        lambda r: r.choice([f"000-{_d(r, 2)}-{_d(r, 4)}",
                            f"666-{r.randint(10, 99)}-{r.randint(1000, 9999)}",
                            f"{r.randint(100, 899)}-00-{r.randint(1000, 9999)}",
                            f"{r.randint(100, 665)}-{r.randint(10, 99)}-0000",
                            "078-05-1120", "219-09-9999",
                            f"9{_d(r, 2)}-{r.randint(10, 49)}-{_d(r, 4)}"]),
        {"en": ["SSN: {v}", "the social security number {v} printed on the sample card"],
         "ko": ["SSN {v}"], "ja": ["SSN：{v}"]},
    ),
    "bad-iban": (_bad_iban, {"en": ["IBAN: {v}"], "ko": ["IBAN {v}"], "ja": ["IBAN：{v}"]}),
    "private-ip": (
        lambda r: r.choice(["127.0.0.1", "0.0.0.0", "255.255.255.0", "224.0.0.251",
                            f"169.254.{r.randint(1, 254)}.{r.randint(1, 254)}",
                            f"198.51.100.{r.randint(1, 254)}",
                            f"192.0.2.{r.randint(1, 254)}",
                            f"100.{r.randint(64, 127)}.{r.randint(0, 255)}.{r.randint(1, 254)}",
                            "::1", "fe80::1ff:fe23:4567:890a", "2001:db8::8a2e:370:7334",
                            "8.8.8.8", "1.1.1.1"]),
        {"en": ["Bind the server to {v} first.", "nameserver {v}"], "ko": ["서버 주소 {v}"],
         "ja": ["アドレス {v} に接続"]},
    ),
    "version-quad": (
        lambda r: r.choice([
            f"v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 30)}.{r.randint(1, 99)}",
            f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 30)}.{r.randint(1, 99)}-beta",
            f"{r.randint(1, 9)}.{r.randint(0, 9)}.{r.randint(0, 9)}.{r.randint(1, 9)}",
        ]),
        {"en": ["Upgrade to version {v} today.", "release {v} fixes the bug",
                "section {v} of the manual"],
         "ko": ["버전 {v}로 업데이트"], "ja": ["バージョン {v} で修正"]},
    ),
    "hash": (
        lambda r: r.choice([_s(r, "0123456789abcdef", 40), _s(r, "0123456789abcdef", 7),
                            _s(r, "0123456789abcdef", 64), _s(r, "0123456789ABCDEF", 32)]),
        {"en": ["commit {v} reverted the change", "sha256sum: {v}"], "ko": ["커밋 {v}"],
         "ja": ["チェックサム {v}"]},
    ),
    "placeholder-key": (
        lambda r: r.choice([
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAXXXXXXXXXXXXXXXX",
            "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 'password = "changeme"',
            'password: "<your-password>"', "DB_PASSWORD=${DB_PASSWORD}", "api_key: YOUR_API_KEY",
            'password = ""', "password=********", "token: <token>", "secret = os.environ['SECRET']",
            "password = get_password()",
            "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
            "xoxb-xxxxxxxxxxxx-xxxxxxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxx",
        ]),
        {"en": ["Example config: {v}", "Replace the placeholder {v} with yours."],
         "ko": ["설정 예시: {v}"], "ja": ["設定例：{v}"]},
    ),
    "order-3-2-4": (
        lambda r: f"{r.randint(100, 899)}-{r.randint(10, 99)}-{r.randint(1000, 9999)}",
        {"en": ["Order no. {v} has shipped.", "Invoice {v} is attached."],
         "ko": ["주문번호 {v} 배송 시작"], "ja": ["注文番号 {v} を発送しました。"]},
    ),
    "isbn-10": (
        lambda r: (
            f"ISBN {r.randint(0, 9)}-{r.randint(100, 999)}-"
            f"{r.randint(10000, 99999)}-{r.randint(0, 9)}"
        ),
        {"en": ["See {v}."], "ko": ["참고: {v}"], "ja": ["参考：{v}"]},
    ),
    "document-shaped": (
        lambda r: r.choice([f"M{_d(r, 8)}", f"TK{_d(r, 7)}",
                            f"{r.randint(11, 28)}-{_d(r, 2)}-{_d(r, 6)}-{_d(r, 2)}",
                            f"A{_d(r, 8)}"]),
        {"en": ["Model {v} is out of stock.", "Part {v} ships next week."],
         "ko": ["모델명 {v} 품절"], "ja": ["型番 {v} は在庫切れです。"]},
    ),
    "city-state-zip": (
        lambda r: "{}, {} {}".format(*r.choice(_CITIES)),
        {"en": ["The conference moves to {v} next year.", "Weather for {v}: rain."]},
    ),
    "street-no-number": (
        lambda r: f"{r.choice(_STREETS)} {r.choice(_SUFFIXES)}",
        {"en": ["Traffic is slow on {v} today.", "We walked down {v} to the river."]},
    ),
    "mac-time-scope": (
        lambda r: r.choice([":".join(_s(r, "0123456789abcdef", 2) for _ in range(6)),
                            f"{r.randint(10, 23)}:{r.randint(10, 59)}:{r.randint(10, 59)}",
                            "std::vector<int>", "a::b::c", "fe::ed"]),
        {"en": ["Value: {v}"], "ko": ["값: {v}"], "ja": ["値：{v}"]},
    ),
}  # fmt: skip
"""Hard negatives of issue 25's shapes: (value generator, templates by language)."""


def ids_records(
    place: Callable[[str, str, str, str, random.Random], tuple[str, int] | None],
    seed: int,
    per_cell: int,
    negatives_per_cell: int,
) -> list[dict[str, object]]:
    """Gold records (``per_cell`` per (type, language)) and hard negatives (per (family, language)).

    ``place(lang, head, value, tail, rng)`` puts a statement between two carrier sentences and
    returns the text and the value's start (or None when the text would not be NFC-stable).
    """
    rng = random.Random(seed + 25)
    out: list[dict[str, object]] = []
    for type_, lang in sorted(TEMPLATES):
        made = 0
        while made < per_cell:
            h, value, t, form = make_value(type_, lang, rng)
            tmpl = rng.choice(TEMPLATES[(type_, lang)])
            head, tail = tmpl.split("{v}")
            head, tail = head.replace("{h}", h), tail.replace("{t}", t)
            rec = place(lang, head, value, tail, rng)
            if rec is None:
                continue
            text, start = rec
            out.append(
                {
                    "id": f"gold-{type_.lower()}-{lang}-{made:04d}",
                    "lang": lang,
                    "kind": "gold",
                    "text": text,
                    "spans": [{"type": type_, "start": start, "end": start + len(value)}],
                    "tags": [
                        f"form:{type_}:{form}",
                        "obf:none",
                        "set:issue25",
                        f"template:{type_}/{lang}/{TEMPLATES[(type_, lang)].index(tmpl)}",
                    ],
                }
            )
            made += 1
    for family in sorted(NEGATIVES):
        make, templates = NEGATIVES[family]
        for lang in sorted(templates):
            made = 0
            while made < negatives_per_cell:
                head, tail = rng.choice(templates[lang]).split("{v}")
                rec = place(lang, head, make(rng), tail, rng)
                if rec is None:
                    continue
                out.append(
                    {
                        "id": f"neg-{family}-{lang}-{made:04d}",
                        "lang": lang,
                        "kind": "negative",
                        "text": rec[0],
                        "spans": [],
                        "tags": [f"family:{family}", "set:issue25"],
                    }
                )
                made += 1
    return out
