"""A vault key and three short documents shared by the real-model backend tests."""

from __future__ import annotations

import base64

KEY_B64 = base64.b64encode(bytes(range(32))).decode()
DOCS = {
    "ko-1": "신청인 김가상(33)씨의 연락처는 010-0000-1234입니다.",
    "ja-1": "山田太郎さんのメールは yamada@mailbox.com です。",
    "en-1": "Please refund Jordan Sample to account 000-111-222333.",
}
