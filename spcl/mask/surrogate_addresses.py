"""Address surrogates: the same shape with the address words kept (Korean and Japanese
administrative suffixes, English street words); place names replaced by real regions, cities and
prefectures or by syllables of the same script, house and block numbers by fresh digits.
"""

from __future__ import annotations

import random
import re

from spcl.mask.surrogate_shapes import (
    KO_GIVEN_SYLLABLES,
    WORD,
    case_like,
    digit_like,
    digit_value,
    is_digit,
    is_hangul,
    shape_fake,
)

_KO_ADDR_SUFFIX = (
    "특별시",
    "광역시",
    "시",
    "도",
    "구",
    "군",
    "동",
    "읍",
    "면",
    "리",
    "로",
    "길",
    "번길",
    "호",
    "층",
)
_JA_ADDR_KEEP = set("都道府県市区町村郡丁目番地号")
_EN_ADDR_WORDS = {
    "street",
    "st",
    "avenue",
    "ave",
    "road",
    "rd",
    "lane",
    "ln",
    "drive",
    "dr",
    "court",
    "ct",
    "boulevard",
    "blvd",
    "way",
    "place",
    "pl",
    "apt",
    "suite",
    "unit",
    "floor",
    "north",
    "south",
    "east",
    "west",
    "n",
    "s",
    "e",
    "w",
}
_EN_PLACES = (
    "Maple",
    "Oak",
    "Cedar",
    "Pine",
    "Lake",
    "Hill",
    "River",
    "Park",
    "Elm",
    "Sunset",
    "Spring",
    "Mill",
)
KO_REGIONS = (
    "서울특별시",
    "부산광역시",
    "대구광역시",
    "인천광역시",
    "광주광역시",
    "대전광역시",
    "울산광역시",
    "경기도",
    "강원도",
    "충청북도",
    "충청남도",
    "전라북도",
    "전라남도",
    "경상북도",
    "경상남도",
)
_KO_CITIES = (
    "수원시",
    "성남시",
    "고양시",
    "용인시",
    "청주시",
    "천안시",
    "전주시",
    "포항시",
    "창원시",
    "춘천시",
    "김해시",
    "안산시",
)
JA_PREFECTURES = (
    "東京都",
    "大阪府",
    "京都府",
    "北海道",
    "神奈川県",
    "埼玉県",
    "千葉県",
    "愛知県",
    "兵庫県",
    "福岡県",
    "静岡県",
    "広島県",
    "宮城県",
    "新潟県",
)
_JA_PLACES = ("中央", "青葉", "緑", "港", "桜", "若葉", "本町", "旭", "栄", "清水", "東山", "西原")
_JA_ADDRESS = re.compile(
    r"^(?P<pref>東京都|北海道|(?:京都|大阪)府|[\u4e00-\u9fff]{2,3}県)?"
    r"(?P<city>[\u4e00-\u9fff\u30a0-\u30ff\u3040-\u309f]{1,6}?[市区町村郡])?"
)


def _fresh_number(text: str, rng: random.Random) -> str:
    """New digits for a house or block number: no leading zero where the original had none."""
    return "".join(
        digit_like(ch, rng.randrange(1 if i == 0 and digit_value(ch) else 0, 10))
        for i, ch in enumerate(text)
    )


def _fake_ja_address(surface: str, rng: random.Random) -> str | None:
    """A Japanese address: a real prefecture and a common place name with the original suffix, the
    rest (wards, blocks, numbers) by shape with 丁目/番地/号 kept; ``None`` when it does not start
    like one."""
    m = _JA_ADDRESS.match(surface)
    if m is None or not (m.group("pref") or m.group("city")):
        return None
    head = ""
    if m.group("pref"):
        head += rng.choice(JA_PREFECTURES)
    if m.group("city"):
        head += rng.choice(_JA_PLACES) + m.group("city")[-1]
    rest = "".join(
        c if c in _JA_ADDR_KEEP or is_digit(c) else shape_fake(c, rng) for c in surface[m.end() :]
    )
    return head + re.sub(r"[0-9０-９]+", lambda g: _fresh_number(g.group(0), rng), rest)


def fake_address(surface: str, rng: random.Random) -> str:
    """A fake address of the shape of ``surface`` (Japanese first, else word by word)."""
    ja = _fake_ja_address(surface, rng)
    if ja is not None:
        return ja
    out: list[str] = []
    region_done = False
    pos = 0
    for m in WORD.finditer(surface):
        out.append(surface[pos : m.start()])
        pos = m.end()
        w = m.group(0)
        core = w.rstrip(",.")
        tail = w[len(core) :]
        if (
            core
            and all(is_hangul(c) for c in core)
            and not region_done
            and core.endswith(("도", "특별시", "광역시"))
        ):
            same = [r for r in KO_REGIONS if r.endswith("도") == core.endswith("도")]
            out.append(rng.choice(same) + tail)  # a real province (도) or metropolitan city (시)
            region_done = True
        elif core and all(is_hangul(c) for c in core) and core.endswith("시") and len(core) > 1:
            out.append(rng.choice(_KO_CITIES) + tail)
        elif core and all(is_hangul(c) for c in core):
            suffix = next(
                (x for x in _KO_ADDR_SUFFIX if core.endswith(x) and len(core) > len(x)), ""
            )
            stem = "".join(
                chr(0xAC00 + rng.randrange(11172)) if i else rng.choice(KO_GIVEN_SYLLABLES)
                for i in range(max(1, len(core) - len(suffix)))
            )
            out.append(
                stem[:1] + "".join(rng.choice(KO_GIVEN_SYLLABLES) for _ in stem[1:]) + suffix + tail
            )
        elif core.isascii() and core.isalpha() and core.lower() in _EN_ADDR_WORDS:
            out.append(w)
        elif core.isascii() and core.isalpha():
            out.append(case_like(rng.choice(_EN_PLACES), core) + tail)
        else:
            kept = "".join(
                c if c in _JA_ADDR_KEEP or is_digit(c) else shape_fake(c, rng) for c in w
            )
            out.append(re.sub(r"[0-9０-９]+", lambda g: _fresh_number(g.group(0), rng), kept))
    out.append(surface[pos:])
    return "".join(out)
