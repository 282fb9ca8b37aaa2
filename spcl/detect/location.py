"""POSTAL and ADDRESS: Japanese/Korean postal codes and Korean, Japanese and English street
addresses.

Postal codes have no checksum: a Japanese code counts after 〒 or 郵便番号, a Korean 5-digit code
(or the old 3-3 form) only after 우편번호 / (우). The hit spans the digits only. Addresses are
Korean road-name (or lot-number) addresses starting at a 시/도 and Japanese addresses starting at a
prefecture, each ending in a building or block number, and English ones from the house number
through the street suffix, unit, city, state and ZIP (``1420 Pine Street, Seattle, WA 98101``);
every part has a bounded length, so a hit is at most about 80 (English: 200) characters and matching
stays linear. ``validated`` is always ``None``.
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect._common import NUM_RIGHT, window_has
from spcl.detect.base import Hit
from spcl.detect.validators import digits_of

_POSTAL = re.compile(
    r"(?:(?P<jp>〒|郵便番号)|(?P<kr>우편 ?번호|우\)))[\s:：(（]{0,3}"
    r"(?P<code>\d{3}[-‐－ー]?\d{4}|\d{5}|\d{3}[-‐－]\d{3})" + NUM_RIGHT
)

_KR_PROVINCE = (
    r"(?:(?:서울|부산|대구|인천|광주|대전|울산)(?:특별시|광역시|시)?|세종(?:특별자치시|시)?|"
    r"경기도?|강원(?:특별자치도|도)?|충청[남북]도|충[남북]|전라[남북]도|전[남북](?:특별자치도)?|"
    r"경상[남북]도|경[남북]|제주(?:특별자치도|도)?)"
)
_KR_NUM = r"\d{1,5}(?:-\d{1,5})?"
_KR_ADDRESS = (
    r"(?<![가-힣])"
    + _KR_PROVINCE
    + r"(?: {1,2}[가-힣]{1,6}[시군구]){0,2} {1,2}(?:[가-힣]{1,6}[읍면] {1,2})?"
    r"(?:[가-힣\d]{1,12}[로길] ?" + _KR_NUM + r"|[가-힣\d]{1,8}[동리가] ?" + _KR_NUM + r"(?:번지)?)"
    # "주로 3월", "안암동 5가": a unit or a district name, not a building number; but a particle or
    # copula may follow at once ("테헤란로 152입니다", "…194로 보내 주세요").
    r"(?:(?![\d가-힣])|(?=입니다|이다|이며|이고|에서|에|으로|로|의|은|는|을|를|과|와|까지))"
)
_JP_PREFECTURE = (
    r"(?:東京都|北海道|(?:大阪|京都)府|(?:青森|岩手|宮城|秋田|山形|福島|茨城|栃木|群馬|埼玉|千葉|"
    r"神奈川|新潟|富山|石川|福井|山梨|長野|岐阜|静岡|愛知|三重|滋賀|兵庫|奈良|和歌山|鳥取|島根|"
    r"岡山|広島|山口|徳島|香川|愛媛|高知|福岡|佐賀|長崎|熊本|大分|宮崎|鹿児島|沖縄)県)"
)
_JP_CHARS = r"[一-鿿々〆ヶぁ-んァ-ヴー]"
_JP_NUM = r"(?:\d{1,4}|[一二三四五六七八九十]{1,3})"
_JP_DASH = r"[-‐－−]"
_JP_ADDRESS = (
    _JP_PREFECTURE
    + r" ?(?:"
    + _JP_CHARS
    + r"{1,7}[市区町村郡] ?){1,3}"
    + _JP_CHARS
    + r"{0,10}"
    + _JP_NUM
    + r"(?:丁目(?:"
    + _JP_NUM
    + r"(?:番地?|"
    + _JP_DASH
    + r")(?:"
    + _JP_NUM
    + r"号?)?)?"
    + r"|番地?(?:"
    + _JP_NUM
    + r"号|の\d{1,4})?"
    + r"|(?:"
    + _JP_DASH
    + r"\d{1,4}){1,2}号?)(?!\d)"
)
_KR = re.compile(_KR_ADDRESS)
_JP = re.compile(_JP_ADDRESS)
# Anchors: every KR address starts with a 시/도 name, every JP one holds one of these characters.
_KR_PROV = re.compile(_KR_PROVINCE)
_JP_ANCHORS = ("都", "道", "府", "県")
# every KR address holds one: road or lot name + number
_KR_CUE = re.compile(r"[로길동리가] ?[0-9]")
_KR_CUE_CHARS = "로길동리가"
_POSTAL_CUES = ("〒", "郵便番号", "우편", "우)")  # every _POSTAL match starts with one of these

# English street addresses: house number + 1-4 capitalised street words + a street suffix, then the
# optional direction, unit, city, state and ZIP, so that the span covers the whole written address.
_EN_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|"
    r"Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Trail|Trl|Alley|Plaza|Loop|"
    r"Crescent|Close|Row|Pike|Broadway)"
)
_US_STATES = (
    r"AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|"
    r"NM|NY|NC|ND|OH|OK|OR|PA|PR|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|Alabama|Alaska|Arizona|"
    r"Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawaii|Idaho|Illinois|"
    r"Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|"
    r"Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York|"
    r"North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina|"
    r"South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|West Virginia|Wisconsin|Wyoming"
)
_EN_WORD = r"(?:[A-Z][A-Za-z'\-]{0,19}|\d{1,3}(?:st|nd|rd|th)|[NSEW]\.)"
# starts with the digit class (fast skipping); the left boundary is checked in Python
_EN_ADDRESS = re.compile(
    r"\d{1,6}[A-Z]?(?:-\d{1,4})? (?:" + _EN_WORD + r" ){1,4}" + _EN_SUFFIX + r"\.?(?![A-Za-z])"
    r"(?: (?:N|S|E|W|NE|NW|SE|SW)\.?(?![A-Za-z]))?"
    r"(?P<unit>,? (?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|Rm|Room|Bldg|#)\.?"
    r" ?#?[A-Za-z0-9\-]{1,6}(?![A-Za-z0-9])"
    r"|, [A-Z][a-z]{2,9} Floor)?"
    r"(?:, (?P<city>[A-Z][a-z][A-Za-z.'\-]{0,19}(?: [A-Z][a-z][A-Za-z.'\-]{0,19}){0,2}))?"
    r"(?:,? (?P<state>" + _US_STATES + r")(?![A-Za-z]))?"
    r"(?:,? (?P<zip>\d{5}(?:-\d{4})?(?![\d\-])|[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}(?![A-Za-z0-9])))?"
    r"(?:, (?:USA|U\.S\.A\.|United States)(?![A-Za-z]))?"
)
# a gate: no lookbehind, so the engine skips fast
_EN_SUFFIX_CUE = re.compile(_EN_SUFFIX + r"(?![A-Za-z])")
_EN_LEFT = frozenset("#-/.,")
# licence notices name the Free Software Foundation's office (59 Temple Place, 51 Franklin Street,
# 675 Mass Ave)
_EN_BOILERPLATE = re.compile(r"Free Software Foundation", re.IGNORECASE)
_EN_CUE = re.compile(
    r"live[sd]? (?:at|on)|address|located at|moved to|resides? at|deliver(?:ed|y)? to|ship to|"
    r"send (?:it )?to|mail(?:ed)? to|reach (?:me|us) at|home (?:at|is)",
    re.IGNORECASE,
)


class PostalDetector:
    """Postal codes after 〒 / 郵便番号 (Japan, NNN-NNNN) or 우편번호 (Korea, NNNNN)."""

    name = "postal@1"
    type = "POSTAL"

    def __init__(self, settings: DetectSettings) -> None:
        del settings  # no options

    def find(self, text: str) -> list[Hit]:
        """POSTAL hits in ``text`` (the span covers the code, not the marker).

        >>> PostalDetector(DetectSettings()).find("〒100-0001 東京都")
        [Hit(type='POSTAL', start=1, end=9, validated=None, detector='postal_jp@1')]
        """
        hits: list[Hit] = []
        for cue in _POSTAL_CUES:
            if cue[0] not in text:
                continue
            pos = 0
            while (p := text.find(cue, pos)) != -1:
                pos = p + 1
                m = _POSTAL.match(text, p)
                hit = self._hit(m) if m is not None else None
                if hit is not None:
                    hits.append(hit)
        hits.sort(key=lambda h: h.start)
        return hits

    def _hit(self, m: re.Match[str]) -> Hit | None:
        """The hit for one marker + code match, or ``None`` when the code has the wrong length."""
        n = len(digits_of(m.group("code")))
        if m.group("jp"):
            if n != 7:
                return None
            region = "jp"
        else:
            if n not in (5, 6) or "ー" in m.group("code"):
                return None
            region = "kr"
        return Hit(self.type, m.start("code"), m.end("code"), None, f"postal_{region}@1")


class AddressDetector:
    """Street addresses: KR 시/도 + 시/군/구 + road (…로/길) + building number, JP prefecture +
    municipality + town + 丁目/番地/番/号 or hyphenated block numbers, or English house number +
    street + suffix with the unit, city, state and ZIP that follow (without any of those: only after
    an address word such as "live at" or "address")."""

    name = "address@1"
    type = "ADDRESS"

    def __init__(self, settings: DetectSettings) -> None:
        self._window = settings.context_window

    def find(self, text: str) -> list[Hit]:
        """ADDRESS hits in ``text``.

        >>> detector = AddressDetector(DetectSettings())
        >>> [h.end for h in detector.find("서울특별시 강남구 테헤란로 152 3층")]
        [18]
        """
        found: dict[int, tuple[int, str]] = {}
        # five one-character searches spare the regex scan most texts
        kr = any(c in text for c in _KR_CUE_CHARS)
        # a road/lot name + number, then look back for a 시/도
        for cue in _KR_CUE.finditer(text) if kr else ():
            for prov in _KR_PROV.finditer(text, max(0, cue.start() - 64), cue.start()):
                if (m := _KR.match(text, prov.start())) is not None:
                    found[prov.start()] = max(found.get(prov.start(), (0, "")), (m.end(), "kr"))
        for char in _JP_ANCHORS if any(c in text for c in "市区町村郡") else ():
            pos = 0
            while (p := text.find(char, pos)) != -1:
                pos = p + 1
                # prefecture names are 2-3 characters + 都道府県
                for q in range(max(0, p - 3), p - 1):
                    if (m := _JP.match(text, q)) is not None:
                        found[q] = max(found.get(q, (0, "")), (m.end(), "jp"))
        if _EN_SUFFIX_CUE.search(text) is not None:
            for m in _EN_ADDRESS.finditer(text):
                if m.start() and (
                    (text[m.start() - 1].isascii() and text[m.start() - 1].isalnum())
                    or text[m.start() - 1] in _EN_LEFT
                ):
                    continue
                if window_has(_EN_BOILERPLATE, text, m.start(), 48):
                    continue
                whole = m.group("unit") or m.group("city") or m.group("state") or m.group("zip")
                if whole or window_has(_EN_CUE, text, m.start(), self._window):
                    found[m.start()] = max(found.get(m.start(), (0, "")), (m.end(), "en"))
        hits: list[Hit] = []
        last_end = -1
        for start, (end, region) in sorted(found.items()):
            # nested matches ("경기" inside "경기도 …" at the same start) collapse
            if start >= last_end:
                hits.append(Hit(self.type, start, end, None, f"address_{region}@1"))
                last_end = end
        return hits
