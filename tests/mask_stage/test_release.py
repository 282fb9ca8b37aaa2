"""Issue 9: the LLM stage never releases what the rules found, and a server hiccup never loses a
document.

Flagged input comes from the real filter job (python engine, rules only) over synthetic ko/ja/en
documents; the model behind ``--backend openai`` is a scripted OpenAI-compatible server on loopback
(tests/support/scripted_llm.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spcl.cli import main
from spcl.extract.backends import Extraction
from spcl.extract.contract import parse_extraction
from spcl.extract.prompt import FEW_SHOT, system_prompt
from spcl.manifest import verify_manifest
from spcl.mask import MaskResult
from spcl.mask.vault import open_vault
from spcl.mask_stage import MaskJobConfig, run_mask_job
from spcl.mask_stage.candidates import rule_hits
from spcl.mask_stage.document import mask_document
from spcl.mask_stage.inputs import derived_row_key
from spcl.mask_stage.outputs import MaskedRows, RowIdentity
from spcl.mask_stage.release import Released, check_release
from spcl.synth.pii import generate_records
from tests.support.scripted_llm import MODEL_NAME, scripted_server


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real filter job's flagged output (rules only) over 60 synthetic documents with planted
    PII."""
    root = tmp_path_factory.mktemp("filtered")
    recs = generate_records(seed=7)["test"][:60]
    (root / "crawl").mkdir()
    with open(root / "crawl" / "docs.jsonl", "w", encoding="utf-8") as fh:
        for r in recs:
            fh.write(
                json.dumps({"id": r["id"], "text": r["source_text"]}, ensure_ascii=False) + "\n"
            )
    rc = main(
        [
            "filter",
            "--input",
            str(root / "crawl"),
            "--output",
            str(root / "out"),
            "--no-screen",
            "--engine",
            "python",
        ]
    )
    assert rc == 0
    return root / "out" / "decision=flagged"


def read_rows(folder: Path) -> list[dict]:
    """All rows of the Parquet files in ``folder``."""
    return [
        row for part in sorted(folder.glob("*.parquet")) for row in pq.read_table(part).to_pylist()
    ]


def flagged_rows(folder: Path) -> list[dict]:
    """The flagged rows with their rule hits, and the row key the mask stage gives each."""
    rows = read_rows(folder)
    for r in rows:
        r.setdefault("row_key", derived_row_key(r["id"], r["source"], r["position"]))
    return rows


def rule_surfaces(row: dict) -> list[str]:
    """The surfaces of a flagged row's hits whose validator did not say False."""
    return [row["text"][h["start"] : h["end"]] for h in row["hits"] if h["validated"] is not False]


def mask_cli(flagged: Path, out: Path, vault: Path, endpoint: str, *extra: str) -> int:
    """``spcl mask --backend openai`` against a scripted server; returns the exit code."""
    return main(
        [
            "mask",
            "--input",
            str(flagged),
            "--output",
            str(out),
            "--vault",
            str(vault),
            "--backend",
            "openai",
            "--endpoint",
            endpoint,
            "--model",
            MODEL_NAME,
            "--retries",
            "0",
            "--timeout",
            "2",
            "--concurrency",
            "4",
            *extra,
        ]
    )


def assert_no_rule_value_released(flagged: Path, out: Path) -> None:
    """No rule-found value of any flagged document appears in masked/."""
    texts = {r["row_key"]: r["masked_text"] for r in read_rows(out / "masked")}
    src = {r["row_key"]: r for r in flagged_rows(flagged)}
    assert texts, "nothing was masked"
    for key, masked in texts.items():
        for surface in rule_surfaces(src[key]):
            assert surface not in masked


def test_a_model_that_finds_nothing_never_releases_rule_values(
    flagged: Path, tmp_path: Path
) -> None:
    rows = flagged_rows(flagged)
    assert len(rows) >= 40 and all(r["hits"] for r in rows)
    with scripted_server(lambda doc, attempt: "") as server:
        rc = mask_cli(flagged, tmp_path / "out", tmp_path / "vault", server.endpoint)
    assert rc == 0
    masked = read_rows(tmp_path / "out" / "masked")
    failed = read_rows(tmp_path / "out" / "failed")
    assert len(masked) + len(failed) == len(rows)
    assert len(masked) >= 0.9 * len(rows)  # the rules' candidates make these releasable
    assert_no_rule_value_released(flagged, tmp_path / "out")
    assert all("uncovered_rule_hit" in f["reason"] or "rule_value" in f["reason"] for f in failed)
    spans = [s for r in masked for s in r["spans"]]
    assert spans and all(s["found_by"] for s in spans)
    assert any("rules" in s["found_by"] for s in spans) and not any(
        "extractor" in s["found_by"] for s in spans
    )
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["reconciliation"]["ok"] and metrics["spans_found_by"]["rules"] >= len(masked)


def test_a_model_missing_one_of_two_values_still_masks_both(flagged: Path, tmp_path: Path) -> None:
    rows = flagged_rows(flagged)
    both = [r for r in rows if {h["type"] for h in r["hits"]} >= {"PHONE", "EMAIL"}]
    assert both, "the synthetic set plants documents with a phone and an e-mail"

    def only_email(doc: str, attempt: int) -> str:
        hits = [h for h in rule_hits(doc) if h.type == "EMAIL"]
        return "".join(f"EMAIL\t{doc[h.start : h.end]}\n" for h in hits)

    with scripted_server(only_email) as server:
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", server.endpoint) == 0
    assert_no_rule_value_released(flagged, tmp_path / "out")
    masked = {r["row_key"]: r for r in read_rows(tmp_path / "out" / "masked")}
    row = masked[both[0]["row_key"]]
    by_type = {s["type"]: s["found_by"] for s in row["spans"]}
    assert by_type["EMAIL"] == ["extractor", "rules"] and by_type["PHONE"] == ["rules"]


def test_503_then_recovery_masks_every_document_exactly_once(flagged: Path, tmp_path: Path) -> None:
    n = len(flagged_rows(flagged))
    down = {"on": True}
    with scripted_server(lambda doc, attempt: 503 if down["on"] else "") as server:
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", server.endpoint) == 3
        failed = read_rows(tmp_path / "out" / "failed")
        assert len(failed) == n and all(
            f["transient"] and f["reason"] == "http_503" for f in failed
        )
        metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
        assert metrics["failed_transient"] == n and metrics["failed_permanent"] == 0
        assert metrics["reconciliation"]["ok"]
        down["on"] = False
        before = server.requests()
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", server.endpoint) == 0
        assert server.requests() - before == n  # every document retried once
        # a third run has nothing left to do
        before = server.requests()
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", server.endpoint) == 0
        assert server.requests() == before
    masked = read_rows(tmp_path / "out" / "masked")
    assert not read_rows(tmp_path / "out" / "failed")
    assert sorted(r["row_key"] for r in masked) == sorted(
        r["row_key"] for r in flagged_rows(flagged)
    )
    vault = open_vault(tmp_path / "vault")
    assert len(vault) == n
    assert_no_rule_value_released(flagged, tmp_path / "out")


def test_a_rerun_retries_exactly_the_transient_failures(flagged: Path, tmp_path: Path) -> None:
    rows = flagged_rows(flagged)
    flaky = {r["text"] for r in rows[::3]}
    with scripted_server(
        lambda doc, attempt: (
            429
            if doc in flaky and attempt == 1
            else ("hang", 3.0)
            if doc in flaky and attempt == 2
            else ""
        )
    ) as server:
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", server.endpoint) == 3
        reasons = {f["reason"] for f in read_rows(tmp_path / "out" / "failed")}
        assert reasons == {"http_429"}
        first_masked = {r["row_key"]: r for r in read_rows(tmp_path / "out" / "masked")}
        # a timeout now
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", server.endpoint) == 3
        assert {f["reason"] for f in read_rows(tmp_path / "out" / "failed")} == {"timeout"}
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", server.endpoint) == 0
        assert all(server.attempts[t] == 3 for t in flaky)
        assert all(server.attempts[r["text"]] == 1 for r in rows if r["text"] not in flaky)
    masked = {r["row_key"]: r for r in read_rows(tmp_path / "out" / "masked")}
    assert len(masked) == len(rows)
    for key, row in first_masked.items():  # rows masked by the first run are kept as they were
        assert (
            masked[key]["masked_text"] == row["masked_text"]
            and masked[key]["vault_file"] == row["vault_file"]
        )
    report = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert report["reconciliation"] == {
        "input_rows": len(rows),
        "masked": len(rows),
        "failed": 0,
        "ok": True,
        "uncommitted_files": [],
    }


def test_permanent_failures_are_retried_only_when_asked(flagged: Path, tmp_path: Path) -> None:
    rows = flagged_rows(flagged)
    chatty = {r["text"] for r in rows[:5]}
    with scripted_server(
        lambda doc, attempt: "Sure! Here you go." if doc in chatty and attempt == 1 else ""
    ) as s:
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", s.endpoint) == 0
        failed = read_rows(tmp_path / "out" / "failed")
        assert len(failed) == 5 and {(f["reason"], f["transient"]) for f in failed} == {
            ("unparseable_output", False)
        }
        assert mask_cli(flagged, tmp_path / "out", tmp_path / "vault", s.endpoint) == 0
        assert len(read_rows(tmp_path / "out" / "failed")) == 5  # permanent: not retried by default
        assert (
            mask_cli(flagged, tmp_path / "out", tmp_path / "vault", s.endpoint, "--retry-failed")
            == 0
        )
    assert not read_rows(tmp_path / "out" / "failed")
    assert len(read_rows(tmp_path / "out" / "masked")) == len(rows)


def test_types_are_validated_and_a_flagging_type_left_out_fails_closed(
    flagged: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    with scripted_server(lambda doc, attempt: "") as server:
        rc = mask_cli(
            flagged, tmp_path / "o1", tmp_path / "v1", server.endpoint, "--types", "EMIAL"
        )
        assert rc == 2 and "EMIAL" in capsys.readouterr().err
        # ADDRESS too: the English addresses of the synthetic set are rule hits since issue 25
        assert (
            mask_cli(
                flagged,
                tmp_path / "o2",
                tmp_path / "v2",
                server.endpoint,
                "--types",
                "EMAIL,ADDRESS",
            )
            == 0
        )
    failed = read_rows(tmp_path / "o2" / "failed")
    assert failed and all(f["reason"].startswith("uncovered_rule_hit:") for f in failed)
    assert "uncovered_rule_hit:PHONE" in {f["reason"] for f in failed}
    assert_no_rule_value_released(flagged, tmp_path / "o2")


def _write(folder: Path, name: str, ids: list, texts: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    pq.write_table(pa.table({"id": pa.array(ids, pa.string()), "text": texts}), path)
    return path


def test_rows_without_id_or_text_are_failed_and_counted(tmp_path: Path) -> None:
    _write(
        tmp_path / "in",
        "p.parquet",
        [None, "b", "c"],
        ["tel 010-1234-5678", None, "mail x@mailbox.com"],
    )
    metrics = run_mask_job(
        MaskJobConfig(str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "v"))
    )
    failed = {(f["id"], f["reason"]) for f in read_rows(tmp_path / "out" / "failed")}
    assert failed == {(None, "no_id"), ("b", "no_text")}
    assert metrics["reconciliation"] == {
        "input_rows": 3,
        "masked": 1,
        "failed": 2,
        "ok": True,
        "uncommitted_files": [],
    }


def test_a_changed_input_file_is_redone_not_skipped(tmp_path: Path) -> None:
    cfg = MaskJobConfig(str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "v"))
    _write(tmp_path / "in", "part-0.parquet", ["a"], ["tel 010-1234-5678"])
    run_mask_job(cfg)
    _write(
        tmp_path / "in", "part-0.parquet", ["a", "b"], ["tel 010-1234-5678", "mail y@mailbox.com"]
    )
    metrics = run_mask_job(
        MaskJobConfig(str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "v"))
    )
    assert metrics["run"]["files_processed"] == 1 and metrics["documents"] == 2
    assert sorted(r["id"] for r in read_rows(tmp_path / "out" / "masked")) == ["a", "b"]
    assert metrics["reconciliation"]["ok"]


def test_vault_keeps_every_runs_mappings_and_duplicate_ids_restore_their_own_text(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    # two monthly runs of the same path into one vault; the second month repeats ids with other
    # texts
    _write(
        tmp_path / "m1", "part-0.parquet", ["7", "8"], ["tel 010-1111-2222", "mail a@mailbox.com"]
    )
    _write(
        tmp_path / "m2", "part-0.parquet", ["7", "7"], ["tel 010-3333-4444", "mail b@mailbox.com"]
    )
    for month in ("m1", "m2"):
        run_mask_job(
            MaskJobConfig(str(tmp_path / month), str(tmp_path / f"out-{month}"), str(vault))
        )
    assert len(list(vault.glob("mask-*.jsonl"))) == 2
    for month, expected in (
        ("m1", {"tel 010-1111-2222", "mail a@mailbox.com"}),
        ("m2", {"tel 010-3333-4444", "mail b@mailbox.com"}),
    ):
        rc = main(
            [
                "unmask",
                "--masked",
                str(tmp_path / f"out-{month}"),
                "--vault",
                str(vault),
                "--output",
                str(tmp_path / f"restored-{month}"),
            ]
        )
        assert rc == 0
        assert {r["text"] for r in read_rows(tmp_path / f"restored-{month}")} == expected
    assert all(p.stat().st_mode & 0o077 == 0 for p in (tmp_path / "restored-m1").glob("*.parquet"))


def test_unmask_refuses_an_ambiguous_or_missing_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _write(tmp_path / "in", "p.parquet", ["a", "b"], ["tel 010-1111-2222", "mail a@mailbox.com"])
    run_mask_job(MaskJobConfig(str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "v")))
    [vfile] = (tmp_path / "v").glob("mask-*.jsonl")
    first = vfile.read_text().splitlines()[0]
    vfile.write_text(vfile.read_text() + first + "\n")  # the same row key twice in one file
    rc = main(
        [
            "unmask",
            "--masked",
            str(tmp_path / "out"),
            "--vault",
            str(tmp_path / "v"),
            "--output",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "ambiguous_mapping" in err and "010-1111-2222" not in err
    assert len(read_rows(tmp_path / "r")) == 1


def test_outputs_and_vault_carry_verifiable_manifests(tmp_path: Path) -> None:
    _write(tmp_path / "in", "p.parquet", ["a"], ["tel 010-1111-2222"])
    metrics = run_mask_job(
        MaskJobConfig(str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "v"))
    )
    for folder in (tmp_path / "out", tmp_path / "v"):
        assert verify_manifest(folder).ok
        doc = json.loads((folder / "manifest.json").read_text())
        assert doc["config_hash"] == metrics["config_hash"] and doc["prompt_version"] == "none"
    assert "masked/part-" in " ".join(
        json.loads((tmp_path / "out" / "manifest.json").read_text())["files"]
    )


def test_masked_rows_take_only_released_documents() -> None:
    rows = MaskedRows()
    who = RowIdentity("openai", "m", "extract-v2", "f.parquet", "h")
    forged = Released("x", [], [], {}, object())
    with pytest.raises(TypeError, match="release"):
        rows.add(
            "a",
            "k",
            None,
            forged,
            who,
            extracted_by="openai",
            model="m",
            prompt_version="extract-v2",
            vault_file="w",
        )
    assert len(rows) == 0


def test_release_check_refuses_uncovered_hits() -> None:
    text = "tel 010-1234-5678"
    [hit] = rule_hits(text)
    unmasked = MaskResult(text, {}, [])
    assert check_release(text, unmasked, [hit]) == "uncovered_rule_hit:PHONE"


# --- property: whatever the extractor says, no rule-hit surface is released -----------------------

_VALUES = [
    "010-2345-6789",
    "kim.lee@mailbox.org",
    "900101-1234568",
    "4111 1111 1111 1111",
    "02-555-0123",
    "090-1234-5678",
    "taro@mailbox.jp",
]
_FILLER = [
    "연락처는",
    "メールは",
    "Call me at",
    "주민번호",
    "카드",
    "です。",
    "입니다.",
    "and",
    "/",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(st.sampled_from(_VALUES + _FILLER), min_size=1, max_size=12),
    said=st.lists(
        st.tuples(
            st.sampled_from(["PHONE", "EMAIL", "RRN", "CARD", "PERSON"]),
            st.sampled_from([*_VALUES, "John Invented", "0000"]),
        ),
        max_size=5,
    ),
    names=st.booleans(),
)
def test_released_text_never_holds_a_rule_hit_surface(
    parts: list[str], said: list[tuple[str, str]], names: bool
) -> None:
    text = " ".join(parts)
    hits = rule_hits(text)
    raw = "".join(f"{t}\t{v}\n" for t, v in said)
    outcome = mask_document(
        text,
        Extraction(raw=raw),
        hits,
        ("PERSON", "RRN", "DOB", "REL", "ADDRESS", "PHONE", "EMAIL", "ACCOUNT", "CARD"),
        names,
    )
    if outcome.released is None:
        assert outcome.reason  # failed closed, with a reason
        return
    for h in hits:
        assert text[h.start : h.end] not in outcome.released.masked_text


# --- prompt and parser agree ----------------------------------------------------------------------


@pytest.mark.parametrize(("doc", "answer"), FEW_SHOT)
def test_every_few_shot_answer_parses_against_its_own_document(doc: str, answer: str) -> None:
    res = parse_extraction(answer, doc)
    assert res.parse_success
    assert len(res.candidates) == len([line for line in answer.splitlines() if line.strip()])
    assert not res.hallucinated_rows


def test_the_nothing_found_example_is_shown_as_an_empty_output() -> None:
    prompt = system_prompt()
    assert "(nothing)" not in prompt
    assert any(answer == "" for _, answer in FEW_SHOT)
    assert parse_extraction("", "anything").parse_success


@pytest.mark.parametrize(
    "hidden",
    [
        "010\u200b-1234-5678",
        "010-12\u20603\u200d4-5678",
        "𝟎𝟏𝟎-𝟏𝟐𝟑𝟒-𝟓𝟔𝟕𝟖",
        "kim\u00ad.lee@mailbox.org",
    ],
)
def test_values_written_with_invisible_or_look_alike_characters_are_masked_whole(
    hidden: str,
) -> None:
    text = f"연락처 {hidden} 입니다"
    hits = rule_hits(text)
    assert hits, "the detectors see through the hiding characters"
    outcome = mask_document(text, Extraction(raw=""), hits, ("PHONE", "EMAIL"), False)
    assert outcome.released is not None
    # the whole written value is one token, its hidden characters included
    assert re.fullmatch(r"연락처 \[(PHONE|EMAIL)_1\] 입니다", outcome.released.masked_text)


def test_output_or_vault_inside_the_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _write(tmp_path / "in", "p.parquet", ["a"], ["tel 010-1111-2222"])
    before = (tmp_path / "in" / "p.parquet").read_bytes()
    for out, vault in (
        (tmp_path / "in" / "masked", tmp_path / "v"),
        (tmp_path / "o", tmp_path / "in" / "vault"),
        (tmp_path / "in", tmp_path / "v2"),
    ):
        rc = main(
            ["mask", "--input", str(tmp_path / "in"), "--output", str(out), "--vault", str(vault)]
        )
        assert rc == 2 and "refusing to write there" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "in").iterdir()] == ["p.parquet"]
    assert (tmp_path / "in" / "p.parquet").read_bytes() == before


def test_an_output_folder_of_another_input_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _write(tmp_path / "a", "part-0.parquet", ["a"], ["tel 010-1111-2222"])
    _write(tmp_path / "b", "part-0.parquet", ["b"], ["tel 010-3333-4444"])
    base = ["mask", "--output", str(tmp_path / "out"), "--vault", str(tmp_path / "v")]
    assert main([*base, "--input", str(tmp_path / "a")]) == 0
    before = {p: p.read_bytes() for p in (tmp_path / "out" / "masked").glob("*.parquet")}
    assert main([*base, "--input", str(tmp_path / "b")]) == 1
    assert "holds the results of another input" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in (tmp_path / "out" / "masked").glob("*.parquet")} == before
