"""Per-detector behaviour: real-world-shaped positives, the negatives that trouble peers, and
settings."""

from __future__ import annotations

import pytest

from spcl.config import DetectSettings
from spcl.detect import find_pii
from spcl.detect.validators import mynumber_check_digit, rrn_check_digit


def spans(text: str, settings: DetectSettings | None = None) -> list[tuple[str, str, bool | None]]:
    """(type, covered text, validated) of every hit."""
    return [(h.type, text[h.start : h.end], h.validated) for h in find_pii(text, settings)]


def rrn(front: str, serial: str = "12345") -> str:
    """A Korean RRN with a valid check digit: ``front`` is YYMMDD-G."""
    first = front.replace("-", "") + serial
    return f"{first[:6]}-{first[6:]}{rrn_check_digit(first)}"


def mynumber(first11: str = "12345678901") -> str:
    """A My Number with a valid check digit."""
    return first11 + str(mynumber_check_digit(first11))


VALID_RRN = rrn("900101-1")  # 900101-1234568
VALID_MYNUMBER = mynumber()  # 123456789018

POSITIVES: list[tuple[str, str, str, bool | None]] = [
    # PHONE — Korea
    ("연락처: 010-1234-5678 로 연락 주세요", "PHONE", "010-1234-5678", None),
    ("전화01012345678로 문의", "PHONE", "01012345678", None),
    ("휴대폰 010 1234 5678", "PHONE", "010 1234 5678", None),
    ("휴대폰 010.1234.5678", "PHONE", "010.1234.5678", None),
    ("구형 011-123-4567 번호", "PHONE", "011-123-4567", None),
    ("사무실 02-123-4567", "PHONE", "02-123-4567", None),
    ("사무실 (02) 1234-5678", "PHONE", "(02) 1234-5678", None),
    ("분당 031-123-4567", "PHONE", "031-123-4567", None),
    ("부산 051-1234-5678", "PHONE", "051-1234-5678", None),
    ("인터넷전화 070-1234-5678", "PHONE", "070-1234-5678", None),
    ("안심번호 0505-123-4567", "PHONE", "0505-123-4567", None),
    ("Call +82 10-1234-5678 now", "PHONE", "+82 10-1234-5678", None),
    ("Seoul office +82-2-123-4567", "PHONE", "+82-2-123-4567", None),
    # PHONE — Japan
    ("携帯：090-1234-5678まで", "PHONE", "090-1234-5678", None),
    ("携帯08012345678に", "PHONE", "08012345678", None),
    ("代表 03-1234-5678", "PHONE", "03-1234-5678", None),
    ("大阪 06-1234-5678", "PHONE", "06-1234-5678", None),
    ("横浜 045-123-4567", "PHONE", "045-123-4567", None),
    ("電話 03(3581)3111", "PHONE", "03(3581)3111", None),
    ("IP電話 050-1234-5678", "PHONE", "050-1234-5678", None),
    ("TEL：０９０－１２３４－５６７８", "PHONE", "０９０－１２３４－５６７８", None),
    ("Tokyo +81 90-1234-5678", "PHONE", "+81 90-1234-5678", None),
    ("Tokyo +81-3-1234-5678", "PHONE", "+81-3-1234-5678", None),
    # PHONE — international
    ("SF office +1 (415) 555-2671.", "PHONE", "+1 (415) 555-2671", None),
    ("London +44 20 7946 0958", "PHONE", "+44 20 7946 0958", None),
    ("Call (415) 555-2671 today", "PHONE", "(415) 555-2671", None),
    ("E.164 +821012345678", "PHONE", "+821012345678", None),
    # EMAIL
    ("메일 kim.minsu@mailbox.co.kr 로 보내", "EMAIL", "kim.minsu@mailbox.co.kr", None),
    (
        "連絡先：taro_yamada+news@mail.mailbox.jp まで",
        "EMAIL",
        "taro_yamada+news@mail.mailbox.jp",
        None,
    ),
    ("Contact: John.Doe@Mailbox.COM.", "EMAIL", "John.Doe@Mailbox.COM", None),
    # RRN
    (f"주민등록번호 {VALID_RRN}", "RRN", VALID_RRN, True),
    (f"주민번호{VALID_RRN.replace('-', '')}입니다", "RRN", VALID_RRN.replace("-", ""), True),
    (f"RRN {rrn('050505-4')}", "RRN", rrn("050505-4"), True),
    (f"외국인등록번호 {rrn('851231-5')}", "RRN", rrn("851231-5"), True),
    (
        f"외국인등록번호 {rrn('851231-5')[:-1]}{(rrn_check_digit('851231512345') + 2) % 10}",
        "RRN",
        None,
        None,
    ),
    ("주민번호 900101-1234560", "RRN", "900101-1234560", None),  # post-2020 style: can't tell
    # plain digits need the context word
    ("주민등록번호: 9001011234560", "RRN", "9001011234560", None),
    ("주민번호 ９００１０１－１２３４５６８", "RRN", "９００１０１－１２３４５６８", True),
    # MYNUMBER
    (f"マイナンバー：{VALID_MYNUMBER}", "MYNUMBER", VALID_MYNUMBER, True),
    (
        f"個人番号 {VALID_MYNUMBER[:4]} {VALID_MYNUMBER[4:8]} {VALID_MYNUMBER[8:]}",
        "MYNUMBER",
        None,
        True,
    ),
    (
        f"番号は{VALID_MYNUMBER[:4]}-{VALID_MYNUMBER[4:8]}-{VALID_MYNUMBER[8:]}です",
        "MYNUMBER",
        None,
        True,
    ),
    # CARD
    ("카드번호 4111-1111-1111-1111", "CARD", "4111-1111-1111-1111", True),
    ("card: 4111 1111 1111 1111 exp 12/29", "CARD", "4111 1111 1111 1111", True),
    ("カード番号5555555555554444", "CARD", "5555555555554444", True),
    ("Amex 3782 822463 10005", "CARD", "3782 822463 10005", True),
    ("JCB 3530 1113 3330 0000", "CARD", "3530 1113 3330 0000", True),
    # ACCOUNT
    ("국민은행 계좌 123456-01-123456 (예금주 홍길동)", "ACCOUNT", "123456-01-123456", None),
    ("신한은행 110-123-456789로 입금", "ACCOUNT", "110-123-456789", None),
    ("우리은행 1002-123-456789", "ACCOUNT", "1002-123-456789", None),
    ("농협 302-1234-5678-91", "ACCOUNT", "302-1234-5678-91", None),
    ("입금계좌: 12345678901234", "ACCOUNT", "12345678901234", None),
    ("三井住友銀行 渋谷支店 普通 1234567", "ACCOUNT", "1234567", None),
    ("振込先 口座番号 123-1234567", "ACCOUNT", "123-1234567", None),
    ("ゆうちょ銀行 記号番号 12345-12345678", "ACCOUNT", "12345-12345678", None),
    # DOB
    ("생년월일: 1990-01-02", "DOB", "1990-01-02", True),
    ("생년월일 1990. 1. 2.", "DOB", "1990. 1. 2", True),
    ("생일은 1990년 1월 2일", "DOB", "1990년 1월 2일", True),
    ("1990년 1월 2일생 홍길동", "DOB", "1990년 1월 2일", True),
    ("生年月日：1990年1月2日", "DOB", "1990年1月2日", True),
    ("1990年1月2日生まれの男性", "DOB", "1990年1月2日", True),
    ("平成2年1月2日生まれ", "DOB", "平成2年1月2日", True),
    ("昭和60年12月31日生", "DOB", "昭和60年12月31日", True),
    ("誕生日 1990/1/2", "DOB", "1990/1/2", True),
    ("DOB: 02/01/1990", "DOB", "02/01/1990", True),
    ("Date of birth: 2 Jan 1990", "DOB", "2 Jan 1990", True),
    ("He was born on January 2, 1990 in Ohio.", "DOB", "January 2, 1990", True),
    ("Birthday: 19900102", "DOB", "19900102", True),
    # POSTAL
    ("〒100-0001 東京都千代田区千代田1-1", "POSTAL", "100-0001", None),
    ("郵便番号：530-0001", "POSTAL", "530-0001", None),
    ("우편번호 06236", "POSTAL", "06236", None),
    ("(우) 06236 서울", "POSTAL", "06236", None),
    # ADDRESS
    (
        "주소: 서울특별시 강남구 테헤란로 152 (역삼동)",
        "ADDRESS",
        "서울특별시 강남구 테헤란로 152",
        None,
    ),
    (
        "경기도 성남시 분당구 판교역로 235, 에이치스퀘어",
        "ADDRESS",
        "경기도 성남시 분당구 판교역로 235",
        None,
    ),
    ("서울 종로구 세종대로 110", "ADDRESS", "서울 종로구 세종대로 110", None),
    ("서울시 강남구 역삼동 123-45번지", "ADDRESS", "서울시 강남구 역삼동 123-45번지", None),
    ("제주특별자치도 제주시 첨단로 242", "ADDRESS", "제주특별자치도 제주시 첨단로 242", None),
    ("부산광역시 해운대구 센텀중앙로 79", "ADDRESS", "부산광역시 해운대구 센텀중앙로 79", None),
    ("東京都千代田区千代田1-1 皇居", "ADDRESS", "東京都千代田区千代田1-1", None),
    ("大阪府大阪市北区梅田3丁目1番3号", "ADDRESS", "大阪府大阪市北区梅田3丁目1番3号", None),
    ("神奈川県横浜市西区みなとみらい2-3-1", "ADDRESS", "神奈川県横浜市西区みなとみらい2-3-1", None),
]


@pytest.mark.parametrize(("text", "pii_type", "covered", "validated"), POSITIVES)
def test_positive(text: str, pii_type: str, covered: str | None, validated: bool | None) -> None:
    got = [(t, c, v) for t, c, v in spans(text) if t == pii_type]
    assert len(got) == 1, f"{pii_type}: {got}"
    _, cov, val = got[0]
    if covered is not None:
        assert cov == covered
    assert val is validated


NEGATIVES: list[str] = [
    # timestamps, dates without birth context, versions, IPs, prices
    "로그 2024-01-02 12:34:56 에 기록됨",
    "created_at=20240102123456",
    "2024年1月2日に発表された",
    "Released 2024-01-02, version 10.0.19045.3803",
    "서버 192.168.010.123 접속, 1.2.3.4 와 10.0.0.1",
    "가격은 1,234,567원이며 ₩10,000,000 할인",
    "¥1,980 (税込) ・ $1,234.56",
    # ISBN, order numbers, GUIDs, serials
    "ISBN 978-4-06-123456-7",
    "ISBN9784061234567",
    "ISBN 9784061234567",
    "주문번호 20231105-0012345",
    f"주문번호 {VALID_RRN}",
    "id 550e8400-e29b-41d4-a716-446655440000",
    "uuid 123e4567-e89b-12d3-a456-426614174000 done",
    "GUID {01012345-6789-0123-4567-890123456789}",
    # numbers inside longer digit runs
    f"12345{VALID_RRN.replace('-', '')}678",
    "99901012345678999",
    "1234567890123456789012345",
    f"0{VALID_MYNUMBER}",
    "4111111111111111111111",
    "JANコード 4902102072458",  # a barcode: plain 13 digits, RRN check digit fails, no RRN word
    # company numbers are not personal
    "고객센터 1588-1234",
    "무료전화 080-123-4567",
    "フリーダイヤル 0120-123-456",
    "フリーコール 0800-123-4567",
    "ナビダイヤル 0570-123-456",
    # structure that fails validation
    "주민번호 900230-1234568",  # Feb 30
    "카드 4111-1111-1111-1112",  # Luhn fails
    f"個人番号 {VALID_MYNUMBER[:-1]}{(int(VALID_MYNUMBER[-1]) + 1) % 10}",
    "1234 5678 9012",  # 4-4-4 but check digit fails
    "生年月日 1990年2月30日",
    # My Number needs grouping or context; accounts need context
    f"商品コード {VALID_MYNUMBER}",
    "참고 123456-01-123456",
    "普通 1234567890123456789",
    # dates without birth context
    "회의는 1990년 1월 2일에 열렸다",
    "The meeting on January 2, 1990 was long.",
    "은행 영업일 2024-01-02",
    "입금일 20240102123456",
    # postal codes without their marker
    "코드 06236 입니다",
    "番号 100-0001",
    # file names that look like e-mail
    "logo@2x.png and icon@3x.jpg",
    # addresses need a number at the end
    "서울특별시 강남구 테헤란로에서 만나요",
    "東京都千代田区で会議",
    "서울 주로 3월에 열린다",
    "넥스트 콘서트는 서울 성북구 안암동 5가 고려대",
    # phone-like fragments
    "0-0-0-0-0-0-0-0",
    "010-12-34",
    "02-12-2024",
    "01.02.2024",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_negative(text: str) -> None:
    assert spans(text) == []


def test_digits_glued_to_hangul_and_kana_match() -> None:
    text = f"전화01012345678로, 주민번호{VALID_RRN}입니다, 携帯09012345678まで"
    assert [t for t, _, _ in spans(text)] == ["PHONE", "RRN", "PHONE"]


def test_company_numbers_reported_when_asked() -> None:
    on = DetectSettings(include_company_numbers=True)
    for text, covered in [
        ("고객센터 1588-1234", "1588-1234"),
        ("무료전화 080-123-4567", "080-123-4567"),
        ("フリーダイヤル 0120-123-456", "0120-123-456"),
        ("フリーコール 0800-123-4567", "0800-123-4567"),
    ]:
        assert spans(text, on) == [("PHONE", covered, None)], text
    # A span of years is not a company number even then.
    assert spans("1600-1700년", on) == []


def test_keep_invalid_reports_failed_checks_as_false() -> None:
    keep = DetectSettings(keep_invalid=True)
    assert spans("카드 4111-1111-1111-1112", keep) == [("CARD", "4111-1111-1111-1112", False)]
    assert spans("주민번호 900230-1234568", keep) == [("RRN", "900230-1234568", False)]
    assert spans("生年月日 1990年2月30日", keep) == [("DOB", "1990年2月30日", False)]
    bad = f"{VALID_MYNUMBER[:-1]}{(int(VALID_MYNUMBER[-1]) + 1) % 10}"
    assert spans(f"個人番号 {bad}", keep) == [("MYNUMBER", bad, False)]


def test_types_setting_switches_detectors_off() -> None:
    text = f"010-1234-5678 kim@mailbox.com {VALID_RRN}"
    only_email = DetectSettings(types=("EMAIL",))
    assert [t for t, _, _ in spans(text, only_email)] == ["EMAIL"]
    no_phone = DetectSettings(types=("EMAIL", "RRN"))
    assert [t for t, _, _ in spans(text, no_phone)] == ["EMAIL", "RRN"]


def test_context_window_bounds_account_and_dob() -> None:
    far = "계좌" + "가" * 30 + " 123456-01-123456"
    assert spans(far) == []  # default window 24
    assert [t for t, _, _ in spans(far, DetectSettings(context_window=40))] == ["ACCOUNT"]
    far_dob = "생년월일" + "." * 30 + " 1990-01-02"
    assert spans(far_dob) == []
    assert [t for t, _, _ in spans(far_dob, DetectSettings(context_window=40))] == ["DOB"]


def test_phone_inside_bank_context_stays_a_phone() -> None:
    assert spans("입금 후 010-1234-5678로 연락") == [("PHONE", "010-1234-5678", None)]


def test_rrn_beats_account_when_checked() -> None:
    assert spans(f"계좌 {VALID_RRN}") == [("RRN", VALID_RRN, True)]


def test_several_hits_in_one_document_in_order() -> None:
    text = (
        "홍길동 (생년월일 1990.01.02) 연락처 010-1234-5678, hong@mailbox.com, "
        f"주소 서울특별시 강남구 테헤란로 152. 주민번호 {VALID_RRN}. "
        f"〒100-0001 東京都千代田区千代田1-1 個人番号 {VALID_MYNUMBER} カード 4111 1111 1111 1111"
    )
    assert [t for t, _, _ in spans(text)] == [
        "DOB", "PHONE", "EMAIL", "ADDRESS", "RRN", "POSTAL", "ADDRESS", "MYNUMBER", "CARD"
    ]  # fmt: skip
