"""The generalize job end to end: the rules backend, and the whole two-stage loop against a real
OpenAI-compatible HTTP server on loopback whose *model* is scripted (named as such below)."""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spcl.detect import find_pii
from spcl.entity_types import DEFAULT_TYPES
from spcl.extract.backends import make_extractor
from spcl.extract.backends.chat import ChatReply, ChatRequest
from spcl.extract.backends.openai_chat import OpenAIChat
from spcl.generalize.engine import Generalizer
from spcl.generalize.job import (
    GENERALIZED_SCHEMA,
    GeneralizeJobConfig,
    iter_generalized,
    run_generalize_job,
)
from spcl.generalize.outcome import DocInput, release_check, restore
from spcl.generalize.spans import collect_spans
from spcl.mask.vault import open_vault
from tests.support.scripted_llm import MODEL_NAME, scripted_server

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))
KEY_B64 = base64.b64encode(KEY).decode()

DOCS = {
    "en-1": (
        "Jordan Sample was treated at Leeds General Infirmary on 3 August 2003. Call 010-2345-6789."
    ),
    "ko-1": (
        "김가상 씨의 생년월일 1991년 6월 9일, 주소 서울특별시 강남구 테헤란로 123. 어머니와 산다."
    ),
    "ja-1": "山田太郎さんの生年月日は1985年4月2日、住所は東京都千代田区見本町1-2-3です。",
}
VALUES = [
    "Jordan Sample",
    "Leeds General Infirmary",
    "3 August 2003",
    "010-2345-6789",
    "김가상",
    "1991년 6월 9일",
    "서울특별시 강남구 테헤란로 123",
    "山田太郎",
    "1985年4月2日",
    "東京都千代田区見本町1-2-3",
]


@pytest.fixture(autouse=True)
def vault_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs with a known vault key in the environment."""
    monkeypatch.setenv("SPCL_VAULT_KEY", KEY_B64)
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)


def write_flagged(path: Path, docs: dict[str, str], *, with_hits: bool) -> None:
    """``docs`` as the filter's flagged Parquet; ``with_hits`` adds the filter's ``hits`` column."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cols: dict[str, list] = {
        "id": list(docs),
        "text": list(docs.values()),
        "lang": [k.split("-")[0] for k in docs],
    }
    if with_hits:
        cols["hits"] = [
            [
                {
                    "type": h.type,
                    "start": h.start,
                    "end": h.end,
                    "validated": h.validated,
                    "detector": h.detector,
                }
                for h in find_pii(t)
            ]
            for t in docs.values()
        ]
    pq.write_table(pa.table(cols), path)


def read_rows(folder: Path) -> list[dict]:
    """All rows of the Parquet files in ``folder``."""
    return [r for p in sorted(folder.glob("*.parquet")) for r in pq.read_table(p).to_pylist()]


def assert_no_values(text: str, values: list[str] = VALUES) -> None:
    """None of the planted ``values`` occurs in ``text`` (logs, metrics, outputs)."""
    for v in values:
        assert v not in text


# --- rules backend --------------------------------------------------------------------------------


def test_rules_job_outputs_vault_restore_and_metrics(tmp_path: Path) -> None:
    write_flagged(
        tmp_path / "in" / "a.parquet", {"en-1": DOCS["en-1"], "ko-1": DOCS["ko-1"]}, with_hits=True
    )
    write_flagged(tmp_path / "in" / "b.parquet", {"ja-1": DOCS["ja-1"]}, with_hits=False)
    cfg = GeneralizeJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
    )
    metrics = run_generalize_job(cfg)
    rows = {r["id"]: r for r in iter_generalized(tmp_path / "out")}
    assert sorted(rows) == sorted(DOCS) and metrics["failed"] == 0 and metrics["documents"] == 3
    assert (
        pq.read_schema(next((tmp_path / "out" / "generalized").glob("*.parquet"))).names
        == GENERALIZED_SCHEMA.names
    )
    ko = rows["ko-1"]["generalized_text"]
    assert "1991년" in ko and "1991년 6월" not in ko  # DOB keeps the year
    assert "서울특별시 강남구" in ko and "테헤란로" not in ko  # address: the district
    assert "[PERSON_1]" in ko and "가족" in ko
    assert (
        "1985年" in rows["ja-1"]["generalized_text"]
        and "東京都千代田区" in rows["ja-1"]["generalized_text"]
    )
    assert "[PHONE_1]" in rows["en-1"]["generalized_text"]
    vault = open_vault(tmp_path / "v", KEY)
    for doc_id, row in rows.items():
        assert (
            restore(
                row["generalized_text"],
                row["spans"],
                vault.get(row["row_key"], writer=row["vault_file"]),
            )
            == DOCS[doc_id]
        )
        assert {s["kind"] for s in row["spans"]} <= {"generalized", "label"}
        # the rules backend has no ORG finder and a plain date is no DOB: those two stay (an LLM
        # finds them)
        assert_no_values(
            row["generalized_text"],
            [v for v in VALUES if v not in ("Leeds General Infirmary", "3 August 2003")],
        )
    assert metrics["share_by_rank"] and abs(sum(metrics["share_by_rank"].values()) - 1) < 1e-6
    assert metrics["llm_calls"] == 0 and metrics["backend"] == "rules"
    assert_no_values(json.dumps(metrics, ensure_ascii=False))
    # a rerun resumes: nothing is processed twice
    again = run_generalize_job(cfg)
    assert again["run"]["files_processed"] == 0 and again["documents"] == 3


def test_release_check_fails_closed() -> None:
    text = "연락처 010-2345-6789 입니다"
    hits = [("PHONE", 4, 17)]
    ents = collect_spans(text, [], [])  # the candidate set missed the hit
    assert release_check(text, text, ents, hits) == "release:hit_not_replaced:PHONE"
    ents = collect_spans(text, [], [{"type": "PHONE", "start": 4, "end": 17, "validated": None}])
    assert (
        release_check(text, "연락처 010-2345-6789", ents, hits) == "release:value_in_output:PHONE"
    )
    assert release_check(text, "연락처 [PHONE_1] 입니다", ents, hits) is None
    assert (
        release_check(text, "연락처 [PHONE_1] 010-9876-5432", ents, hits)
        == "release:detected_in_output:PHONE"
    )


def test_uncovered_hit_sends_the_document_to_failed() -> None:
    text = "메일 kim@mailbox.com 으로"
    doc = DocInput("d", text, "ko", entities=[], hits=[("EMAIL", 3, 18)])
    res = Generalizer(None).run([doc])[0]
    assert res.text is None and res.reason == "release:hit_not_replaced:EMAIL"


# --- the two-stage loop against a real HTTP server with a scripted model --------------------------


class ScriptedModel:
    """The *model* behind ``tests/support/scripted_llm.py``'s real loopback server: a scripted
    answer per prompt kind.

    The server passes each request's last message: a candidate request (``Type: …`` with
    ``[[target]]``), an attack (the edited document with ``[[candidate]]``) or, otherwise, an
    extraction (the document). extract: document substring → ``TYPE\tVALUE`` lines; candidates:
    original → candidates; guesses: candidate → guesses; ``fail``: substrings answered with HTTP
    500. Every attacked document D' is kept.
    """

    def __init__(
        self,
        extract: dict[str, str],
        candidates: dict[str, list[str]],
        guesses: dict[str, list[str]],
        fail: tuple[str, ...] = (),
    ):
        self.extract, self.candidates, self.guesses, self.fail = extract, candidates, guesses, fail
        self.calls: Counter[str] = Counter()
        self.attacked: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, user: str, attempt: int) -> str | int:
        del attempt
        if any(f in user for f in self.fail):
            return 500
        marked = re.search(r"\[\[(.+?)\]\]", user)
        if user.startswith("Type: ") and marked:
            kind = "candidates"
            text = "\n".join(
                f"{i}. {c}" for i, c in enumerate(self.candidates.get(marked.group(1), []), 1)
            )
        elif marked:
            kind, text = "attack", "\n".join(self.guesses.get(marked.group(1), ["no idea"]))
        else:
            kind, text = "extract", next((v for k, v in self.extract.items() if k in user), "")
        with self.lock:
            self.calls[kind] += 1
            if kind == "attack":
                self.attacked.append(user)
        return text


class RecordingChat(OpenAIChat):
    """The real OpenAI-compatible client, keeping the decoding settings of every request it
    sends."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        # (messages, temperature, max tokens, seed)
        self.sent: list[tuple[int, float, int, int]] = []

    def complete(self, requests: list[ChatRequest]) -> list[ChatReply]:
        self.sent += [(len(r.messages), r.temperature, r.max_tokens, r.seed) for r in requests]
        return super().complete(requests)


def scripted() -> ScriptedModel:
    """The script: ORG candidates from the model; dates and addresses from ladders; guesses per
    candidate."""
    return ScriptedModel(
        extract={
            "Jordan Sample": (
                "PERSON\tJordan Sample\nORG\tLeeds General Infirmary\nDATETIME\t3 August 2003"
            ),
            "김가상": "PERSON\t김가상\nREL\t어머니",
            "山田太郎": "PERSON\t山田太郎",
        },
        candidates={
            "Leeds General Infirmary": [
                "a hospital in Leeds",
                "a hospital in West Yorkshire",
                "a hospital in England",
            ]
        },
        guesses={
            # recovered
            "a hospital in Leeds": ["Leeds General Infirmary", "St James's University Hospital"],
            # 'infirmary'
            "a hospital in West Yorkshire": ["Pinderfields Hospital", "Bradford Royal Infirmary"],
            "a hospital in England": ["Guy's Hospital", "Addenbrooke's Hospital"],  # safe: rank 2
            "August 2003": ["3 August 2003"],  # recovered
            "2003": ["12 May 2003", "1 January 2003"],  # safe: rank 1
            "1991년 6월": ["1991년 6월 3일", "1991년 6월 20일"],  # safe: rank 0
            "서울특별시 강남구 테헤란로": ["서울특별시 강남구 테헤란로 123"],  # recovered
            # safe: rank 1 (the district is disclosed)
            "서울특별시 강남구": ["서울특별시 강남구 역삼로 5"],
            "가족": ["어머니", "아버지"],  # recovered: the only rung → label fallback
            "1985年4月": ["1985年4月1日"],
            "東京都千代田区見本町": ["東京都千代田区丸の内5-6"],
        },
    )


TYPES = (*DEFAULT_TYPES, "ORG", "DATETIME")


def openai_cfg(tmp_path: Path, url: str) -> GeneralizeJobConfig:
    """A job config for the scripted server under ``tmp_path``."""
    return GeneralizeJobConfig(
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        vault=str(tmp_path / "v"),
        backend="openai",
        model=MODEL_NAME,
        endpoint=url,
        types=TYPES,
        options={"concurrency": 4, "retries": 0},
        extract_options={"retries": 0},
    )


def test_two_stage_loop_over_http(tmp_path: Path) -> None:
    model = scripted()
    write_flagged(tmp_path / "in" / "a.parquet", DOCS, with_hits=True)
    with scripted_server(model) as server:
        cfg = openai_cfg(tmp_path, server.endpoint)
        chat = RecordingChat(server.endpoint, MODEL_NAME, concurrency=4, retries=0)
        extractor = make_extractor(
            "openai",
            model=MODEL_NAME,
            endpoint=server.endpoint,
            types=TYPES,
            options={"retries": 0},
        )
        metrics = run_generalize_job(cfg, extractor, chat)
    rows = {r["id"]: r for r in iter_generalized(tmp_path / "out")}
    assert sorted(rows) == sorted(DOCS), metrics["failed_reasons"]
    spans = {(r["id"], s["type"]): s for r in rows.values() for s in r["spans"]}
    assert (
        spans[("en-1", "ORG")]["replacement"] == "a hospital in England"
        and spans[("en-1", "ORG")]["rank"] == 2
    )
    assert (
        spans[("en-1", "DATETIME")]["replacement"] == "2003"
        and spans[("en-1", "DATETIME")]["rank"] == 1
    )
    assert (
        spans[("ko-1", "DOB")]["replacement"] == "1991년 6월"
        and spans[("ko-1", "DOB")]["rank"] == 0
    )
    assert spans[("ko-1", "ADDRESS")]["replacement"] == "서울특별시 강남구"
    assert (
        spans[("ko-1", "REL")]["kind"] == "label"
        and spans[("ko-1", "REL")]["replacement"] == "[REL_1]"
    )
    assert spans[("ja-1", "DOB")]["replacement"] == "1985年4月"
    assert spans[("ja-1", "ADDRESS")]["replacement"] == "東京都千代田区見本町"
    assert spans[("en-1", "PERSON")]["kind"] == "label"
    vault = open_vault(tmp_path / "v", KEY)
    for doc_id, row in rows.items():
        assert_no_values(row["generalized_text"])
        assert (
            restore(
                row["generalized_text"],
                row["spans"],
                vault.get(row["row_key"], writer=row["vault_file"]),
            )
            == DOCS[doc_id]
        )
    # the paper's settings: one-shot candidate prompt (4 messages), T=0.3, <= 512 new tokens, seed 0
    assert (4, 0.3, 512, 0) in chat.sent and all(s[1:] == (0.3, 512, 0) for s in chat.sent)
    # D': decided entities carry their choice, undecided ones their most specific candidate, labels
    # stay labels
    seen = model.attacked
    assert any(
        "[[a hospital in Leeds]]" in d and " on August 2003." in d and "[PHONE]" in d for d in seen
    )
    assert any("[[2003]]" in d and "a hospital in England" in d for d in seen)
    assert not any(
        "Jordan Sample" in d or "010-2345-6789" in d or "Leeds General Infirmary" in d for d in seen
    )
    # one extraction per document, one candidate call (the ORG), one attack per candidate tried
    assert model.calls["extract"] == 3 and model.calls["candidates"] == 1
    # attacks: ORG 3, DATETIME 2, ko DOB 1, ko ADDRESS 2, REL 1, ja DOB 1, ja ADDRESS 1
    assert model.calls["attack"] == 3 + 2 + 1 + 2 + 1 + 1 + 1
    assert metrics["llm_calls"] == model.calls["candidates"] + model.calls["attack"]
    assert metrics["label_fallback_per_type"]["REL"] == {
        "generalizable": 1,
        "label": 1,
        "share": 1.0,
    }
    assert metrics["entities_by_rank"]["2"] == 1 and metrics["prompt_version"].startswith(
        "generalize-"
    )
    assert metrics["attacked_entities"] == 7
    assert_no_values(json.dumps(metrics, ensure_ascii=False))


def test_repeated_documents_hit_the_caches(tmp_path: Path) -> None:
    model = scripted()
    docs = {"en-1": DOCS["en-1"], "en-2": DOCS["en-1"], "en-3": DOCS["en-1"]}
    write_flagged(tmp_path / "in" / "a.parquet", docs, with_hits=True)
    with scripted_server(model) as server:
        metrics = run_generalize_job(openai_cfg(tmp_path, server.endpoint))
    assert metrics["generalized"] == 3
    assert model.calls["candidates"] == 1 and model.calls["attack"] == 3 + 2  # as for one document
    assert metrics["cache_hits"] == 2 * (1 + 3 + 2)


def test_llm_failures_fail_closed(tmp_path: Path) -> None:
    model = scripted()
    # the attack on the second ORG candidate: HTTP 500
    model.fail = ("[[a hospital in West Yorkshire]]",)
    write_flagged(tmp_path / "in" / "a.parquet", DOCS, with_hits=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPCL_VAULT_KEY": KEY_B64}
    with scripted_server(model) as server:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "spcl.cli",
                "generalize",
                "--input",
                str(tmp_path / "in"),
                "--output",
                str(tmp_path / "out"),
                "--vault",
                str(tmp_path / "v"),
                "--backend",
                "openai",
                "--endpoint",
                server.endpoint,
                "--model",
                MODEL_NAME,
                "--types",
                ",".join(TYPES),
                "--retries",
                "1",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    # a 5xx is transient: left for a rerun, not final
    assert proc.returncode == 3, proc.stderr[-2000:]
    failed = read_rows(tmp_path / "out" / "failed")
    assert [(r["id"], r["reason"], r["transient"]) for r in failed] == [
        ("en-1", "attack:http_500", True)
    ]
    assert sorted(r["id"] for r in iter_generalized(tmp_path / "out")) == ["ja-1", "ko-1"]
    assert_no_values(proc.stdout + proc.stderr)
    # an unreachable endpoint stops the job before any file is touched (exit 1), a rerun would
    # resume
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "generalize",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "out2"),
            "--vault",
            str(tmp_path / "v"),
            "--backend",
            "openai",
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1 and "cannot reach" in proc.stderr


@pytest.mark.slow
def test_gpu_check_script_cpu_smoke(tmp_path: Path) -> None:
    """The prepared GPU check (tools/) runs end to end on CPU with a tiny random model: noise
    fails closed."""
    pytest.importorskip("transformers")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPCL_VAULT_KEY": KEY_B64, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "gpu_check_generalize.py"),
            "--output",
            str(tmp_path),
            "--docs",
            "8",
            "--hidden",
            "128",
            "--layers",
            "1",
            "--max-tokens",
            "8",
            "--batch-size",
            "8",
            "--device",
            "cpu",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((tmp_path / "gpu_check_generalize.json").read_text())
    assert summary["documents"] == 8 == summary["generalized"] + summary["failed"]
    assert summary["llm_calls"] > 0 and set(summary["failed_reasons"]) <= {
        "attack:output_truncated",
        "candidates:output_truncated",
    }


@pytest.mark.slow
def test_spark_job_matches_python_engine_and_resumes(tmp_path: Path) -> None:
    """jobs/generalize.py (Spark local[2]) finishes a half-done output; its rows equal the plain
    engine's."""
    from spcl.generalize.job import STAGE
    from spcl.generalize.runner import GeneralizeRunner
    from spcl.synth.pii import generate_records

    recs = generate_records(seed=42)["validation"][:30]
    for k in range(3):
        part = recs[k::3]
        write_flagged(
            tmp_path / "in" / f"part-{k}.parquet",
            {r["id"]: r["source_text"] for r in part},
            with_hits=k != 1,
        )
    cfg = GeneralizeJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "spark"), vault=str(tmp_path / "v")
    )
    runner = GeneralizeRunner(cfg)
    STAGE.process(runner, STAGE.plan(cfg).todo[0])  # a run that stopped after its first file
    runner.close()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SPCL_VAULT_KEY": KEY_B64,
        "PYSPARK_PYTHON": sys.executable,
    }
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "jobs" / "generalize.py"),
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "spark"),
            "--vault",
            str(tmp_path / "v"),
            "--master",
            "local[2]",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((tmp_path / "spark" / "metrics.json").read_text())
    assert metrics["run"]["engine"] == "spark" and metrics["run"]["files_processed"] == 2
    assert metrics["documents"] == len(recs) == metrics["generalized"] + metrics["failed"]
    plain = run_generalize_job(
        GeneralizeJobConfig(
            input=str(tmp_path / "in"), output=str(tmp_path / "plain"), vault=str(tmp_path / "v2")
        )
    )
    assert plain["entities_by_rank"] == metrics["entities_by_rank"]
    spark_rows = {r["id"]: r for r in iter_generalized(tmp_path / "spark")}
    plain_rows = {r["id"]: r for r in iter_generalized(tmp_path / "plain")}
    assert spark_rows.keys() == plain_rows.keys()
    for doc_id, row in plain_rows.items():
        assert spark_rows[doc_id]["generalized_text"] == row["generalized_text"]
        assert spark_rows[doc_id]["spans"] == row["spans"]
    assert sorted(open_vault(tmp_path / "v", KEY).ids()) == sorted(
        r["row_key"] for r in spark_rows.values()
    )


def test_config_section_drives_the_rules_rungs(tmp_path: Path) -> None:
    """``generalize.rules_rungs`` in the YAML config changes the rung per type (here: DOB month,
    ADDRESS label)."""
    from spcl.config import GeneralizeSection
    from spcl.generalize.engine import DEFAULT_RULES_RUNGS, GeneralizeSettings

    assert GeneralizeSection().rules_rungs == DEFAULT_RULES_RUNGS
    assert set(GeneralizeSection().model_dump()) <= set(GeneralizeSettings.model_fields)
    write_flagged(tmp_path / "in" / "a.parquet", {"ko-1": DOCS["ko-1"]}, with_hits=True)
    conf = tmp_path / "conf.yaml"
    conf.write_text(
        "generalize:\n  rules_rungs: {DOB: month, ADDRESS: label, REL: family}\n", encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPCL_VAULT_KEY": KEY_B64}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "generalize",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "out"),
            "--vault",
            str(tmp_path / "v"),
            "--conf",
            str(conf),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = next(iter(iter_generalized(tmp_path / "out")))["generalized_text"]
    assert "1991년 6월," in text and "[ADDRESS_1]" in text and "서울특별시" not in text
    conf.write_text("generalize:\n  rules_rungs: {DOB: fortnight}\n", encoding="utf-8")
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "spcl.cli",
            "generalize",
            "--input",
            str(tmp_path / "in"),
            "--output",
            str(tmp_path / "out2"),
            "--vault",
            str(tmp_path / "v"),
            "--conf",
            str(conf),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "generalize.rules_rungs" in bad.stderr


def test_invalid_hits_are_not_spans_and_missing_hits_rerun_the_detectors() -> None:
    text = "카드 4111-1111-1111-1112 / 연락처 010-2345-6789"
    invalid = {"type": "CARD", "start": 3, "end": 22, "validated": False}
    phone = {"type": "PHONE", "start": 29, "end": 42, "validated": None}
    assert [e.type for e in collect_spans(text, [], [invalid, phone])] == ["PHONE"]
    # the detectors: the card fails Luhn
    assert [e.type for e in collect_spans(text, [], None)] == ["PHONE"]
    mynumber = {"type": "MYNUMBER", "start": 29, "end": 42, "validated": True}
    ents = collect_spans(text, [("PERSON", "김가상")], [mynumber])
    # detector types map onto the extractor's (as in spcl mask)
    assert [e.type for e in ents] == ["RRN"]


def test_vault_keeps_every_runs_originals_and_duplicate_ids_restore_their_own_text(
    tmp_path: Path,
) -> None:
    """The mask stage's vault rules hold here too: files unique per run, records keyed by row
    key."""
    vault = tmp_path / "v"
    for month, texts in (
        ("m1", ["tel 010-1111-2222", "mail a@mailbox.com"]),
        ("m2", ["tel 010-3333-4444", "mail b@mailbox.com"]),
    ):
        (tmp_path / month).mkdir()
        pq.write_table(
            pa.table({"id": ["7", "7"], "text": texts}), tmp_path / month / "part-0.parquet"
        )
        run_generalize_job(
            GeneralizeJobConfig(
                input=str(tmp_path / month), output=str(tmp_path / f"out-{month}"), vault=str(vault)
            )
        )
    assert len(list(vault.glob("gen-*.jsonl"))) == 2
    store = open_vault(vault, KEY)
    for month, texts in (
        ("m1", ["tel 010-1111-2222", "mail a@mailbox.com"]),
        ("m2", ["tel 010-3333-4444", "mail b@mailbox.com"]),
    ):
        rows = list(iter_generalized(tmp_path / f"out-{month}"))
        assert len(rows) == 2 and len({r["row_key"] for r in rows}) == 2
        got = {
            restore(
                r["generalized_text"], r["spans"], store.get(r["row_key"], writer=r["vault_file"])
            )
            for r in rows
        }
        assert got == set(texts)


def test_a_changed_input_file_is_generalized_again_not_skipped(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    cfg = GeneralizeJobConfig(
        input=str(tmp_path / "in"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
    )
    pq.write_table(
        pa.table({"id": ["a"], "text": ["tel 010-1111-2222"]}), tmp_path / "in" / "part-0.parquet"
    )
    run_generalize_job(cfg)
    pq.write_table(
        pa.table({"id": ["a", "b"], "text": ["tel 010-1111-2222", "mail b@mailbox.com"]}),
        tmp_path / "in" / "part-0.parquet",
    )
    metrics = run_generalize_job(cfg)
    assert metrics["documents"] == 2
    assert sorted(r["id"] for r in iter_generalized(tmp_path / "out")) == ["a", "b"]


def test_an_output_folder_of_another_input_is_refused(tmp_path: Path) -> None:
    from spcl.mask_stage import MaskJobError

    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        pq.write_table(
            pa.table({"id": [name], "text": ["tel 010-1111-2222"]}),
            tmp_path / name / "part-0.parquet",
        )
    run_generalize_job(
        GeneralizeJobConfig(
            input=str(tmp_path / "a"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
        )
    )
    with pytest.raises(MaskJobError, match="another input"):
        run_generalize_job(
            GeneralizeJobConfig(
                input=str(tmp_path / "b"), output=str(tmp_path / "out"), vault=str(tmp_path / "v")
            )
        )
    assert [r["id"] for r in iter_generalized(tmp_path / "out")] == ["a"]


def test_a_503_outage_fails_transiently_exit_3_and_a_rerun_retries_exactly_those(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 21: 20 documents, the server answers 503 (``Retry-After: 0``) to every extraction of
    b.parquet's 12 while it is down. Each request is tried 1 + ``--retries`` times; what still fails
    is in failed/ with ``transient = true``, the run exits 3, and after the server recovers the same
    command asks again for exactly those 12 (a.parquet's 8 are never asked again) and finishes them.
    A server that answers 503 only to the first two tries of each request costs nothing but the
    retries."""
    from spcl.cli import main

    texts = {
        f"en-{i:02d}": (
            "Jordan Sample was treated at Leeds General Infirmary on 3 August 2003. "
            f"Call 010-2345-{6700 + i}."
        )
        for i in range(20)
    }
    ids = sorted(texts)
    write_flagged(tmp_path / "in" / "a.parquet", {i: texts[i] for i in ids[:8]}, with_hits=True)
    write_flagged(tmp_path / "in" / "b.parquet", {i: texts[i] for i in ids[8:]}, with_hits=True)
    model, down, asked, lock = scripted(), {"on": True, "flaky": False}, Counter(), threading.Lock()

    def script(user: str, attempt: int) -> str | int:
        # only an extraction quotes the whole text
        doc = next((i for i, t in texts.items() if t in user), None)
        if doc is not None:
            with lock:
                asked[doc] += 1
                tries = asked[doc]
            if (down["on"] and doc in ids[8:]) or (down["flaky"] and tries <= 2):
                return 503
        return model(user, attempt)

    def generalize(out: str) -> int:
        return main(
            [
                "generalize",
                "--input",
                str(tmp_path / "in"),
                "--output",
                str(tmp_path / out),
                "--vault",
                str(tmp_path / "v"),
                "--backend",
                "openai",
                "--endpoint",
                server.endpoint,
                "--model",
                MODEL_NAME,
                "--types",
                ",".join(TYPES),
                "--retries",
                "2",
                "--concurrency",
                "4",
            ]
        )

    with scripted_server(script, retry_after="0") as server, caplog.at_level(logging.DEBUG):
        assert generalize("out") == 3
        failed = read_rows(tmp_path / "out" / "failed")
        assert sorted((r["id"], r["reason"], r["transient"]) for r in failed) == [
            (i, "extract:http_503", True) for i in ids[8:]
        ]
        assert sorted(r["id"] for r in iter_generalized(tmp_path / "out")) == ids[:8]
        # bounded retries
        assert all(asked[i] == 3 for i in ids[8:]) and all(asked[i] == 1 for i in ids[:8])
        metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
        assert (metrics["failed_transient"], metrics["generalized"], metrics["documents"]) == (
            12,
            8,
            20,
        )
        assert metrics["reconciliation"]["ok"] and metrics["reconciliation"]["input_rows"] == 20
        part = next((tmp_path / "out" / "failed").glob("part-*.parquet"))
        # as if a retry was killed after writing failed/
        pq.write_table(pq.read_table(part).slice(0, 6), part)
        down["on"] = False  # the server recovers
        assert generalize("out") == 0
        assert all(asked[i] == 4 for i in ids[8:]) and all(asked[i] == 1 for i in ids[:8])
        sent = server.requests()
        assert generalize("out") == 0 and server.requests() == sent  # finished: no request at all
        rows = list(iter_generalized(tmp_path / "out"))
        assert sorted(r["id"] for r in rows) == ids and read_rows(tmp_path / "out" / "failed") == []
        metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
        assert metrics["reconciliation"] == {
            "input_rows": 20,
            "generalized": 20,
            "failed": 0,
            "ok": True,
            "uncommitted_files": [],
        }
        assert (metrics["documents"], metrics["failed_transient"]) == (20, 0)
        vault = open_vault(tmp_path / "v", KEY)
        assert all(
            restore(
                r["generalized_text"], r["spans"], vault.get(r["row_key"], writer=r["vault_file"])
            )
            == texts[r["id"]]
            for r in rows
        )
        asked.clear()
        # 503 for the first two tries of every request: the client's retries absorb it
        down["flaky"] = True
        assert generalize("flaky") == 0
        assert len(list(iter_generalized(tmp_path / "flaky"))) == 20 and all(
            asked[i] == 3 for i in ids
        )
    streams = capsys.readouterr()
    logs = caplog.text + streams.out + streams.err
    assert "failed transiently" in streams.err
    assert_no_values(logs, [*VALUES, *(f"010-2345-{6700 + i}" for i in range(20))])
