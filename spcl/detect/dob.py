"""DOB: calendar dates written beside a birth context word.

Dates are everywhere in web text; one is a date of birth only when a birth word occurs in the
``context_window`` characters before it (생년월일, 생일, 출생, 生年月日, 誕生日, born, DOB, date of
birth, birthday, "(b. "), a "was born" word of running prose earlier in the same sentence (born,
태어, 출생, 生まれ, 誕生; up to 64 characters before), or a birth word right after it (…生まれ, …生,
…생, "…3일에 태어났습니다", "…2日に生まれた"). Dates with a two-digit year ("92.07.03", "92년 7월
3일", "920703") count only after a field label or right before 生/생. ``validated`` is the calendar
check: ``True`` for a real date, ``False`` for an impossible one such as Feb 30 (reported only with
``keep_invalid``).
"""

from __future__ import annotations

import re

from spcl.config import DetectSettings
from spcl.detect._common import after_has, window_has
from spcl.detect.base import Hit
from spcl.detect.validators import digits_of, is_calendar_date

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = (
    r"(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_ORD = r"(?:st|nd|rd|th)?"
# (base year, last year number) of each Japanese era.
_ERAS = {
    "明治": (1867, 45),
    "大正": (1911, 15),
    "昭和": (1925, 64),
    "平成": (1988, 31),
    "令和": (2018, 99),
}

_DATE = re.compile(
    r"(?<!\d)(?<!\d[-./])(?:"
    r"(?P<a_y>(?:19|20)\d{2})(?P<a_s>[-/.]|\. )(?P<a_m>\d{1,2})(?P=a_s)(?P<a_d>\d{1,2})(?![-/.]\d)"
    r"|(?P<c_y>\d{4}) ?[年년] ?(?P<c_m>\d{1,2}) ?[月월] ?(?P<c_d>\d{1,2}) ?[日일]"
    r"|(?P<b_ymd>(?:19|20)\d{6})"
    r"|(?P<f_a>\d{1,2})(?P<f_s>[-/.])(?P<f_b>\d{1,2})(?P=f_s)(?P<f_y>(?:19|20)\d{2})"
    r"|(?P<h_d>\d{1,2})" + _ORD + r" (?:of )?(?P<h_m>" + _MONTH + r")\.?,? (?P<h_y>\d{4})"
    # short forms with a two-digit year (only beside a field label or 生/생: see _SHORT)
    r"|(?P<t_y>\d{2})(?P<t_s>[-/.]|\. )(?P<t_m>\d{1,2})(?P=t_s)(?P<t_d>\d{1,2})(?![-/.]\d)"
    r"|(?P<k_y>\d{2}) ?[年년] ?(?P<k_m>\d{1,2}) ?[月월] ?(?P<k_d>\d{1,2}) ?[日일]"
    r"|(?P<s_ymd>\d{6})(?![-‐－]\d)"
    r")(?!\d)"
    r"|(?P<e_era>明治|大正|昭和|平成|令和) ?(?P<e_y>元|\d{1,2}) ?年 ?(?P<e_m>\d{1,2}) ?月"
    r" ?(?P<e_d>\d{1,2}) ?日"
    r"|(?<![A-Za-z])(?P<g_m>"
    + _MONTH
    + r")\.? (?P<g_d>\d{1,2})"
    + _ORD
    + r",? (?P<g_y>\d{4})(?!\d)"
)
_BEFORE = re.compile(
    r"생년월일|생일|生年月日|誕生日|birth|d\.?o\.?b(?![a-z])|\(b\. ?", re.IGNORECASE
)
# Field labels above; words of running prose that say "was born" below: they count farther from the
# date, but only within its sentence ("He was born in 1950. On 14 May 1983 he married." is no DOB).
_BORN = re.compile(r"born|태어|출생|生まれ|誕生|出生", re.IGNORECASE)
_BORN_WINDOW = 64
_SENTENCE_END = re.compile(r"[。！？\n]|[.!?](?:\s|$)")
# Right after the date: 生まれ/生/생/출생 at once ("1990年1月2日生まれ", "1992년생"), or a birth
# word a few characters on ("1992년 7월 3일에 태어났습니다", "1968年11月2日に生まれた", "1983-05-14,
# born").
_AFTER_MARK = re.compile(
    r" ?(?:生まれ|生(?!産|活|命|放送|成|徒)|생(?!방송|산|활|각|명|존|중|물|선|기|계)|출생)"
)
_AFTER = re.compile(_AFTER_MARK.pattern + r"|.{0,10}?(?:태어|출생|出生|生まれ|誕生|(?i:born))")
# Groups of the short forms (two-digit year: "92.07.03", "92년 7월 3일", "920703"): a date of birth
# only after a field label (생년월일, DOB …) or right before 生/생 ("92년 7월 3일생"), never from
# prose words.
_SHORT = ("t_y", "k_y", "s_ymd")
_AFTER_WINDOW = 16
# Where dates are searched: after each of these substrings (together they cover _BEFORE in the usual
# casings); _BEFORE itself then checks the window of every date found.
_BEFORE_CUES = ("생년월일", "생일", "출생", "태어", "生年月日", "誕生日", "生まれ", "出生",
                "born", "Born", "BORN", "birth", "Birth", "BIRTH", "dob", "DOB", "Dob", "DoB",
                "d.o.b", "D.O.B", "D.o.B", "(b.")  # fmt: skip
# Before each of these substrings too (a date followed by a birth word).
_AFTER_CUES = ("태어", "출생", "生まれ", "誕生", "出生", "born", "Born")
_AFTER_MARKS = ("生", "생")
# Every cue once, grouped by its first character: (cue, search after it, search before it).
_CUES_BY_FIRST: dict[str, list[tuple[str, bool, bool]]] = {}
for _cue in dict.fromkeys((*_BEFORE_CUES, *_AFTER_CUES)):
    _CUES_BY_FIRST.setdefault(_cue[0], []).append((_cue, _cue in _BEFORE_CUES, _cue in _AFTER_CUES))
_MAX_DATE_LEN = 40


def _n(value: str) -> int:
    return int(digits_of(value))


def _short_year(yy: int) -> int:
    """The year of a two-digit birth year (00-29: 2000s, else 1900s), for the calendar check."""
    return 2000 + yy if yy < 30 else 1900 + yy


def _date_ok(m: re.Match[str]) -> bool:
    """Calendar check of one match, whatever form it took."""
    g = m.group
    if g("a_y"):
        return is_calendar_date(_n(g("a_y")), _n(g("a_m")), _n(g("a_d")))
    if g("c_y"):
        return is_calendar_date(_n(g("c_y")), _n(g("c_m")), _n(g("c_d")))
    if g("b_ymd"):
        d = digits_of(g("b_ymd"))
        return is_calendar_date(int(d[:4]), int(d[4:6]), int(d[6:]))
    if g("f_y"):  # day/month order is ambiguous: either reading will do
        y, a, b = _n(g("f_y")), _n(g("f_a")), _n(g("f_b"))
        return is_calendar_date(y, b, a) or is_calendar_date(y, a, b)
    if g("h_y"):
        return is_calendar_date(_n(g("h_y")), _MONTHS.get(g("h_m")[:3].lower(), 0), _n(g("h_d")))
    if g("g_y"):
        return is_calendar_date(_n(g("g_y")), _MONTHS.get(g("g_m")[:3].lower(), 0), _n(g("g_d")))
    if g("t_y") or g("k_y"):
        y = _short_year(_n(g("t_y") or g("k_y")))
        return is_calendar_date(y, _n(g("t_m") or g("k_m")), _n(g("t_d") or g("k_d")))
    if g("s_ymd"):
        d = digits_of(g("s_ymd"))
        return is_calendar_date(_short_year(int(d[:2])), int(d[2:4]), int(d[4:]))
    base, last = _ERAS[g("e_era")]
    year = 1 if g("e_y") == "元" else _n(g("e_y"))
    return 1 <= year <= last and is_calendar_date(base + year, _n(g("e_m")), _n(g("e_d")))


class DobDetector:
    """Dates of birth: a date (ISO, dotted, slashed, CJK, Japanese era, English) beside a birth
    word."""

    name = "dob@1"
    type = "DOB"

    def __init__(self, settings: DetectSettings) -> None:
        self._keep_invalid = settings.keep_invalid
        self._window = settings.context_window

    def find(self, text: str) -> list[Hit]:
        """DOB hits in ``text``.

        >>> DobDetector(DetectSettings()).find("생년월일: 1990년 1월 2일")
        [Hit(type='DOB', start=6, end=17, validated=True, detector='dob@1')]
        """
        n = len(text)
        # where a date may lie, merged below so each char is scanned once
        windows: list[tuple[int, int]] = []
        reach = max(self._window, _BORN_WINDOW) + _MAX_DATE_LEN
        for first, cues in _CUES_BY_FIRST.items():
            # one one-character search per first character, far cheaper than words
            if first not in text:
                continue
            for cue, look_after, look_before in cues:
                pos = 0
                while (p := text.find(cue, pos)) != -1:
                    pos = p + 1
                    if look_after:
                        windows.append((p + len(cue), min(n, p + len(cue) + reach)))
                    if look_before:
                        windows.append((max(0, p - _AFTER_WINDOW - _MAX_DATE_LEN), min(n, p + 2)))
        for mark in _AFTER_MARKS:
            pos = 0
            while (p := text.find(mark, pos)) != -1:
                pos = p + 1
                q = p - 2 if p >= 2 and text[p - 1] == " " else p - 1
                if q >= 0 and (text[q] in "日일" or text[q].isdecimal()):
                    windows.append((max(0, q - _MAX_DATE_LEN), min(n, p + 2)))
        spans: dict[tuple[int, int], re.Match[str]] = {}
        windows.sort()
        start, end = -1, -1
        for ws, we in windows:
            if ws <= end:
                end = max(end, we)
                continue
            if end > start:
                self._collect(text, start, end, spans)
            start, end = ws, we
        if end > start:
            self._collect(text, start, end, spans)
        hits: list[Hit] = []
        for (s, e), m in sorted(spans.items()):
            if not self.in_birth_context(text, m):
                continue
            valid = _date_ok(m)
            if valid or self._keep_invalid:
                hits.append(Hit(self.type, s, e, valid, self.name))
        return hits

    def in_birth_context(self, text: str, m: re.Match[str]) -> bool:
        """True when the date ``m`` of ``text`` is written as a date of birth (see the module
        docstring)."""
        s, e = m.span()
        if window_has(_BEFORE, text, s, self._window):
            return True
        if any(m.group(g) for g in _SHORT):
            return after_has(_AFTER_MARK, text, e, 5)
        return self._born_before(text, s) or after_has(_AFTER, text, e, _AFTER_WINDOW)

    @staticmethod
    def _born_before(text: str, start: int) -> bool:
        """True when a "born" word lies within ``_BORN_WINDOW`` characters before ``start``, in
        its sentence."""
        cue_end = -1
        for m in _BORN.finditer(text, max(0, start - _BORN_WINDOW), start):
            cue_end = m.end()
        return cue_end >= 0 and _SENTENCE_END.search(text, cue_end, start) is None

    @staticmethod
    def _collect(
        text: str, start: int, end: int, spans: dict[tuple[int, int], re.Match[str]]
    ) -> None:
        """Dates in ``text[start:end]`` whose end the lookaheads could fully see."""
        for m in _DATE.finditer(text, start, end):
            if m.end() + 2 <= end or end == len(text):
                spans.setdefault(m.span(), m)
