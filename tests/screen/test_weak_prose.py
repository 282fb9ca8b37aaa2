from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import numpy as np

from spcl.manifest import verify_manifest
from spcl.screen.train import Record, TrainSettings, read_records
from tools.datasets.weak_prose import (
    HIRONSAN_MEMBER,
    has_topic_term,
    iob_sentences,
    weak_prose_records,
    write_weak_prose,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "data" / "weak-prose"
JA_PLAIN = "新しい駅ビルには百貨店と映画館が入る予定だと発表した。"
JA_CRIME = "山田容疑者は詐欺の疑いで警視庁に逮捕された。"
KO_PLAIN = (
    "이 법률안은 공무원의 육아휴직이 가능한 자녀의 연령을 만 8세 이하로 늘리려는 것으로, 공포한"
    " 날부터 시행한다."
)
KO_CRIME = (
    "이 법률안은 사기 범죄의 형량을 높이고 피해자 보호를 강화하려는 것으로, 공포한 날부터"
    " 시행한다는 내용이다."
)


def _iob(sentences: list[str]) -> str:
    return "".join("".join(f"{ch}\tX\tO\n" for ch in s) + "\n" for s in sentences)


def _archives(tmp: Path) -> tuple[Path, Path]:
    data = _iob([JA_PLAIN, JA_CRIME, "短い。"]).encode()
    hiron = tmp / "hironsancorpus-0.1.2.tar.gz"
    with tarfile.open(hiron, "w:gz") as tar:
        info = tarfile.TarInfo(HIRONSAN_MEMBER)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    konlpy = tmp / "konlpy-0.6.0-py2.py3-none-any.whl"
    with zipfile.ZipFile(konlpy, "w") as zf:
        zf.writestr("konlpy/data/corpus/kobill/1.txt", KO_PLAIN)
        zf.writestr("konlpy/data/corpus/kobill/2.txt", KO_CRIME)
        zf.writestr("konlpy/__init__.py", "")
    return hiron, konlpy


def test_iob_sentences_join_tokens_and_split_on_blank_lines() -> None:
    assert iob_sentences(iter(["今日\tX\tO\n", "は\tX\tO\n", "\n", "\n", "雨\tX\tO\n"])) == [
        "今日は",
        "雨",
    ]


def test_topic_terms_disqualify() -> None:
    assert has_topic_term(JA_CRIME, "ja") and has_topic_term(KO_CRIME, "ko")
    assert not has_topic_term(JA_PLAIN, "ja") and not has_topic_term(KO_PLAIN, "ko")


def test_records_keep_only_plain_sentences_as_training_only_none(tmp_path: Path) -> None:
    rows = weak_prose_records([("a", JA_PLAIN), ("b", JA_CRIME), ("c", "短い。")], "ja", "t-ja")
    assert [r["text"] for r in rows] == [JA_PLAIN] and rows[0]["label"] == "NONE"
    path = tmp_path / "w.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    (record,) = read_records([path])
    assert record.weak and record.synthetic  # augmentation: never scored in CV


def test_builder_reads_the_archives_and_is_byte_identical(tmp_path: Path) -> None:
    hiron, konlpy = _archives(tmp_path)
    first = write_weak_prose(tmp_path / "a", hiron, konlpy).read_bytes()
    assert write_weak_prose(tmp_path / "b", hiron, konlpy).read_bytes() == first
    rows = [json.loads(line) for line in first.decode().splitlines()]
    assert [(r["lang"], r["text"]) for r in rows] == [("ja", JA_PLAIN), ("ko", KO_PLAIN)]
    assert verify_manifest(tmp_path / "a").ok


def test_weak_weight_is_separate_from_synthetic_weight() -> None:
    from spcl.screen.features import Featurizer
    from spcl.screen.lexicon import default_lexicon
    from spcl.screen.tokenize import Tokenizers, train_sentencepiece
    from spcl.screen.train import _prepare

    recs = [
        Record("r", KO_CRIME, "ko", "SCPI"),
        Record("w", KO_PLAIN, "ko", "NONE", source="weak:x"),
        Record("s", KO_PLAIN + " 오늘", "ko", "NONE", source="synth:y"),
    ]
    settings = TrainSettings(synthetic_weight=0.2, weak_weight=0.7)
    sp_model = train_sentencepiece([r.text for r in recs] * 20, 200, 0)
    data = _prepare(
        recs, Featurizer(settings.features, Tokenizers(sp_model), default_lexicon()), settings
    )
    assert np.allclose(data.weight, [1.0, 0.7, 0.2]) and data.real.tolist() == [True, False, False]


def test_shipped_set_matches_its_manifest_and_has_no_topic_term() -> None:
    assert verify_manifest(SHIPPED).ok
    rows = [json.loads(line) for line in (SHIPPED / "prose.jsonl").open(encoding="utf-8")]
    assert {r["label"] for r in rows} == {"NONE"} and {r["lang"] for r in rows} == {"ja", "ko"}
    assert all(str(r["source"]).startswith("weak:") for r in rows)
    assert not any(has_topic_term(r["text"], r["lang"]) for r in rows)
    # the bills repeat boilerplate passages: texts may not be
    assert len({r["id"] for r in rows}) == len(rows)


def test_weak_weight_reaches_the_rebuild_command_only_when_set() -> None:
    import argparse

    from spcl.commands.train import _rebuild_command, add_train_arguments

    parser = argparse.ArgumentParser()
    add_train_arguments(parser)
    base = ["--data", "a.jsonl", "--output", "models/x"]
    assert "--weak-weight" not in _rebuild_command(parser.parse_args(base))
    assert _rebuild_command(parser.parse_args([*base, "--weak-weight", "0.5"])).endswith(
        "--weak-weight 0.5"
    )
