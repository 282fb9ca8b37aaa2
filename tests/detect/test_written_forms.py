"""Identifiers as people write them in running text (issue 12): phone forms, dates of birth in
prose, and the hard negatives that must stay unhit."""

from __future__ import annotations

import pytest

from spcl.detect import find_pii


def _found(text: str) -> list[tuple[str, str]]:
    return [(h.type, text[h.start : h.end]) for h in find_pii(text)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Call 415-555-0132 x204 today.", "415-555-0132 x204"),
        ("Call 415-555-0132x204 today.", "415-555-0132x204"),
        ("Phone: (212) 555-0147 ext. 45", "(212) 555-0147 ext. 45"),
        ("Tel: (212)555-0147.", "(212)555-0147"),
        ("My number is 415.555.0132.", "415.555.0132"),
        ("Reach me at 212-555-0147 after 5.", "212-555-0147"),
        ("Call me at 212 555 0147.", "212 555 0147"),
        ("Office: 415 555-0132, Mon-Fri", "415 555-0132"),
        ("Fax (415)-555-0133 only", "(415)-555-0133"),
        ("Call 1-415-555-0199 any time", "1-415-555-0199"),
        ("phone +1 415 555 0132 (cell)", "+1 415 555 0132"),
        ("+1-212-555-0147, extension 12", "+1-212-555-0147, extension 12"),
        ("call 001-1-415-555-0132 from Korea", "001-1-415-555-0132"),
        ("국제전화 001-82-10-1234-5678 로", "001-82-10-1234-5678"),
        ("代表 03-1234-5678 内線 123 まで", "03-1234-5678 内線 123"),
        ("+44 20 7946 0958 (London office)", "+44 20 7946 0958"),
    ],
)
def test_phone_forms_of_english_text_are_hit_whole(text: str, value: str) -> None:
    assert _found(text) == [("PHONE", value)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("저는 1992년 7월 3일에 태어났습니다.", "1992년 7월 3일"),
        ("그는 1992. 7. 3. 서울에서 태어났다.", "1992. 7. 3"),
        ("1968年11月2日生まれ", "1968年11月2日"),
        ("私は1968年11月2日に生まれました。", "1968年11月2日"),
        ("彼は昭和43年11月2日、東京都に生まれた。", "昭和43年11月2日"),
        ("I was born on 14 May 1983.", "14 May 1983"),
        ("She was born in Chicago, Illinois, on May 14, 1983.", "May 14, 1983"),
        ("born 3/14/1983", "3/14/1983"),
        ("DOB: 03/14/1983", "03/14/1983"),
        ("DoB 1983-03-14", "1983-03-14"),
        ("D.O.B. 1983-03-14", "1983-03-14"),
        ("John Carter (b. 14 May 1983) is a writer.", "14 May 1983"),
        ("Date of birth: 14th of May 1983", "14th of May 1983"),
        # two-digit years: after a field label or right before 생/生 only
        ("생년월일: 920703", "920703"),
        ("생년월일 92.07.03", "92.07.03"),
        ("92년 7월 3일생", "92년 7월 3일"),
        ("DOB 83/03/14", "83/03/14"),
    ],
)
def test_dates_of_birth_in_running_prose(text: str, value: str) -> None:
    assert _found(text) == [("DOB", value)]


@pytest.mark.parametrize(
    "text",
    [
        # dates without birth context
        "회의는 2024년 5월 3일에 열렸다.",
        "2024년 5월 3일 생방송으로 진행됩니다.",
        "2024年5月3日に生産を開始した。",
        "The company was founded on 14 May 1983.",
        "He was born in 1950. On 14 May 1983 he married.",
        "Released 2023-05-14.",
        "회의 24.05.03 진행",
        "I was born in Ohio; build 83.03.14 shipped later.",
        # versions, IPs, GUIDs, prices, other numbers
        "The build 1.429.945.6764 fixed the crash.",
        "Upgrade to 10.0.19045.3803 first.",
        "Connect to 192.168.100.200 and retry.",
        "the server at 203.0.113.45:8080 timed out",
        "Request id 550e8400-e29b-41d4-a716-446655440000 failed.",
        "object e29b-41d4-a716 not found",
        "The contract was worth $415,555,013.20.",
        "총액은 12,345,678원입니다.",
        "Set the value to 1920x1080.",
        "Mail it to ZIP 94105-1234.",
        "Order no. 415-555-0132 has shipped.",
        "Table: 212 555 0147 333",
        "logged at 2024-05-14 12:34:56",
        "GPS 37.5665, 126.9780",
        "The years 1600-1700 saw change.",
        "See ISBN 978-4-06-123456-7 for details.",
    ],
)
def test_hard_negatives_stay_unhit(text: str) -> None:
    assert _found(text) == []


def test_toll_free_us_numbers_are_company_numbers() -> None:
    from spcl.config import DetectSettings

    text = "Toll free 1-800-555-0199 or +1 888 555 0100 or (877) 555-0100"
    assert _found(text) == []
    hits = find_pii(text, DetectSettings(include_company_numbers=True))
    assert [text[h.start : h.end] for h in hits] == [
        "1-800-555-0199",
        "+1 888 555 0100",
        "(877) 555-0100",
    ]


def test_a_bank_account_shaped_like_a_us_number_is_an_account() -> None:
    assert _found("계좌 415-555-0132로 입금") == [("ACCOUNT", "415-555-0132")]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("농협 계좌 302-1234-5678-91 로", "302-1234-5678-91"),
        ("새마을금고 계좌 9002-1234-5678-9 로", "9002-1234-5678-9"),
        ("bank account 090-32-173008 please", "090-32-173008"),
    ],
)
def test_account_layouts(text: str, value: str) -> None:
    assert _found(text) == [("ACCOUNT", value)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("주소는 서울 마포구 월드컵북로 194입니다.", "서울 마포구 월드컵북로 194"),
        ("서울특별시 강남구 테헤란로 152로 보내 주세요", "서울특별시 강남구 테헤란로 152"),
    ],
)
def test_korean_address_followed_by_a_particle(text: str, value: str) -> None:
    assert _found(text) == [("ADDRESS", value)]
