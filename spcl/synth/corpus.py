"""A seeded, synthetic web-like corpus in Japanese, Korean and English with planted PII.

Used for the bundled sample (``data/sample/``), the integration tests and the benchmarks. Every
document is built from fixed sentence banks written for spcl (no third-party text), so the corpus
and its licence are ours (Apache-2.0). Planted values are synthetic: RRNs, My Numbers and card
numbers are generated with valid check digits so the validators fire; e-mails use mailbox.* domains
(the reserved documentation domains example.com/.org/.net/.jp are allow-listed by the e-mail
detector, so they would pass unmasked).

>>> docs = list(generate_corpus(3, seed=1))
>>> [d["id"] for d in docs] == [d["id"] for d in generate_corpus(3, seed=1)]
True
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any

from spcl.detect.validators import luhn_check_digit, mynumber_check_digit, rrn_check_digit
from spcl.io.jsonl import write_jsonl

FILLER: dict[str, list[str]] = {
    "ja": [
        "今日は朝から雨が降っていたので、駅前の喫茶店で少し休んでから会社に向かいました。",
        "この記事では、家庭でできる簡単なパンの作り方を写真付きで紹介します。",
        "新しいスマートフォンはバッテリーの持ちが良く、カメラの性能も大きく向上しています。",
        "週末は家族で近くの公園に出かけ、桜の花を見ながらお弁当を食べました。",
        "プログラミングを学び始めて三か月が経ち、ようやく簡単なアプリが作れるようになりました。",
        "地域の図書館では、子ども向けの読み聞かせ会が毎月第二土曜日に開かれています。",
        "京都の古い町並みを歩くと、季節ごとに違った表情を見せてくれます。",
        "このレシピは砂糖の量を控えめにしているので、甘いものが苦手な方にもおすすめです。",
        "会議の資料は前日までに共有フォルダへアップロードしてください。",
        "最近はリモートワークが増え、自宅の作業環境を見直す人が多くなっています。",
        "電車の遅延により、到着が予定より三十分ほど遅れる見込みです。",
        "夏休みの自由研究として、近所の川に住む生き物を観察しました。",
        "このカメラは軽量で持ち運びやすく、旅行にぴったりです。",
        "市役所の窓口は平日の午前九時から午後五時まで開いています。",
        "ソフトウェアの更新により、いくつかの不具合が修正されました。",
    ],
    "ko": [
        "오늘은 아침부터 비가 와서 회사 근처 카페에서 잠시 쉬었다가 출근했습니다.",
        "이 글에서는 집에서 쉽게 만들 수 있는 빵 레시피를 사진과 함께 소개합니다.",
        "새로 나온 스마트폰은 배터리가 오래가고 카메라 성능도 크게 좋아졌습니다.",
        "주말에는 가족과 함께 근처 공원에 가서 벚꽃을 보며 도시락을 먹었습니다.",
        "프로그래밍을 배우기 시작한 지 석 달이 지나 이제 간단한 앱을 만들 수 있게 되었습니다.",
        "동네 도서관에서는 매달 둘째 토요일마다 어린이를 위한 책 읽어주기 행사가 열립니다.",
        "경주의 오래된 거리를 걷다 보면 계절마다 다른 풍경을 볼 수 있습니다.",
        "이 요리법은 설탕을 적게 넣어서 단 음식을 좋아하지 않는 분들께도 추천합니다.",
        "회의 자료는 전날까지 공유 폴더에 올려 주시기 바랍니다.",
        "최근 재택근무가 늘면서 집의 작업 환경을 바꾸는 사람이 많아지고 있습니다.",
        "지하철 지연으로 도착이 예정보다 삼십 분 정도 늦어질 것 같습니다.",
        "여름방학 과제로 동네 하천에 사는 생물을 관찰했습니다.",
        "이 카메라는 가볍고 휴대하기 편해서 여행용으로 딱 좋습니다.",
        "구청 민원실은 평일 오전 9시부터 오후 6시까지 운영합니다.",
        "소프트웨어 업데이트로 몇 가지 오류가 수정되었습니다.",
    ],
    "en": [
        (
            "It rained all morning, so I stopped at a cafe near the station before heading to the"
            " office."
        ),
        "In this post we share an easy bread recipe that anyone can make at home, with photos.",
        "The new phone has a battery that lasts all day and a much better camera than last year.",
        "On the weekend we walked to the park and had a picnic under the cherry trees.",
        "Three months into learning to code, I can finally build a small app on my own.",
        "The local library runs a story time for children on the second Saturday of every month.",
        "Walking through the old town shows a different face of the city in every season.",
        "This recipe uses less sugar, so it is a good choice for people who do not like sweets.",
        "Please upload the meeting slides to the shared folder by the day before.",
        "With more people working from home, many are rethinking their desk setup.",
        "Because of a signal failure, the train is expected to arrive about thirty minutes late.",
        "For a summer project, the kids watched the insects and fish living in the creek.",
        "This camera is light and easy to carry, which makes it perfect for travel.",
        "The city hall service desk is open on weekdays from nine to five.",
        "The software update fixes several bugs and improves startup time.",
    ],
}

SENSITIVE: dict[str, list[str]] = {
    "ja": [
        "{name}さんは昨年、胃がんの手術を受けて現在も通院しながら治療を続けている。",
        "警察は{name}容疑者(34)を詐欺の疑いで逮捕したと発表した。",
        "私の母はうつ病と診断され、半年ほど入院していました。",
        "{name}被告は懲役三年の判決を受けた。",
    ],
    "ko": [
        "{name} 씨는 지난해 위암 수술을 받고 지금도 통원 치료를 받고 있다.",
        "경찰은 사기 혐의로 {name}(34)씨를 구속했다고 밝혔다.",
        "저희 어머니는 우울증 진단을 받고 반년 정도 입원하셨어요.",
        "{name} 피고인은 징역 3년을 선고받았다.",
    ],
    "en": [
        "{name} underwent surgery for stomach cancer last year and is still in treatment.",
        "Police said {name}, 34, was arrested on suspicion of fraud.",
        "My mother was diagnosed with depression and spent six months in hospital.",
        "{name} was sentenced to three years in prison for bribery.",
    ],
}

DISTRACTORS: dict[str, list[str]] = {
    "ja": [
        "投稿日時 2023-11-05 14:32:10",
        "注文番号 20231105-0012345 の商品は発送済みです。",
        "お問い合わせはフリーダイヤル 0120-123-456 まで。",
        "ISBN 978-4-06-512345-6 の本を購入した。",
    ],
    "ko": [
        "작성일 2023-11-05 14:32:10",
        "주문번호 20231105-0012345 상품이 발송되었습니다.",
        "고객센터 1588-1234로 문의해 주세요.",
        "ISBN 978-89-12345-67-8 도서를 주문했다.",
    ],
    "en": [
        "Posted 2023-11-05 14:32:10 UTC",
        "Order 20231105-0012345 has shipped.",
        "Request id 550e8400-e29b-41d4-a716-446655440000",
        "ISBN 978-0-306-40615-7 is out of print.",
    ],
}

NAMES = {
    "ja": ["佐藤花子", "鈴木一郎", "高橋美咲", "田中健太"],
    "ko": ["김민준", "이서연", "박지훈", "최수아"],
    "en": ["John Carter", "Emily Stone", "Michael Reed", "Sarah Kim"],
}


def _digits(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randrange(10)) for _ in range(n))


def valid_rrn(rng: random.Random) -> str:
    """A synthetic pre-2020 Korean RRN with a valid check digit, formatted YYMMDD-GNNNNNC."""
    yy, mm, dd = rng.randrange(60, 100), rng.randrange(1, 13), rng.randrange(1, 29)
    body = f"{yy:02d}{mm:02d}{dd:02d}{rng.choice('12')}{_digits(rng, 5)}"
    return f"{body[:6]}-{body[6:]}{rrn_check_digit(body)}"


def valid_mynumber(rng: random.Random) -> str:
    """A synthetic Japanese My Number with a valid check digit, formatted NNNN NNNN NNNN."""
    body = _digits(rng, 11)
    number = body + str(mynumber_check_digit(body))
    return f"{number[:4]} {number[4:8]} {number[8:]}"


def valid_card(rng: random.Random) -> str:
    """A synthetic 16-digit Visa/Mastercard number passing Luhn, in 4-digit groups."""
    body = rng.choice(["4", "51", "53", "55"])
    body += _digits(rng, 15 - len(body))
    number = body + str(luhn_check_digit(body))
    return "-".join(number[i : i + 4] for i in range(0, 16, 4))


def _pii_sentences() -> dict[str, dict[str, Callable[[random.Random], str]]]:
    return {
        "ja": {
            "PHONE": lambda r: f"連絡先は 090-{_digits(r, 4)}-{_digits(r, 4)} です。",
            "EMAIL": lambda r: f"メールは user{_digits(r, 3)}@mailbox.jp までお願いします。",
            "MYNUMBER": lambda r: f"マイナンバー {valid_mynumber(r)} を記入してください。",
            "CARD": lambda r: f"カード番号 {valid_card(r)} で支払いました。",
            "ACCOUNT": lambda r: f"振込先は みずほ銀行 渋谷支店 普通口座 {_digits(r, 7)} です。",
            "DOB": lambda r: (
                f"生年月日 19{r.randrange(60, 99)}年{r.randrange(1, 13)}月{r.randrange(1, 29)}日"
            ),
            "POSTAL": lambda r: f"〒{_digits(r, 3)}-{_digits(r, 4)} 東京都千代田区千代田1-1",
        },
        "ko": {
            "PHONE": lambda r: f"연락처는 010-{_digits(r, 4)}-{_digits(r, 4)}입니다.",
            "EMAIL": lambda r: f"이메일은 user{_digits(r, 3)}@mailbox.com 으로 보내 주세요.",
            "RRN": lambda r: f"주민등록번호 {valid_rrn(r)} 확인 부탁드립니다.",
            "CARD": lambda r: f"카드번호 {valid_card(r)} 로 결제했습니다.",
            "ACCOUNT": lambda r: (
                f"입금 계좌는 국민은행 {_digits(r, 6)}-{_digits(r, 2)}-{_digits(r, 6)} 입니다."
            ),
            "DOB": lambda r: (
                f"생년월일: 19{r.randrange(60, 99)}년 {r.randrange(1, 13)}월 {r.randrange(1, 29)}일"
            ),
            "ADDRESS": lambda r: f"주소는 서울특별시 강남구 테헤란로 {r.randrange(1, 500)} 입니다.",
        },
        "en": {
            "PHONE": lambda r: f"Call me at +1 (415) 555-{_digits(r, 4)} after six.",
            "EMAIL": lambda r: f"Write to user{_digits(r, 3)}@mailbox.org for details.",
            "CARD": lambda r: f"I paid with card {valid_card(r)} yesterday.",
            "DOB": lambda r: (
                f"Date of birth: {r.randrange(1, 13):02d}/{r.randrange(1, 29):02d}/"
                f"19{r.randrange(60, 99)}"
            ),
        },
    }


def generate_corpus(n: int, seed: int = 0, mean_bytes: int = 1500) -> Iterator[dict[str, Any]]:
    """Yield ``n`` documents ``{id, url, lang, text, planted}`` of about ``mean_bytes`` UTF-8 bytes
    each.

    ``planted`` lists the PII types put in (and ``SENSITIVE`` for a sensitive-topic sentence).

    About 30 % of documents carry one or two planted PII sentences, 10 % a sensitive-topic sentence
    about a named person, and 20 % a look-alike (timestamp, order number, company number, ISBN,
    UUID).
    """
    rng = random.Random(seed)
    pii = _pii_sentences()
    for i in range(n):
        lang = rng.choices(("ja", "ko", "en"), weights=(4, 4, 2))[0]
        target = max(200, int(rng.gauss(mean_bytes, mean_bytes / 3)))  # UTF-8 bytes
        sentences: list[str] = []
        planted: list[str] = []
        while sum(len(s.encode()) for s in sentences) < target:
            sentences.append(rng.choice(FILLER[lang]))
        if rng.random() < 0.3:
            for kind in rng.sample(sorted(pii[lang]), k=rng.choice((1, 1, 2))):
                sentences.insert(rng.randrange(len(sentences) + 1), pii[lang][kind](rng))
                planted.append(kind)
        if rng.random() < 0.1:
            sentence = rng.choice(SENSITIVE[lang]).format(name=rng.choice(NAMES[lang]))
            sentences.insert(rng.randrange(len(sentences) + 1), sentence)
            planted.append("SENSITIVE")
        if rng.random() < 0.2:
            sentences.insert(rng.randrange(len(sentences) + 1), rng.choice(DISTRACTORS[lang]))
        sep = " " if lang == "en" else ("" if lang == "ja" else " ")
        yield {
            "id": f"sample-{seed}-{i:06d}",
            "url": f"https://example.com/{lang}/{i}",
            "lang": lang,
            "text": sep.join(sentences),
            "planted": sorted(planted),
        }


def _without(docs: list[dict[str, Any]], drop: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """The documents without the ``drop`` fields (ground truth kept out of the files)."""
    return ({k: v for k, v in d.items() if k not in drop} for d in docs)


BAD_LINES: tuple[bytes, ...] = (
    b'{"id": "bad-malformed", "text": "unterminated',
    b'{"id": "bad-utf8", "text": "\xff\xfe broken bytes"}',
    b'{"id": "bad-missing-text", "body": "no text field"}',
    b'{"id": "bad-text-not-string", "text": 12345}',
    b'{"id": "bad-empty", "text": "   "}',
    b'{"id": "bad-nul", "text": "abc\\u0000def"}',
    b'["not", "an", "object"]',
    b'{"id": "bad-surrogate", "text": "lone \\ud800 surrogate"}',
)
"""One record of each kind of bad input the job must quarantine (never drop)."""


def write_sample_corpus(out_dir: str, seed: int = 0) -> dict[str, int]:
    """Write the bundled sample: JSONL.gz, JSONL.zst, Parquet, a file of bad records, a truncated
    gzip.

    Returns records per file. Planted PII types are left out of the files (they are ground truth,
    regenerated by ``generate_corpus`` with the same seed in tests).
    """
    import gzip
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(out_dir, exist_ok=True)
    docs = list(generate_corpus(3000, seed))
    counts = {
        "crawl-0000.jsonl.gz": write_jsonl(
            f"{out_dir}/crawl-0000.jsonl.gz", _without(docs[:1500], ("planted",))
        ),
        "crawl-0001.jsonl.zst": write_jsonl(
            f"{out_dir}/crawl-0001.jsonl.zst", _without(docs[1500:2500], ("planted",))
        ),
    }
    rows = [{k: v for k, v in d.items() if k != "planted"} for d in docs[2500:]]
    pq.write_table(pa.Table.from_pylist(rows), f"{out_dir}/crawl-0002.parquet", compression="zstd")
    counts["crawl-0002.parquet"] = len(rows)
    with open(f"{out_dir}/crawl-0003-bad.jsonl", "wb") as fh:
        fh.write(b"\n".join(BAD_LINES) + b"\n")
    counts["crawl-0003-bad.jsonl"] = len(BAD_LINES)
    tail = [
        json.dumps({k: v for k, v in d.items() if k != "planted"}, ensure_ascii=False).encode()
        for d in generate_corpus(40, seed + 1)
    ]
    packed = gzip.compress(b"\n".join(tail) + b"\n", mtime=0)
    with open(f"{out_dir}/crawl-0004-truncated.jsonl.gz", "wb") as fh:
        fh.write(packed[: len(packed) // 2])
    return counts


if __name__ == "__main__":  # python -m spcl.synth.corpus data/sample
    import sys

    print(write_sample_corpus(sys.argv[1] if len(sys.argv) > 1 else "data/sample"))
