"""Identifiers as crawled text really holds them (``data/detect-eval/crawl.jsonl``).

Positives: one identifier per record, written the way HTML turned into text, forms and
anti-harvesting habits leave it — split by tags, written as character references (also escaped
twice), percent-encoded in a URL, as a literal ``\\u0040`` escape, mail with ``[at]``/``(at)``/`` at
`` and ``dot`` words, ideographic spaces, full-width digits and dashes, wrapped onto the next line
after a hyphen, cards written with dots, US numbers after the international ``001-`` prefix with an
extension. Negatives: look-alikes of the same shapes in the same settings — room, suite, part,
extension and order numbers shaped like an SSN, test data, documentation examples ("e.g.", "例えば",
"のように", "예:"), tables of numbers in separate cells, version quads and Luhn failures with dots,
"available at github.com", entity- and tag-laden text without identifiers.

Each record is a short page fragment (a contact block, a forum post, a table row, a JSON blob, a
URL, a form hint) in ja, ko or en. Every value is synthetic (random digits with valid check digits;
invented names and mailboxes); a pure function of ``seed``. Gold spans cover the whole written
value, the markup inside it included and the markup around it excluded.

    python -m tools.datasets.crawl_set --output data/detect-eval/crawl.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

SEED = 36
Make = Callable[[random.Random], tuple[str, str, str]]  # → (lang, text with "{v}", written value)


def _d(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _luhn_visa(rng: random.Random) -> str:
    body = "4" + _d(rng, 14)
    total = 0
    for i, ch in enumerate(reversed(body)):
        x = int(ch) * (2 if i % 2 == 0 else 1)
        total += x - 9 if x > 9 else x
    return body + str((10 - total % 10) % 10)


def _rrn(rng: random.Random) -> str:
    yy, mm, dd = rng.randint(60, 99), rng.randint(1, 12), rng.randint(1, 28)
    head = f"{yy:02d}{mm:02d}{dd:02d}{rng.choice('12')}{_d(rng, 5)}"
    s = sum(int(c) * w for c, w in zip(head, [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5], strict=True))
    return head + str((11 - s % 11) % 10)


def _ssn(rng: random.Random) -> str:
    return f"{rng.randint(101, 665):03d}-{rng.randint(10, 99):02d}-{rng.randint(1001, 9999):04d}"


def _kr_mobile(rng: random.Random) -> list[str]:
    return ["010", _d(rng, 4), _d(rng, 4)]


def _jp_mobile(rng: random.Random) -> list[str]:
    return [rng.choice(["090", "080", "070"]), _d(rng, 4), _d(rng, 4)]


_LOCALS = [
    "minji.park",
    "hong_gildong",
    "sato.yui",
    "k.tanaka88",
    "jlee2019",
    "seoyeon.kim",
    "mark.okafor",
    "yamamoto.k",
    "jiwoo_h",
    "dana.r.miles",
]
_DOMAINS = [
    "naver.com",
    "gmail.com",
    "daum.net",
    "yahoo.co.jp",
    "hanmail.net",
    "outlook.com",
    "docomo.ne.jp",
    "kakao.com",
    "protonmail.com",
    "nate.com",
]
_FULL = str.maketrans("0123456789-", "０１２３４５６７８９－")


def _mail(rng: random.Random) -> tuple[str, str]:
    return rng.choice(_LOCALS), rng.choice(_DOMAINS)


# ---- positives: one maker per family -------------------------------------------------------------


def _tags(rng: random.Random) -> tuple[str, str, str]:
    g = _kr_mobile(rng) if rng.random() < 0.5 else _jp_mobile(rng)
    tag = rng.choice(["b", "strong", "span", "em", "font"])
    opening = f'<{tag} class="hl">' if tag == "span" else f"<{tag}>"
    where = rng.randrange(3)
    parts = [*g]
    parts[where] = f"{opening}{parts[where]}</{tag}>"
    value = "-".join(parts)
    if where == 0:
        value = value[len(opening) :]  # the tag around the first group stands before the value
    if where == 2:
        value = value[: -len(f"</{tag}>")]
    return rng.choice(
        [
            (
                "ko",
                '<div class="contact">담당자 연락처: '
                + ("<" + opening[1:] if where == 0 else "")
                + "{v}"
                + (f"</{tag}>" if where == 2 else "")
                + " (평일 9시~6시)</div>",
                value,
            ),
            (
                "ja",
                "<p>お問い合わせは担当携帯 "
                + (opening if where == 0 else "")
                + "{v}"
                + (f"</{tag}>" if where == 2 else "")
                + " までお願いします。</p>",
                value,
            ),
        ]
    )


def _entity(rng: random.Random) -> tuple[str, str, str]:
    local, domain = _mail(rng)
    kind = rng.randrange(4)
    if kind == 0:
        value = f"{local}&#64;{domain}"
    elif kind == 1:
        value = f"{local}&#x40;{domain}"
    elif kind == 2:
        value = f"{local}&amp;#64;{domain}"
    else:
        g = _kr_mobile(rng)
        value = "&#45;".join(g)
        return "ko", "회원정보 &gt; 휴대전화: {v} &nbsp;&middot; 수정하기", value
    return rng.choice(
        [
            ("en", "Questions? Drop me a line at {v} &mdash; I usually reply within a day.", value),
            ("ko", "&lt;문의&gt; 이메일 {v} 로 보내주세요 &amp; 감사합니다", value),
            ("ja", "ご連絡は {v} まで&#12290;よろしくお願いします", value),
        ]
    )


def _percent(rng: random.Random) -> tuple[str, str, str]:
    local, domain = _mail(rng)
    value = f"{local}%40{domain}"
    return rng.choice(
        [
            ("en", "https://forum.example.org/profile?user=42&contact={v}&lang=en", value),
            ("ko", "링크: https://cafe.example.kr/join?email={v}&ref=main 에서 가입", value),
            ("ja", "申込URL https://form.example.jp/entry?mail={v}&step=2 を開いてください", value),
        ]
    )


def _escape(rng: random.Random) -> tuple[str, str, str]:
    local, domain = _mail(rng)
    value = f"{local}\\u0040{domain}"
    return rng.choice(
        [
            ("en", '{"author": "dana", "email": "{v}", "karma": 1204}', value),
            (
                "ko",
                '<script>var user = {"name": "\\uae40\\ubbfc\\uc9c0", "mail": "{v}"};</script>',
                value,
            ),
            ("ja", 'window.__STATE__={"contact":"{v}","pref":"tokyo"}', value),
        ]
    )


def _obfuscated(rng: random.Random) -> tuple[str, str, str]:
    local, domain = _mail(rng)
    name, _, tld = domain.partition(".")
    form = rng.randrange(4)
    if form == 0:
        value = f"{local} [at] {name} [dot] {tld.replace('.', ' [dot] ')}"
    elif form == 1:
        value = f"{local}(at){domain}"
    elif form == 2:
        value = f"{local} at {name} dot {tld.replace('.', ' dot ')}"
    else:
        value = f"{local} (at) {name} (dot) {tld.replace('.', ' (dot) ')}"
    return rng.choice(
        [
            ("en", "Email me: {v} (spam bots, go away)", value),
            ("ko", "메일 주소는 {v} 입니다 (스팸 방지)", value),
            ("ja", "メールは {v} へ（@を置き換えてください）", value),
        ]
    )


def _width(rng: random.Random) -> tuple[str, str, str]:
    g = _jp_mobile(rng) if rng.random() < 0.5 else _kr_mobile(rng)
    form = rng.randrange(4)
    if form == 0:
        value = "\u3000".join(g)
    elif form == 1:
        value = "-".join(g).translate(_FULL)
    elif form == 2:
        value = "ー".join(g)
    else:
        value = "−".join(g).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    return rng.choice(
        [
            ("ja", "【連絡先】携帯：{v}（平日のみ）", value),
            ("ko", "▶ 연락처 : {v} ◀ 문자 주세요", value),
            ("ja", "予約は電話{v}で受け付けています。", value),
        ]
    )


def _wrap(rng: random.Random) -> tuple[str, str, str]:
    if rng.random() < 0.5:
        g = _kr_mobile(rng)
        cut = rng.randrange(1, 3)
        value = "-".join(g[:cut]) + "-\n" + rng.choice(["", "  ", "    "]) + "-".join(g[cut:])
        return rng.choice(
            [
                (
                    "ko",
                    "판매자 정보 | 상호: 미소상회 | 대표 연락처 {v} | 사업장 소재지 부산",
                    value,
                ),
                ("ja", "連絡先として携帯番号 {v} を登録しました", value),
            ]
        )
    card = _luhn_visa(rng)
    groups = [card[i : i + 4] for i in range(0, 16, 4)]
    cut = rng.randrange(1, 4)
    value = "-".join(groups[:cut]) + "-\n" + "-".join(groups[cut:])
    return "en", "> my card number was {v} and it got charged twice, anyone else?", value


def _dots(rng: random.Random) -> tuple[str, str, str]:
    card = _luhn_visa(rng)
    value = ".".join(card[i : i + 4] for i in range(0, 16, 4))
    return rng.choice(
        [
            ("en", "Posted by guest: pls refund to card {v} exp 09/27 thx", value),
            ("ko", "결제 카드 {v} 로 환불 부탁드립니다", value),
            ("ja", "カード番号{v}で決済しました", value),
        ]
    )


def _us_intl(rng: random.Random) -> tuple[str, str, str]:
    area, exch = rng.choice(["212", "415", "646", "312", "206", "617"]), str(rng.randint(200, 999))
    value = f"001-{area}-{exch}-{_d(rng, 4)}"
    ext = rng.choice(["", " ext. " + _d(rng, 3), " x" + _d(rng, 2), " ext " + _d(rng, 4)])
    return rng.choice(
        [
            ("ko", "미국 지사 담당자: {v} (한국에서 걸 때)", value + ext),
            ("ja", "米国オフィス直通 {v} までご連絡ください", value + ext),
            ("en", "From Korea dial {v} to reach me directly.", value + ext),
        ]
    )


def _id_markup(rng: random.Random) -> tuple[str, str, str]:
    if rng.random() < 0.5:
        rrn = _rrn(rng)
        value = f"{rrn[:6]}&#45;{rrn[6:]}" if rng.random() < 0.5 else f"{rrn[:6]}-<b>{rrn[6:]}</b>"
        if value.endswith("</b>"):
            value = value[:-4]
        return (
            "ko",
            "신청서 &gt; 주민등록번호: {v}" + ("</b>" if "<b>" in value else "") + " 확인 완료",
            value,
        )
    ssn = _ssn(rng)
    value = ssn.replace("-", "&#8209;") if rng.random() < 0.5 else ssn.replace("-", "&ndash;")
    return "en", "Applicant&#39;s SSN: {v} (verified)", value


def _unplanned(rng: random.Random, i: int) -> tuple[str, str, str]:
    """The ``i``-th of eight forms written after the detectors were changed and scored once, with
    nothing changed after: full-width '@' and '.', spaced hyphens, a spaced '&#64;', a tag inside
    the domain, digits written as references, a dotted mobile number, a parenthesised prefix,
    upper-case AT/DOT words."""
    local, domain = _mail(rng)
    g, jp = _kr_mobile(rng), _jp_mobile(rng)
    forms = [
        ("ja", "メール：{v}（全角）", f"{local}＠{domain.replace('.', '．')}"),
        ("ko", "연락처 {v} 로 주세요", " - ".join(g)),
        ("en", "mail: {v} thanks", f"{local} &#64; {domain}"),
        ("ko", "이메일 {v}</b> 입니다", f"{local}@<b>{domain}"),
        ("ko", "휴대폰 {v} 문의", "&#48;&#49;&#48;-" + "-".join(g[1:])),
        ("ko", "전화 {v} 연락", ".".join(g)),
        ("ja", "携帯 {v} まで", "({}){}-{}".format(*jp)),
        ("en", "reach me at {v} anytime", f"{local} AT {domain.replace('.', ' DOT ')}"),
    ]
    return forms[i % len(forms)]


POSITIVE: dict[str, Make] = {
    "tags": _tags,
    "entity": _entity,
    "percent": _percent,
    "escape": _escape,
    "obfuscated_mail": _obfuscated,
    "width": _width,
    "wrap": _wrap,
    "card_dots": _dots,
    "us_001_ext": _us_intl,
    "id_markup": _id_markup,
}
TYPE_OF = {
    "tags": "PHONE",
    "entity": None,
    "percent": "EMAIL",
    "escape": "EMAIL",
    "obfuscated_mail": "EMAIL",
    "width": "PHONE",
    "wrap": None,
    "card_dots": "CARD",
    "us_001_ext": "PHONE",
    "id_markup": None,
    "unplanned": None,
}


def _type_of(family: str, value: str) -> str:
    """The gold type of a planted value (its family's type, or by its digits when a family mixes
    types)."""
    if TYPE_OF[family]:
        return TYPE_OF[family]
    if any(m in value for m in ("#64;", "#x40;", "@", "＠", " AT ")):  # &#64; &#x40; &amp;#64; …
        return "EMAIL"
    digits = sum(c.isdigit() for c in value.replace("&#45;", "").replace("&#8209;", ""))
    return {9: "SSN", 13: "RRN", 16: "CARD"}.get(digits, "PHONE")


# ---- negatives -----------------------------------------------------------------------------------


def _negatives(rng: random.Random) -> list[tuple[str, str, str]]:
    ssn = lambda: _ssn(rng)  # noqa: E731 - a fresh look-alike per template
    ph = lambda: "-".join(_jp_mobile(rng))  # noqa: E731
    kr = lambda: "-".join(_kr_mobile(rng))  # noqa: E731
    out = [
        ("shape_ssn", "en", f"<li>Room {ssn()} &ndash; east wing, 3rd floor</li>"),
        ("shape_ssn", "en", f"Replacement part number: {ssn()} (fits 2019&ndash;2021 models)"),
        ("shape_ssn", "en", f"Call the front desk and ask for extension {ssn()}."),
        ("shape_ssn", "en", f"Order no. {ssn()} was shipped on <b>May 3</b>."),
        ("shape_ssn", "en", f"Suite {ssn()}, Harbor Tower"),
        ("shape_ssn", "en", f"Item #{ssn()} is back in stock"),
        ("shape_ssn", "en", f"Unit {ssn()} &middot; 2 bed / 1 bath"),
        ("shape_ssn", "en", f"Model {ssn()} firmware notes"),
        (
            "test_data",
            "en",
            (
                f"Use {rng.randint(900, 999)}-7{rng.randint(0, 9)}-{_d(rng, 4)} as test data in the"
                " sandbox."
            ),
        ),
        ("test_data", "en", f"test data: ITIN 9{_d(rng, 2)}-7{_d(rng, 1)}-{_d(rng, 4)}"),
        ("test_data", "en", f"Sample SSN for the demo form (dummy): {ssn()}"),
        ("doc_example", "ja", f"電話番号は{ph()}のように半角で入力してください。"),
        ("doc_example", "ja", f"例えば {ph()} と入力します。"),
        ("doc_example", "ja", f"記入例：{ph()}"),
        ("doc_example", "ko", f"예: {kr()} 형식으로 입력하세요."),
        ("doc_example", "ko", f"휴대폰 번호(예시: {kr()})를 입력하세요"),
        (
            "doc_example",
            "en",
            f"Enter your phone number, e.g. ({rng.randint(201, 989)}) 555-{_d(rng, 4)}.",
        ),
        ("doc_example", "en", f"Phone (for example {rng.randint(201, 989)}-555-{_d(rng, 4)})"),
        ("doc_example", "ko", f'<label>전화번호</label> <input placeholder="예: {kr()}">'),
        ("not_mail", "en", "Source code is available at github.com and mirrored at gitlab.com."),
        ("not_mail", "en", "Look at this dot com bubble chart from 1999."),
        ("not_mail", "en", "We met at noon dot on time, then left at three."),
        ("not_mail", "en", '<img src="logo@2x.png"> Meet us at booth 12.'),
        ("not_mail", "en", "Prices start at 9.99 &amp; ship at no cost."),
        ("not_mail", "ko", "자세한 내용은 example [dot] kr 참고 (at your own risk)"),
        (
            "table",
            "ko",
            f"<tr><td>{_d(rng, 3)}</td><td>{_d(rng, 4)}</td><td>{_d(rng, 4)}</td></tr>",
        ),
        ("table", "ja", f"<td>0{_d(rng, 2)}</td><td>{_d(rng, 4)}</td><td>{_d(rng, 4)}</td>"),
        (
            "table",
            "en",
            f"<td>{_d(rng, 4)}</td><td>{_d(rng, 4)}</td><td>{_d(rng, 4)}</td><td>{_d(rng, 4)}</td>",
        ),
        ("table", "ko", f"<li>{_d(rng, 3)}</li><li>{_d(rng, 2)}</li><li>{_d(rng, 4)}</li>"),
        ("dots", "en", "Build 4111.2034.5519.0042 released (see changelog)"),
        ("dots", "en", f"Firmware {_d(rng, 4)}.{_d(rng, 4)}.{_d(rng, 4)}.{_d(rng, 3)}"),
        ("dots", "ja", f"バージョン {_d(rng, 4)}.{_d(rng, 4)}.{_d(rng, 4)}.{_d(rng, 4)} を適用"),
        (
            "entities",
            "en",
            "&copy; 2024 Example Inc. &middot; All rights reserved &middot; &#169; &#x2122;",
        ),
        ("entities", "ko", "가격: 12,000원 &amp; 배송비 무료 &lt;특가&gt; &#9733;&#9733;&#9733;"),
        ("entities", "ja", "&#12304;新着&#12305;春の特集 &raquo; 2024&#24180;4&#26376;"),
        ("entities", "en", f"Order total &#36;{rng.randint(10, 99)}.{_d(rng, 2)} &ndash; qty 3"),
        ("percent", "en", "https://shop.example.com/search?q=50%25%20off&page=2&sort=price%2Casc"),
        ("percent", "ko", "https://search.example.kr/?q=%ED%9C%B4%EB%8C%80%ED%8F%B0&size=20"),
        ("percent", "en", "Discount 30%40 items only? No: 30% on 40 items."),
        ("escape", "en", '{"title": "caf\\u00e9 menu", "price": "\\u0024 12"}'),
        ("escape", "ja", '{"name": "\\u6771\\u4eac", "code": "\\u0031\\u0033"}'),
        ("width", "ja", f"平成{rng.randint(1, 30)}年　第{rng.randint(1, 9)}回　会議"),
        ("width", "ja", "営業時間　１０：００ー１８：００　定休日　水曜"),
        ("width", "ja", "価格　１２，８００円　送料　５００円"),
        ("width", "ko", f"2024ー05ー0{rng.randint(1, 9)} 공지사항"),
        ("width", "ja", f"商品コード　ＡＢ－{_d(rng, 4)}－{_d(rng, 4)}"),
        (
            "wrap",
            "en",
            f"Steps 1-\n2 and 3-\n4 are optional; see section {_d(rng, 2)}-\n{_d(rng, 2)}.",
        ),
        ("wrap", "ko", f"2023-\n2024 시즌 결과: {_d(rng, 2)}-\n{_d(rng, 2)} 승리"),
        ("us_001", "en", f"Product ID 001-{_d(rng, 3)}-{_d(rng, 4)} ships in 2 days"),
        ("us_001", "ko", f"택배 송장 001-012-{_d(rng, 3)}-{_d(rng, 4)} 배송중"),
        ("us_001", "en", f"Lot 001-100-555-{_d(rng, 4)} recalled"),
        ("tags", "en", f"<b>Chapter {_d(rng, 2)}</b>-<i>{_d(rng, 4)}</i> notes"),
        ("tags", "ko", f"<span>재고</span> <b>{_d(rng, 3)}</b>개 남음 <i>{_d(rng, 2)}</i>% 할인"),
        ("tags", "ja", f"<em>第{_d(rng, 1)}章</em><br>ページ {_d(rng, 3)}-<b>{_d(rng, 3)}</b>"),
        ("doc_example", "ja", f"携帯番号（例：{ph()}）"),
        ("doc_example", "ko", f"예를 들어 {kr()} 처럼 하이픈을 넣어 주세요"),
        ("shape_ssn", "ko", f"호실 {ssn()} 예약 완료"),
        ("shape_ssn", "ja", f"品番 {ssn()} は在庫切れです"),
        ("shape_ssn", "en", f"Ref. {ssn()} - see attached invoice"),
        ("test_data", "en", f"Fake SSN {ssn()} (test)"),
    ]
    return out


def build(seed: int = SEED, per_family: int = 6) -> list[dict]:
    """The records of the set: ``per_family`` positives per family, then the negatives."""
    rng = random.Random(seed)
    records: list[dict] = []
    for family, make in POSITIVE.items():
        for i in range(per_family):
            lang, template, value = make(rng)
            start = template.index("{v}")
            text = template.replace("{v}", value, 1)
            records.append(
                {
                    "id": f"crawl-{family}-{i}",
                    "lang": lang,
                    "kind": "gold",
                    "text": text,
                    "spans": [
                        {"type": _type_of(family, value), "start": start, "end": start + len(value)}
                    ],
                    "tags": [f"family:{family}", "set:crawl"],
                }
            )
    for i in range(8):
        lang, template, value = _unplanned(rng, i)
        start = template.index("{v}")
        records.append(
            {
                "id": f"crawl-unplanned-{i}",
                "lang": lang,
                "kind": "gold",
                "text": template.replace("{v}", value, 1),
                "spans": [
                    {
                        "type": _type_of("unplanned", value),
                        "start": start,
                        "end": start + len(value),
                    }
                ],
                "tags": ["family:unplanned", "set:crawl"],
            }
        )
    for i, (family, lang, text) in enumerate(_negatives(rng)):
        records.append(
            {
                "id": f"crawl-neg-{i}",
                "lang": lang,
                "kind": "negative",
                "text": text,
                "spans": [],
                "tags": [f"family:{family}", "set:crawl"],
            }
        )
    return records


def main(argv: list[str] | None = None) -> int:
    """Write the set as JSONL."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", "-o", dest="out", required=True)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args(argv)
    with Path(args.out).open("w", encoding="utf-8") as fh:
        for rec in build(args.seed):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
