"""The synthetic PII extraction set: seeded, template-built Korean and English documents.

``generate(out, seed)`` writes ``train.jsonl`` (1,600: 1,280 ko / 320 en), ``validation.jsonl``
(200: 160 / 40) and ``test.jsonl`` (400: 320 / 80) plus ``manifest.json``. A record::

    {"id": "pii-train-00001", "lang": "ko", "source_text": "...",
     "entities": [{"type": "PERSON", "original": "..."}, ...], "target_tsv": "PERSON\\t...\\n..."}

``entities`` are de-duplicated ``(type, original)`` pairs in order of first appearance;
``target_tsv`` is the extractor's expected output for the document (empty for negatives). Every
value is synthetic: RRN and card numbers are built to **fail** their check digits, phone numbers are
placeholders (Korean ``010-0000-NNNN``, North American ``555-01NN``), e-mail addresses use reserved
example domains, names come from small fixed lists. Negative documents (about one in six) hold only
non-personal strings: company representative and toll-free numbers, product codes. The same seed
gives byte-identical split files.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from spcl.detect.validators import luhn_check_digit, rrn_check_digit
from spcl.extract.prompt import PROMPT_VERSION, build_messages
from spcl.io.jsonl import iter_jsonl, load_jsonl
from spcl.manifest import sha256_file, write_manifest

GENERATOR_VERSION = "1.0.0"
SPLITS: tuple[tuple[str, int, int], ...] = (
    ("train", 1280, 320),
    ("validation", 160, 40),
    ("test", 320, 80),
)
NEGATIVE_SHARE = 1 / 6

KO_SURNAMES = (
    "김",
    "이",
    "박",
    "최",
    "정",
    "강",
    "조",
    "윤",
    "장",
    "임",
    "한",
    "오",
    "서",
    "신",
    "권",
)
KO_GIVEN = (
    "가상", "예시", "민준", "서연", "지훈", "수빈", "도윤", "하은", "예준", "지우",
    "시우", "서윤", "주원", "하린", "지호", "채원", "현우", "다은", "준서", "유진",
)  # fmt: skip
KO_CITIES = (
    "서울특별시",
    "부산광역시",
    "대구광역시",
    "인천광역시",
    "광주광역시",
    "경기도 수원시",
    "강원도 춘천시",
)
KO_DISTRICTS = ("가상구", "예시구", "샘플구", "견본구", "모의구")
KO_ROADS = ("가람로", "누리길", "한빛로", "솔내로", "새별길", "마루로")
KO_BANKS = ("가상은행", "예시은행", "샘플저축은행", "견본은행")
KO_REL = ("어머니", "아버지", "남편", "아내", "아들", "딸", "배우자", "할머니", "할아버지", "동생")
EN_FIRST = (
    "Alex",
    "Jordan",
    "Taylor",
    "Morgan",
    "Casey",
    "Riley",
    "Jamie",
    "Avery",
    "Quinn",
    "Drew",
)
EN_LAST = ("Doe", "Roe", "Sample", "Specimen", "Testa", "Mockley", "Fictus", "Placer")
EN_STREETS = ("Example Avenue", "Sample Street", "Placeholder Road", "Specimen Lane", "Test Court")
EN_TOWNS = ("Springfield", "Riverton", "Fairview", "Lakeside")
EN_REL = ("mother", "father", "husband", "wife", "daughter", "spouse", "brother", "sister")
EN_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
EMAIL_DOMAINS = ("mailbox.com", "mailbox.org", "mailbox.net")
EMAIL_WORDS = ("user", "gasang", "yesi", "sample", "demo", "test", "contact", "mail")

KO_FRAGMENTS = (
    "신청인 {PERSON}의 주민등록번호는 {RRN}입니다.",
    "{PERSON} 고객님의 연락처는 {PHONE}입니다.",
    "생년월일: {DOB}.",
    "주소: {ADDRESS}.",
    "이메일 {EMAIL}로 회신 부탁드립니다.",
    "환불 계좌는 {BANK} {ACCOUNT} (예금주 {PERSON})입니다.",
    "결제 카드 번호 {CARD}로 승인되었습니다.",
    "보호자: {REL} {PERSON2}, 연락처 {PHONE2}.",
    "{PERSON} 님은 {REL} {PERSON2} 씨와 함께 방문했습니다.",
    "{PERSON}({DOB} 생) 님이 {ADDRESS}로 이사했습니다.",
)
KO_FILLERS = (
    "접수 번호는 별도로 안내됩니다.",
    "처리 결과는 영업일 기준 3일 이내에 알려 드립니다.",
    "문의 사항은 고객센터 {COMPANY_PHONE}로 연락 주세요.",
    "제품 코드 {PRODUCT}의 재고를 확인했습니다.",
    "오늘 회의는 오후 2시에 시작합니다.",
    "대표번호 {COMPANY_PHONE}은 평일에만 운영합니다.",
)
KO_SIGNATURE = "서명: {PERSON_SPACED}"
EN_FRAGMENTS = (
    "Patient {PERSON} can be reached at {PHONE}.",
    "Date of birth: {DOB}.",
    "Mailing address: {ADDRESS}.",
    "Send the documents to {EMAIL}.",
    "Please refund {PERSON} to account {ACCOUNT}.",
    "The card {CARD} was charged twice.",
    "Emergency contact: {PERSON2} ({REL}), {PHONE2}.",
    "{PERSON} visited with their {REL}, {PERSON2}.",
)
EN_FILLERS = (
    "Our support line {COMPANY_PHONE} is open on weekdays.",
    "Item {PRODUCT} ships in two days.",
    "The office closes at 6 pm.",
    "Thank you for your patience.",
)
NON_ENTITY_SLOTS = frozenset({"BANK", "COMPANY_PHONE", "PRODUCT", "PERSON_SPACED"})
_SLOT_RE = re.compile(r"\{([A-Z_0-9]+)\}")


def _digits(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randrange(10)) for _ in range(n))


def _failing_digit(rng: random.Random, valid: int) -> str:
    return str((valid + rng.randrange(1, 10)) % 10)


def _persona(rng: random.Random, lang: str) -> dict[str, str]:
    year = rng.randrange(1950, 2006)
    month = rng.randrange(1, 13)
    day = rng.randrange(1, 29)
    if lang == "ko":
        g = str(rng.choice((1, 2)) if year < 2000 else rng.choice((3, 4)))
        first12 = f"{year % 100:02d}{month:02d}{day:02d}{g}{_digits(rng, 5)}"
        rrn = f"{first12[:6]}-{first12[6:]}{_failing_digit(rng, rrn_check_digit(first12))}"
        names = [rng.choice(KO_SURNAMES) + rng.choice(KO_GIVEN) for _ in range(2)]
        while names[1] == names[0]:
            names[1] = rng.choice(KO_SURNAMES) + rng.choice(KO_GIVEN)
        dob = rng.choice(
            (
                f"{year}년 {month}월 {day}일",
                f"{year}-{month:02d}-{day:02d}",
                f"{year}.{month:02d}.{day:02d}",
            )
        )
        phones = [
            rng.choice(("010-0000-{}", "010 0000 {}", "0100000{}")).format(_digits(rng, 4))
            for _ in range(2)
        ]
        address = (
            f"{rng.choice(KO_CITIES)} {rng.choice(KO_DISTRICTS)} {rng.choice(KO_ROADS)}"
            f" {rng.randrange(1, 200)}"
            + rng.choice(
                ("", f" {rng.randrange(101, 120)}동 {rng.randrange(1, 20)}0{rng.randrange(1, 5)}호")
            )
        )
        account = f"{_digits(rng, 3)}-{_digits(rng, 2 + rng.randrange(2))}-{_digits(rng, 6)}"
        rel = rng.choice(KO_REL)
        bank = rng.choice(KO_BANKS)
        company = rng.choice(("1588-{}", "1577-{}", "1644-{}", "080-000-{}")).format(
            _digits(rng, 4)
        )
    else:
        rrn = ""
        names = [f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}" for _ in range(2)]
        while names[1] == names[0]:
            names[1] = f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"
        dob = rng.choice(
            (
                f"{EN_MONTHS[month - 1]} {day}, {year}",
                f"{year}-{month:02d}-{day:02d}",
                f"{month:02d}/{day:02d}/{year}",
            )
        )
        phones = [
            rng.choice(("({}) 555-01{}", "{}-555-01{}")).format(
                rng.randrange(201, 990), _digits(rng, 2)
            )
            for _ in range(2)
        ]
        address = (
            f"{rng.randrange(1, 999)} {rng.choice(EN_STREETS)}, Apt {rng.randrange(1, 40)},"
            f" {rng.choice(EN_TOWNS)}"
        )
        account = f"{_digits(rng, 4)}-{_digits(rng, 4)}-{_digits(rng, 4)}"
        rel = rng.choice(EN_REL)
        bank = ""
        company = f"1-800-000-{_digits(rng, 4)}"
    payload = rng.choice("45") + _digits(rng, 14)
    card_digits = payload + _failing_digit(rng, luhn_check_digit(payload))
    sep = rng.choice(("-", " "))
    card = sep.join(card_digits[i : i + 4] for i in range(0, 16, 4))
    email = f"{rng.choice(EMAIL_WORDS)}{rng.randrange(1, 1000)}@{rng.choice(EMAIL_DOMAINS)}"
    product = (
        f"{rng.choice(('AB', 'XR', 'SKU', 'KT'))}-{rng.randrange(2019, 2026)}-{_digits(rng, 4)}"
    )
    return {
        "PERSON": names[0],
        "PERSON2": names[1],
        "PERSON_SPACED": " ".join(names[0]),
        "RRN": rrn,
        "DOB": dob,
        "PHONE": phones[0],
        "PHONE2": phones[1],
        "ADDRESS": address,
        "EMAIL": email,
        "ACCOUNT": account,
        "CARD": card,
        "REL": rel,
        "BANK": bank,
        "COMPANY_PHONE": company,
        "PRODUCT": product,
    }


def _fill(fragments: list[str], values: dict[str, str]) -> tuple[str, list[dict[str, str]]]:
    text_parts: list[str] = []
    found: list[tuple[int, str, str]] = []
    offset = 0
    for i, frag in enumerate(fragments):
        if i:
            text_parts.append(" ")
            offset += 1
        pos = 0
        for m in _SLOT_RE.finditer(frag):
            literal = frag[pos : m.start()]
            text_parts.append(literal)
            offset += len(literal)
            slot = m.group(1)
            value = values[slot]
            if slot not in NON_ENTITY_SLOTS:
                found.append((offset, slot.rstrip("0123456789"), value))
            text_parts.append(value)
            offset += len(value)
            pos = m.end()
        text_parts.append(frag[pos:])
        offset += len(frag) - pos
    entities: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for _off, type_, value in sorted(found, key=lambda f: f[0]):
        if (type_, value) not in seen:
            seen.add((type_, value))
            entities.append({"type": type_, "original": value})
    return "".join(text_parts), entities


class PiiRecord(TypedDict):
    """One synthetic document of a split: its gold entities and the extraction target (one
    ``TYPE\tVALUE`` line per entity)."""

    id: str
    lang: str
    source_text: str
    entities: list[dict[str, str]]
    target_tsv: str


class SplitSummary(TypedDict):
    """One split in the manifest: its file, records, records per language, negatives and SHA-256."""

    file: str
    records: int
    langs: dict[str, int]
    negatives: int
    sha256: str


class ChatTrainingRecord(TypedDict):
    """A fine-tuning record in the conversational prompt-completion form (:func:`chat_record`)."""

    id: str
    prompt_version: str
    prompt: list[dict[str, str]]
    completion: list[dict[str, str]]


def make_document(
    rng: random.Random, lang: str, negative: bool
) -> tuple[str, list[dict[str, str]]]:
    """One document's ``(source_text, entities)`` drawn from ``rng``."""
    values = _persona(rng, lang)
    fragments_pool, fillers_pool = (
        (KO_FRAGMENTS, KO_FILLERS) if lang == "ko" else (EN_FRAGMENTS, EN_FILLERS)
    )
    if negative:
        chosen = rng.sample(fillers_pool, rng.randrange(2, 4))
    else:
        chosen = rng.sample(fragments_pool, rng.randrange(2, 5)) + rng.sample(
            fillers_pool, rng.randrange(0, 3)
        )
        rng.shuffle(chosen)
        if lang == "ko" and any("{PERSON}" in f for f in chosen) and rng.random() < 0.25:
            chosen.append(KO_SIGNATURE)
    return _fill(chosen, values)


def _split_records(
    rng: random.Random, split: str, n_ko: int, n_en: int, seen: set[str]
) -> list[PiiRecord]:
    langs = ["ko"] * n_ko + ["en"] * n_en
    rng.shuffle(langs)
    records: list[PiiRecord] = []
    for i, lang in enumerate(langs, 1):
        negative = rng.random() < NEGATIVE_SHARE
        while True:
            text, entities = make_document(rng, lang, negative)
            if text not in seen:
                seen.add(text)
                break
        records.append(
            {
                "id": f"pii-{split}-{i:05d}",
                "lang": lang,
                "source_text": text,
                "entities": entities,
                "target_tsv": "\n".join(f"{e['type']}\t{e['original']}" for e in entities),
            }
        )
    return records


def generate_records(seed: int = 42) -> dict[str, list[PiiRecord]]:
    """All three splits as record lists, a pure function of ``seed``."""
    rng = random.Random(seed)
    seen: set[str] = set()
    return {name: _split_records(rng, name, n_ko, n_en, seen) for name, n_ko, n_en in SPLITS}


def generate(out: str | Path, seed: int = 42) -> dict[str, Any]:
    """Write the three splits and ``manifest.json`` under ``out``; returns the manifest."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    splits: dict[str, SplitSummary] = {}
    for name, records in generate_records(seed).items():
        path = root / f"{name}.jsonl"
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            for rec in records:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        splits[name] = {
            "file": path.name,
            "records": len(records),
            "langs": dict(sorted(Counter(r["lang"] for r in records).items())),
            "negatives": sum(1 for r in records if not r["entities"]),
            "sha256": sha256_file(path),
        }
    return write_manifest(
        root,
        kind="synth-pii",
        generator="spcl.synth.pii",
        generator_version=GENERATOR_VERSION,
        seed=seed,
        records=sum(s["records"] for s in splits.values()),
        splits=splits,
        licence="synthetic, generated by spcl (no real persons; numbers fail their check digits)",
    )


def chat_record(rec: Mapping[str, Any]) -> ChatTrainingRecord:
    """One fine-tuning record: the extraction prompt as ``prompt``, ``target_tsv`` as the completion
    (``rec``: a parsed :class:`PiiRecord`; ``KeyError`` when it lacks ``id``, ``source_text`` or
    ``target_tsv``).

    The format is the conversational prompt-completion one (TRL ``SFTTrainer`` trains on the
    completion only): ``{"id", "prompt_version", "prompt": [system, user], "completion":
    [assistant]}``.
    """

    return {
        "id": rec["id"],
        "prompt_version": PROMPT_VERSION,
        "prompt": build_messages(rec["source_text"]),
        "completion": [{"role": "assistant", "content": rec["target_tsv"]}],
    }


def write_chat(in_path: str | Path, out_path: str | Path) -> int:
    """Turn a split's JSONL into chat fine-tuning records; returns the number written (no text is
    logged)."""
    n = 0
    with open(out_path, "w", encoding="utf-8", newline="\n") as dst:
        for item in iter_jsonl(in_path):
            lineno, rec = item.line_no, item.value
            try:
                if item.error is not None:
                    raise ValueError(item.error)
                out = chat_record(rec)
            except (ValueError, KeyError, TypeError):
                raise ValueError(
                    f"{Path(in_path).name}:{lineno}: not a PII record (needs id, source_text,"
                    " target_tsv)"
                ) from None
            dst.write(json.dumps(out, ensure_ascii=False) + "\n")
            n += 1
    return n


def split_table(path: str | Path) -> Any:
    """A split's JSONL as a pyarrow table ``(id, text, lang)`` (the filter's input columns); raises
    ``OSError``, ``ValueError`` or ``KeyError`` on an unreadable file or a record without those
    fields."""
    import pyarrow as pa

    rows = load_jsonl(path)
    return pa.table(
        {
            "id": [r["id"] for r in rows],
            "text": [r["source_text"] for r in rows],
            "lang": [r["lang"] for r in rows],
        }
    )
