"""Masking operators per type: surrogates of the same type and format, keyed hashes, redact, keep;
the vault round trip for every reversible operator; the registry's validation; the mask job and CLI
wiring."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spcl.detect.validators import (
    luhn_check_digit,
    rrn_check_digit,
    validate_card,
    validate_mynumber,
    validate_rrn,
)
from spcl.entity_types import DEFAULT_TYPES
from spcl.mask import mask_text, reassemble_text
from spcl.mask.operators import OPERATORS, apply_operators, check_operators, keyed_hash
from spcl.mask.surrogates import surrogate
from spcl.mask_stage import MaskJobConfig, run_mask_job, unmask_output
from spcl.mask_stage.release import check_release
from spcl.synth.pii import generate_records
from spcl.text import normalize

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
keys = st.binary(min_size=32, max_size=32)


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def _shape(s: str) -> str:
    """Digits → 9, everything else kept: the format of an identifier."""
    return re.sub(r"\d", "9", s)


@st.composite
def rrns(draw: st.DrawFn) -> str:
    yy, mm, dd = draw(st.integers(0, 99)), draw(st.integers(1, 12)), draw(st.integers(1, 28))
    body = (
        f"{yy:02d}{mm:02d}{dd:02d}{draw(st.sampled_from('1234'))}{draw(st.integers(0, 99999)):05d}"
    )
    full = body + str(rrn_check_digit(body))
    return full[:6] + draw(st.sampled_from(["-", "", " "])) + full[6:]


@st.composite
def cards(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(["4111", "5500", "3528", "6011"]))
    body = prefix + "".join(str(draw(st.integers(0, 9))) for _ in range(11))
    full = body + str(luhn_check_digit(body))
    sep = draw(st.sampled_from(["-", " ", ""]))
    return sep.join(full[i : i + 4] for i in range(0, 16, 4))


@given(rrns(), keys)
@settings(max_examples=150, deadline=None)
def test_rrn_surrogate_is_a_valid_rrn_of_the_same_format(value: str, key: bytes) -> None:
    fake = surrogate("RRN", value, key)
    assert fake != value and _shape(fake) == _shape(value)
    assert validate_rrn(_digits(fake)) is True
    assert fake == surrogate("RRN", value, key)  # deterministic per value and key


@given(st.integers(10**10, 10**11 - 1), keys)
@settings(max_examples=100, deadline=None)
def test_mynumber_surrogate_has_a_valid_check_digit(body: int, key: bytes) -> None:
    from spcl.detect.validators import mynumber_check_digit

    value = f"{body}{mynumber_check_digit(str(body))}"
    value = f"{value[:4]} {value[4:8]} {value[8:]}"
    fake = surrogate("RRN", value, key)
    assert _shape(fake) == _shape(value) and validate_mynumber(_digits(fake))


@given(cards(), keys)
@settings(max_examples=150, deadline=None)
def test_card_surrogate_is_a_valid_card_of_the_same_issuer_and_format(
    value: str, key: bytes
) -> None:
    fake = surrogate("CARD", value, key)
    assert _shape(fake) == _shape(value) and fake[:4] == value[:4]
    assert validate_card(_digits(fake))


@given(
    st.sampled_from(
        [
            "010-1234-5678",
            "090-1234-5678",
            "03-1234-5678",
            "+82 10-1234-5678",
            "(415) 555-2671",
            "415-555-0132",
            "01012345678",
            "09012345678",
            "０９０－１２３４－５６７８",
        ]
    ),
    keys,
)
@settings(max_examples=60, deadline=None)
def test_phone_surrogate_keeps_the_national_format(value: str, key: bytes) -> None:
    from spcl.detect import find_pii

    fake = surrogate("PHONE", value, key)
    assert len(fake) == len(value) and re.sub(r"[0-9０-９]", "9", fake) == re.sub(
        r"[0-9０-９]", "9", value
    )
    first = re.match(r"\+?\(?[0-9０-９]+", value).group(0)  # type: ignore[union-attr]
    assert fake.startswith(first[:3])
    # a phone the rules read as a phone where they read the original
    if any(h.type == "PHONE" for h in find_pii(f"전화 {value} 입니다")):
        assert any(h.type == "PHONE" for h in find_pii(f"전화 {fake} 입니다"))


@given(
    st.sampled_from(
        ["김민수", "이서연", "박지훈", "田中 太郎", "佐々木 花子", "John Smith", "MARY JONES"]
    ),
    keys,
)
@settings(max_examples=60, deadline=None)
def test_person_surrogate_is_a_name_of_the_same_script(value: str, key: bytes) -> None:
    fake = surrogate("PERSON", value, key)
    assert fake != value and fake.count(" ") == value.count(" ")
    for a, b in zip(value.split(), fake.split(), strict=True):
        assert _script(a) == _script(b)
    if value.isupper():
        assert fake.isupper()


def _script(word: str) -> str:
    if all("\uac00" <= c <= "\ud7a3" for c in word):
        return "hangul"
    if all("\u4e00" <= c <= "\u9fff" or c == "々" for c in word):
        return "kanji"
    return "latin" if word.isascii() and word.isalpha() else "other"


def test_email_surrogate_uses_a_reserved_domain_of_the_same_country() -> None:
    assert surrogate("EMAIL", "taro@mail.co.jp", KEY).endswith("@example.jp")
    assert surrogate("EMAIL", "kim@naver.kr", KEY).endswith("@example.kr")
    fake = surrogate("EMAIL", "Jane.Doe99@gmail.com", KEY)
    assert fake.endswith("@example.com") and _shape(fake.split("@")[0]).count("9") == 2
    assert surrogate("EMAIL", "Jane.Doe99@gmail.com", OTHER_KEY) != fake


def test_hash_is_keyed_and_stable() -> None:
    a = keyed_hash("EMAIL", "taro@mail.co.jp", KEY)
    assert (
        a
        == keyed_hash("EMAIL", "taro@mail.co.jp", KEY)
        != keyed_hash("EMAIL", "taro@mail.co.jp", OTHER_KEY)
    )
    assert re.fullmatch(r"\[EMAIL:[0-9a-f]{16}\]", a)


RECORDS = generate_records(seed=42)["validation"][:80]
PER_SPAN = [name for name, op in OPERATORS.items() if op.per_span]


@given(
    st.sampled_from(RECORDS),
    st.dictionaries(st.sampled_from(DEFAULT_TYPES[:9]), st.sampled_from(PER_SPAN)),
    keys,
)
@settings(max_examples=150, deadline=None)
def test_every_reversible_operator_round_trips_and_no_replaced_value_stays(
    record: dict, ops: dict[str, str], key: bytes
) -> None:
    source = normalize(record["source_text"])
    cands = [(e["type"], e["original"]) for e in record["entities"]]
    base = mask_text(source, cands)
    out = apply_operators(source, base, ops, key)
    assert out == apply_operators(source, base, ops, key)  # deterministic per key
    redacted = any(ops.get(s.type) == "redact" for s in base.spans)
    if not redacted:
        assert reassemble_text(out.masked_text, out.mapping) == source
    for span in base.spans:  # every value whose operator replaces it is gone from the text
        op = ops.get(span.type, "replace")
        surface = source[span.start : span.end]
        if op != "keep" and not any(
            ops.get(s.type) == "keep" and source[s.start : s.end] == surface for s in base.spans
        ):
            assert surface not in out.masked_text
    assert isinstance(check_release(source, out, [], reversible=not redacted), object)
    assert not isinstance(check_release(source, out, [], reversible=not redacted), str)


def test_a_fake_never_collides_with_a_value_or_token_in_the_source() -> None:
    # the fake the key gives for 김민수 is planted in the source: the masker must pick another one
    first = surrogate("PERSON", "김민수", KEY)
    source = f"김민수 씨와 {first} 씨, [PERSON_1]"
    base = mask_text(source, [("PERSON", "김민수")])
    out = apply_operators(source, base, {"PERSON": "surrogate"}, KEY)
    fake = out.spans[0].token
    assert fake != first and fake not in source
    assert reassemble_text(out.masked_text, out.mapping) == source


def test_check_operators_validates_and_refuses_generalize_per_span() -> None:
    assert check_operators({"person": "Surrogate"}, DEFAULT_TYPES) == {"PERSON": "surrogate"}
    with pytest.raises(ValueError, match="unknown operator 'scramble'"):
        check_operators(["EMAIL=scramble"], DEFAULT_TYPES)
    with pytest.raises(ValueError, match="unknown entity type 'NAME'"):
        check_operators(["NAME=hash"], DEFAULT_TYPES)
    with pytest.raises(ValueError, match="spcl generalize"):
        check_operators(["DOB=generalize"], DEFAULT_TYPES)
    with pytest.raises(ValueError, match="TYPE=OPERATOR"):
        check_operators(["EMAIL"], DEFAULT_TYPES)


def test_keep_leaves_a_flagging_rule_hit_in_clear_and_releases_the_document() -> None:
    from spcl.extract.backends import Extraction
    from spcl.mask_stage.candidates import RuleHit
    from spcl.mask_stage.document import mask_document

    text = "mail taro.yamada@mailbox.com tel 010-1234-5678"
    hits = [RuleHit("EMAIL", 5, 28, True), RuleHit("PHONE", 33, 46, True)]
    raw = "EMAIL\ttaro.yamada@mailbox.com\nPHONE\t010-1234-5678"
    out = mask_document(
        text,
        Extraction(raw=raw),
        hits,
        DEFAULT_TYPES,
        False,
        operators={"EMAIL": "keep", "PHONE": "redact"},
        operator_key=KEY,
    )
    assert out.released is not None
    assert out.released.masked_text == "mail taro.yamada@mailbox.com tel "
    out = mask_document(
        text,
        Extraction(raw=raw),
        hits,
        DEFAULT_TYPES,
        False,
        operators={"PHONE": "surrogate"},
        operator_key=KEY,
    )
    assert out.released is not None and "010-1234-5678" not in out.released.masked_text
    assert "taro.yamada" not in out.released.masked_text


# ------------------------------------------------------------------------------------------ the job


def _flagged(folder: Path) -> list[dict]:
    folder.mkdir(parents=True)
    recs = RECORDS[:40]
    pq.write_table(
        pa.table(
            {
                "id": [r["id"] for r in recs],
                "text": [r["source_text"] for r in recs],
                "lang": [r["lang"] for r in recs],
            }
        ),
        folder / "part-00000.parquet",
    )
    return recs


def test_mask_job_with_operators_unmasks_reversible_rows_and_records_them(
    tmp_path: Path, vault_key: None
) -> None:
    recs = _flagged(tmp_path / "in")
    ops = {
        "PERSON": "surrogate",
        "EMAIL": "hash",
        "CARD": "surrogate",
        "RRN": "surrogate",
        "PHONE": "surrogate",
    }
    cfg = MaskJobConfig(
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        vault=str(tmp_path / "vault"),
        operators=ops,
    )
    metrics = run_mask_job(cfg)
    assert metrics["reconciliation"]["ok"] and metrics["masked"] == len(recs)
    masked = pq.read_table(tmp_path / "out" / "masked").to_pylist()
    for row in masked:
        for e in next(r for r in recs if r["id"] == row["id"])["entities"]:
            if e["type"] in ("RRN", "CARD", "EMAIL", "PHONE"):  # what the rules backend finds
                assert normalize(e["original"]) not in row["masked_text"], e["type"]
    assert any("@example." in r["masked_text"] for r in masked) or any(
        "[EMAIL:" in r["masked_text"] for r in masked
    )
    report = unmask_output(tmp_path / "out", tmp_path / "vault", tmp_path / "restored", KEY)
    assert report.restored == len(recs) and not report.refused
    restored = {r["id"]: r["text"] for r in pq.read_table(tmp_path / "restored").to_pylist()}
    assert restored == {r["id"]: r["source_text"] for r in recs}
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert (
        manifest["operators"]["PERSON"] == "surrogate"
        and manifest["operators"]["ADDRESS"] == "replace"
    )
    # other operators on the same output are other release settings
    with pytest.raises(Exception, match="operators"):
        run_mask_job(MaskJobConfig(input=cfg.input, output=cfg.output, vault=cfg.vault))


def test_mask_job_redact_is_refused_by_unmask(tmp_path: Path, vault_key: None) -> None:
    recs = _flagged(tmp_path / "in")
    cfg = MaskJobConfig(
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        vault=str(tmp_path / "vault"),
        operators={"EMAIL": "redact"},
    )
    assert run_mask_job(cfg)["masked"] == len(recs)
    report = unmask_output(tmp_path / "out", tmp_path / "vault", tmp_path / "restored", KEY)
    with_email = [r for r in recs if any(e["type"] == "EMAIL" for e in r["entities"])]
    assert with_email and report.refused_by_reason() == {"irreversible_span": len(with_email)}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spcl.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_mask_help_counts_types_from_the_registry_and_names_the_operators() -> None:
    out = _cli("mask", "--help").stdout
    flat = " ".join(out.split())
    assert f"all {len(DEFAULT_TYPES)}:" in flat and "all nine" not in flat
    for name in PER_SPAN:
        assert name in flat


def test_mask_cli_operator_flag_and_yaml_config(tmp_path: Path) -> None:
    import argparse

    from spcl.commands.mask import add_mask_arguments, operators_from_args

    conf = tmp_path / "c.yaml"
    conf.write_text("mask:\n  operators:\n    PERSON: surrogate\n    EMAIL: redact\n")
    parser = argparse.ArgumentParser()
    add_mask_arguments(parser)
    args = parser.parse_args(
        [
            "-i",
            "x",
            "-o",
            "y",
            "--vault",
            "z",
            "--conf",
            str(conf),
            "--operator",
            "EMAIL=hash",
            "--operator",
            "phone=keep",
        ]
    )
    assert operators_from_args(args) == {"EMAIL": "hash", "PERSON": "surrogate", "PHONE": "keep"}
    bad = _cli(
        "mask",
        "-i",
        str(tmp_path),
        "-o",
        str(tmp_path / "o"),
        "--vault",
        str(tmp_path / "v"),
        "--operator",
        "PERSON=generalize",
    )
    assert bad.returncode == 2 and "spcl generalize" in bad.stderr and "\\n" not in bad.stderr


# ----------------------------------------------------------------------- any input the filter reads


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.zst"])
def test_mask_reads_jsonl_and_compressed_inputs_with_the_filters_reader(
    tmp_path: Path, vault_key: None, suffix: str
) -> None:
    import gzip

    import zstandard

    recs = RECORDS[:12]
    lines = [
        json.dumps({"id": r["id"], "text": r["source_text"]}, ensure_ascii=False) for r in recs
    ]
    body = (
        "\n".join([*lines, "{not json", json.dumps({"id": "nul", "text": "a\u0000b"})]) + "\n"
    ).encode()
    if suffix.endswith(".gz"):
        body = gzip.compress(body)
    elif suffix.endswith(".zst"):
        body = zstandard.ZstdCompressor().compress(body)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / f"docs{suffix}").write_bytes(body)
    out = _cli(
        "mask",
        "--input",
        str(tmp_path / "in" / f"docs{suffix}"),
        "--output",
        str(tmp_path / "out"),
        "--vault",
        str(tmp_path / "vault"),
    )
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout)
    assert metrics["documents"] == len(recs) + 2 and metrics["reconciliation"]["ok"]
    failed = pq.read_table(tmp_path / "out" / "failed").to_pylist()
    assert sorted(r["reason"] for r in failed) == [
        "input:malformed_json",
        "input:text_contains_nul",
    ]
    masked = pq.read_table(tmp_path / "out" / "masked").to_pylist()
    assert {r["id"] for r in masked} == {r["id"] for r in recs}
    for row in masked:
        rec = next(r for r in recs if r["id"] == row["id"])
        for e in rec["entities"]:
            if e["type"] in ("RRN", "CARD", "EMAIL", "PHONE"):
                assert normalize(e["original"]) not in row["masked_text"]
    # a folder of JSONL files is read too
    out2 = _cli(
        "mask",
        "--input",
        str(tmp_path / "in"),
        "--output",
        str(tmp_path / "out2"),
        "--vault",
        str(tmp_path / "vault"),
    )
    assert out2.returncode == 0 and json.loads(out2.stdout)["documents"] == len(recs) + 2


def test_a_configuration_error_prints_real_line_breaks(tmp_path: Path) -> None:
    conf = tmp_path / "bad.yaml"
    conf.write_text("mask:\n  operators:\n    PERSON: zzz\npolicy:\n  PHONE: bad\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text('{"id": "a", "text": "x"}\n')
    out = _cli(
        "filter",
        "--conf",
        str(conf),
        "--input",
        str(tmp_path / "in"),
        "--output",
        str(tmp_path / "o"),
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert lines[0].startswith("spcl: invalid configuration in") and "\\n" not in out.stderr
    assert any(line.strip().startswith("policy.PHONE:") for line in lines[1:])
    assert any(line.strip().startswith("mask.operators:") and "'zzz'" in line for line in lines[1:])


def test_review_export_of_a_finished_mask_run_says_what_it_is(
    tmp_path: Path, vault_key: None
) -> None:
    _flagged(tmp_path / "in")
    cfg = MaskJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "vault")
    )
    assert run_mask_job(cfg)["reconciliation"]["ok"]
    out = _cli(
        "review", "export", "--input", str(tmp_path / "out"), "--output", str(tmp_path / "batch")
    )
    assert out.returncode == 1
    assert "did not finish" not in out.stderr and "not a filter output" in out.stderr
    assert "spcl mask" in out.stderr


def test_output_parts_are_not_named_part_part(tmp_path: Path, vault_key: None) -> None:
    _flagged(tmp_path / "in")  # the filter's own part-00000.parquet
    cfg = MaskJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "vault")
    )
    assert run_mask_job(cfg)["reconciliation"]["ok"]
    names = [p.name for p in (tmp_path / "out").rglob("*.parquet")]
    assert names and not [n for n in names if n.startswith("part-part-")]
    assert all(re.fullmatch(r"part-00000-[0-9a-f]{12}\.parquet", n) for n in names)
    # a rerun finds its parts: nothing to do, still reconciled
    again = run_mask_job(MaskJobConfig(input=cfg.input, output=cfg.output, vault=cfg.vault))
    assert again["reconciliation"]["ok"] and again["run"]["files_processed"] == 0


@given(
    st.dates(min_value=datetime.date(1930, 1, 1), max_value=datetime.date(2020, 12, 31)),
    st.sampled_from(
        [
            "{y:04d}-{m:02d}-{d:02d}",
            "{y:04d}年{m}月{d}日",
            "{m:02d}/{d:02d}/{y:04d}",
            "{y:04d}.{m:02d}.{d:02d}",
        ]
    ),
    keys,
)
@settings(max_examples=120, deadline=None)
def test_dob_surrogate_is_a_real_date_written_the_same_way(
    day: datetime.date, fmt: str, key: bytes
) -> None:
    value = fmt.format(y=day.year, m=day.month, d=day.day)
    fake = surrogate("DOB", value, key)
    nums = [int(x) for x in re.findall(r"\d+", fake)]
    y, m, d = (nums[2], nums[0], nums[1]) if "/" in fmt else tuple(nums)
    datetime.date(y, m, d)  # a real calendar date
    assert re.sub(r"\d", "9", fake) == re.sub(r"\d", "9", value) or "年" in fmt
    assert re.sub(r"\d+", "#", fake) == re.sub(r"\d+", "#", value)


def test_address_surrogate_keeps_the_address_words() -> None:
    fake = surrogate("ADDRESS", "경기도 수원시 예시구 누리길 115", KEY)
    assert [w[-1] for w in fake.split()[:4]] == [
        "도",
        "시",
        "구",
        "길",
    ] and fake != "경기도 수원시 예시구 누리길 115"
    from spcl.mask.surrogate_addresses import JA_PREFECTURES as _JA_PREFECTURES
    from spcl.mask.surrogate_addresses import KO_REGIONS as _KO_REGIONS

    assert fake.split()[0] in _KO_REGIONS and fake.split()[0].endswith(
        "도"
    )  # a real province for a province
    fake = surrogate("ADDRESS", "東京都新宿区西新宿2丁目8-1", KEY)
    pref = next(p for p in _JA_PREFECTURES if fake.startswith(p))  # a real prefecture
    assert fake[len(pref) + 2] == "区" and "丁目" in fake and "新宿" not in fake
    fake = surrogate("ADDRESS", "221B Baker Street", KEY)
    assert (
        fake.endswith(" Street")
        and "Baker" not in fake
        and re.fullmatch(r"\d{3}[A-Z] \w+ Street", fake)
    )


def test_predictions_for_evaluation_are_the_same_whatever_the_operator(
    tmp_path: Path, vault_key: None
) -> None:
    from spcl.mask_stage import export_predictions

    _flagged(tmp_path / "in")
    preds = {}
    for name, ops in (
        ("replace", {}),
        (
            "fakes",
            {t: "surrogate" for t in ("PERSON", "PHONE", "CARD", "RRN")}
            | {"EMAIL": "hash", "ADDRESS": "surrogate", "DOB": "surrogate"},
        ),
    ):
        cfg = MaskJobConfig(
            input=str(tmp_path / "in"),
            output=str(tmp_path / name),
            vault=str(tmp_path / f"vault-{name}"),
            operators=ops,
        )
        run_mask_job(cfg)
        export_predictions(cfg.output, cfg.vault, tmp_path / f"{name}.jsonl", KEY)
        preds[name] = {
            d["id"]: sorted(map(tuple, d["candidates"]))
            for d in map(json.loads, (tmp_path / f"{name}.jsonl").read_text().splitlines())
        }
    assert preds["fakes"] == preds["replace"] and any(preds["replace"].values())
