"""Linear time on hostile input, and the docstring examples of spcl.detect (docs and code cannot drift)."""

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


def test_hostile_input_still_finds_planted_pii() -> None:
    text = "😀" * 50_000 + " 010-1234-5678 " + "@" * 50_000 + " kim@example.com"
    assert [h.type for h in SET.find(text)] == ["PHONE", "EMAIL"]


MODULES = [
    "spcl.detect",
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
