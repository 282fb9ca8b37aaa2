"""Linear time on hostile input, and the docstring examples of spcl.detect (docs and code cannot
drift)."""

from __future__ import annotations

import doctest
import importlib
import time

import pytest

from spcl.config import DetectSettings
from spcl.detect import build_detectors

N = 100_000
HOSTILE = {
    "emoji": "😀" * N,
    "digits": "7" * N,
    "zeros": "0" * N,
    "at": "@" * N,
    "dots": "." * N,
    "dashes": "-" * N,
    "one-dash": "1-" * (N // 2),
    "zero-dash": "0-" * (N // 2),
    "groups": "1234 " * (N // 5),
    "phone-ish": "0101-" * (N // 5),
    "mixed": "0１-２.3 (4)+5" * (N // 12),
    "letters": "a" * N,
    "a-at": "a@" * (N // 2),
    "labels": "a@b." + "b." * (N // 2),
    "long-email": "a" * N + "@" + "b" * N,
    "plus": "+1 " * (N // 3),
    "parens": "(0" * (N // 2),
    "birth-words": "생년월일 " * (N // 5),
    "born": "born " * (N // 5),
    "after-marks": "1生" * (N // 2),
    "dotted-years": "1990. " * (N // 6),
    "provinces": "서울 " * (N // 3),
    "roads": "서울 강남구 로1 " * (N // 10),
    "prefectures": "東京都" * (N // 3),
    "ken": "県" * N,
    "kanji-numerals": "東京都千代田区" + "一" * N,
    "postal-marks": "〒" * N,
    "account": "계좌 " + "12-" * (N // 3),
    "hangul": "가" * N,
    # issue 12: the folded view and the new written forms
    "zwsp": "\u200b" * N,
    "digit-zwsp": "1\u200b" * (N // 2),
    "digit-marks": "0\u0301\ufe0f" * (N // 3),
    "soft-hyphens": "a\u00ad" * (N // 2) + "@mailbox.com",
    "math-digits": "𝟎" * N,
    "fullwidth-digits": "１" * N,
    "nbsp-groups": "123\u00a0" * (N // 4),
    "emoji-vs": "😀\ufe0f" * (N // 2),
    "nanp-ish": "415-555-" * (N // 8),
    "dotted-groups": "415.555." * (N // 8),
    "spaced-groups": "call 212 555 " * (N // 13),
    "extensions": "0132 x" * (N // 6),
    "ext-words": " ext. " * (N // 6),
    "exit-prefix": "001-" * (N // 4),
    "born-words": "태어났다 " * (N // 5),
    "umare": "生まれ" * (N // 3),
    "born-dates": "born 1 May 1990 " * (N // 16),
    "particles": "서울 강남구 테헤란로 1입니다 " * (N // 18),
    # issue 25: the new identifier types
    "ssn-groups": "123-45-" * (N // 7),
    "ssn-spaced": "536 90 " * (N // 7),
    "iban-ish": "DE89 " * (N // 5),
    "iban-run": "DE89" + "A" * N,
    "dotted-quads": "1.1.1." * (N // 6),
    "dotted-ips": "93.184.216.34." * (N // 14),
    "colons": "1:" * (N // 2),
    "double-colons": "::" * (N // 2),
    "hex-colons": "ffff:" * (N // 5),
    "akia": "AKIA" * (N // 4),
    "tokens": "ghp_" * (N // 4),
    "jwt-ish": "eyJa." * (N // 5),
    "jwt-run": "eyJ" + "a" * N,
    "slack-ish": "xoxb-1-" * (N // 7),
    "gitlab-ish": "glpat-" * (N // 6),
    "pem-no-end": "-----BEGIN RSA PRIVATE KEY-----\n" + "QUJD\n" * (N // 5),
    "pem-begins": "-----BEGIN PRIVATE KEY-----" * (N // 27),
    "password-eq": "password=" * (N // 9),
    "password-quotes": 'password="' * (N // 10),
    "secret-words": "token secret pwd " * (N // 17),
    "passport-words": "passport " * (N // 9),
    "licence-words": "운전면허 " * (N // 5),
    "streets": "1 Main Street " * (N // 14),
    "street-words": "12 Pine Pine Pine Pine Pine " * (N // 28),
    "street-cities": "1 Elm St, Austin, TX 78701, " * (N // 28),
}
SET = build_detectors(DetectSettings(keep_invalid=True, include_company_numbers=True))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_detector_is_linear_on_hostile_input(name: str) -> None:
    text = HOSTILE[name]
    for detector in [*SET.detectors, SET]:
        t0 = time.perf_counter()
        detector.find(text)
        elapsed = time.perf_counter() - t0
        label = getattr(detector, "name", "detector set")
        assert elapsed < 2.0, f"{label} took {elapsed:.2f}s on {name!r}"


def test_fold_is_linear_on_hostile_input() -> None:
    from spcl.detect.folding import fold

    for name in ("zwsp", "digit-zwsp", "digit-marks", "math-digits", "emoji-vs", "soft-hyphens"):
        t0 = time.perf_counter()
        fold(HOSTILE[name])
        assert time.perf_counter() - t0 < 2.0, name


def test_hostile_input_still_finds_planted_pii() -> None:
    text = "😀" * 50_000 + " 010-1234-5678 " + "@" * 50_000 + " kim@mailbox.com"
    assert [h.type for h in SET.find(text)] == ["PHONE", "EMAIL"]


MODULES = [
    "spcl.detect",
    "spcl.detect.folding",
    "spcl.detect.validators",
    "spcl.detect.phone",
    "spcl.detect.ids",
    "spcl.detect.mail",
    "spcl.detect.account",
    "spcl.detect.dob",
    "spcl.detect.location",
]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
