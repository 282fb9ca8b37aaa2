"""spcl inside other pipelines: the plain function, a real datatrove pipeline, a real
``datasets.Dataset`` map.

Each entry point must decide exactly what ``spcl filter`` decides on the same records (it runs the
same batch function) and keep every bad row with its reason.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spcl.integrations import SCREEN_COLUMNS, screen_texts
from spcl.integrations import rows as rows_module
from spcl.io.record_rows import text_problem
from tests.support.integration_corpus import BAD, BAD_REASONS, filter_verdicts, records, verdict
from tests.support.integration_corpus import settings as corpus_settings

ROOT_MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(scope="module")
def recs() -> list[dict[str, Any]]:
    return records()


@pytest.fixture(scope="module")
def expected(
    recs: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """``spcl filter``'s verdicts on the records, by id."""
    return filter_verdicts(recs, tmp_path_factory.mktemp("filter"), corpus_settings())


def _screened_verdict(s: Any) -> dict[str, Any]:
    return verdict(
        {
            "decision": s.decision,
            "reasons": list(s.reasons),
            "lang": s.lang,
            "hits": [
                {
                    "type": h.type,
                    "start": h.start,
                    "end": h.end,
                    "validated": h.validated,
                    "detector": h.detector,
                }
                for h in s.hits
            ],
            "top_category": s.top_category,
            "quarantine_reason": s.quarantine_reason,
            "scores": s.scores,
            "config_hash": s.config_hash,
            "model_version": s.model_version,
        }
    )


def test_corpus_has_every_decision(expected: dict[str, dict[str, Any]]) -> None:
    decisions = {v["decision"] for v in expected.values()}
    assert decisions == {"clean", "flagged", "quarantine"}
    assert {k: expected[k]["quarantine_reason"] for k in BAD} == BAD_REASONS


def test_screen_texts_equals_filter(
    recs: list[dict[str, Any]], expected: dict[str, dict[str, Any]]
) -> None:
    out = screen_texts([r["text"] for r in recs], [r["id"] for r in recs], corpus_settings())
    assert [s.id for s in out] == [r["id"] for r in recs]  # input order, one verdict per text
    assert {s.id: _screened_verdict(s) for s in out} == expected
    assert len({s.row_key for s in out}) == len(out)


def test_models_load_once_per_process() -> None:
    from spcl.filter.batch import context_for

    screen_texts(["週末は晴れ"], settings=corpus_settings())
    before = context_for.cache_info()
    for text in ("a", "mail: a.b@mailbox.com"):
        screen_texts([text], settings=corpus_settings())
    after = context_for.cache_info()
    assert after.misses == before.misses and after.hits == before.hits + 2


def test_screen_texts_doctest() -> None:
    result = doctest.testmod(rows_module)
    assert result.attempted >= 3 and result.failed == 0


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.integers(),
            st.text(max_size=40),
            st.sampled_from(["a\x00b", "   ", "x" * 3001, "mail: a.b@mailbox.com", "週末は晴れ"]),
        ),
        max_size=30,
    )
)
def test_every_value_gets_one_verdict_in_order(values: list[Any]) -> None:
    ids = [f"v{i}" for i in range(len(values))]
    out = screen_texts(values, ids, corpus_settings())
    assert [s.id for s in out] == ids
    limits = corpus_settings().input
    for value, s in zip(values, out, strict=True):
        problem = text_problem(value, limits)
        assert (s.decision == "quarantine") == (problem is not None)
        assert s.quarantine_reason == problem
        assert s.decision in ("clean", "flagged", "quarantine")


# --- datatrove ------------------------------------------------------------------------------------


def _read_jsonl_folder(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for p in sorted(folder.glob("*.jsonl"))
        for line in p.read_text().splitlines()
    ]


def test_datatrove_pipeline_filter_equals_filter(
    recs: list[dict[str, Any]], expected: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    pytest.importorskip("datatrove")
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from spcl.integrations.datatrove_steps import SpclFilter

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "crawl.jsonl").write_text(
        "".join(
            json.dumps(r, ensure_ascii=False) + "\n" for r in recs if isinstance(r["text"], str)
        )
    )
    step = SpclFilter(
        exclusion_writer=JsonlWriter(str(tmp_path / "excluded"), compression=None),
        batch_size=50,
        settings=corpus_settings(),
    )
    LocalPipelineExecutor(
        [
            JsonlReader(str(tmp_path / "in")),
            step,
            JsonlWriter(str(tmp_path / "kept"), compression=None),
        ],
        tasks=1,
        workers=1,
        logging_dir=str(tmp_path / "logs"),
    ).run()
    kept, excluded = (
        _read_jsonl_folder(tmp_path / "kept"),
        _read_jsonl_folder(tmp_path / "excluded"),
    )
    # datatrove's own reader skips empty texts before any step sees them; every other record reaches
    # spcl
    reached = {r["id"] for r in recs if isinstance(r["text"], str) and r["text"]}
    assert sorted(d["id"] for d in kept + excluded) == sorted(reached)
    assert {d["id"] for d in kept} == {i for i in reached if expected[i]["decision"] == "clean"}
    for doc in kept:  # clean documents pass unchanged
        assert not any(k.startswith("spcl_") for k in doc["metadata"])
    for doc in excluded:
        want, meta = expected[doc["id"]], doc["metadata"]
        assert meta["filter_reason"] == want["decision"] != "clean"
        assert verdict({k.removeprefix("spcl_"): v for k, v in meta.items()}) == want
    assert {
        d["id"]: d["metadata"]["spcl_quarantine_reason"] for d in excluded if d["id"] in BAD
    } == {k: v for k, v in BAD_REASONS.items() if k in reached}
    stats = {
        s["name"]: s["stats"] for s in json.loads((tmp_path / "logs" / "stats.json").read_text())
    }
    counters = {k: v["total"] if isinstance(v, dict) else v for k, v in stats[str(step)].items()}
    counts = {
        d: sum(expected[i]["decision"] == d for i in reached)
        for d in ("clean", "flagged", "quarantine")
    }
    assert counters["spcl_clean"] == counters["forwarded"] == counts["clean"]
    assert counters["dropped_flagged"] == counters["spcl_flagged"] == counts["flagged"]
    assert counters["dropped_quarantine"] == counts["quarantine"]
    assert counters["quarantine_text_contains_nul"] == counters["quarantine_text_too_long"] == 1
    assert counters["quarantine_empty_text"] == 1
    assert counters["flagged_rule:EMAIL"] == sum(
        "rule:EMAIL" in expected[i]["reasons"] for i in reached
    )
    assert "taro.yamada" not in json.dumps(stats)


def test_datatrove_annotator_and_unreadable_documents(expected: dict[str, dict[str, Any]]) -> None:
    pytest.importorskip("datatrove")
    from datatrove.data import Document

    from spcl.integrations.datatrove_steps import SpclAnnotator, SpclFilter

    # documents a custom reader could make: text None or a number (datatrove's JsonlReader crashes
    # on these)
    docs = [Document(text=BAD[k], id=k) for k in BAD] + [
        Document(text="週末は家族で近くの公園に出かけました。", id="plain-ja")
    ]
    annotated = list(SpclAnnotator(batch_size=4, settings=corpus_settings())(iter(docs)))
    assert [d.id for d in annotated] == [d.id for d in docs]  # nothing dropped, order kept
    for doc in annotated:
        assert (
            verdict({k.removeprefix("spcl_"): v for k, v in doc.metadata.items()})
            == expected[doc.id]
        )
    fresh = [Document(text=BAD[k], id=k) for k in BAD]
    # none forwarded, no exception
    assert list(SpclFilter(settings=corpus_settings())(iter(fresh))) == []


# --- Hugging Face datasets ------------------------------------------------------------------------


def test_datasets_map_equals_filter(
    recs: list[dict[str, Any]], expected: dict[str, dict[str, Any]]
) -> None:
    datasets = pytest.importorskip("datasets")
    from spcl.integrations.hf import screen_dataset

    # an Arrow string column holds no numbers
    usable = [r for r in recs if not isinstance(r["text"], int)]
    ds = datasets.Dataset.from_list([{**r, "keep": i} for i, r in enumerate(usable)])
    out = screen_dataset(ds, settings=corpus_settings(), batch_size=37)
    assert len(out) == len(ds)
    assert out["id"] == ds["id"] and out["keep"] == ds["keep"] and out["text"] == ds["text"]
    assert out.column_names == [*ds.column_names, *SCREEN_COLUMNS]
    got = {r["id"]: verdict(r) for r in out}
    assert got == {r["id"]: expected[r["id"]] for r in usable}
    assert len(set(out["row_key"])) == len(out)


def test_datasets_non_string_column_and_clash() -> None:
    datasets = pytest.importorskip("datasets")
    from spcl.integrations.hf import screen_dataset

    ds = datasets.Dataset.from_dict({"id": ["a", "b"], "text": [1, 2]})
    out = screen_dataset(ds, settings=corpus_settings())
    assert (
        out["decision"] == ["quarantine"] * 2
        and out["quarantine_reason"] == ["text_not_string"] * 2
    )
    with pytest.raises(ValueError, match="'lang'"):
        screen_dataset(datasets.Dataset.from_dict({"text": ["x"], "lang": ["ja"]}), id_col=None)
    with pytest.raises(ValueError, match="'body'"):
        screen_dataset(ds, text_col="body")


# --- masking in someone else's engine -------------------------------------------------------------

MASK_KEY = bytes(range(32))


@pytest.fixture()
def vault_key_env(monkeypatch: pytest.MonkeyPatch) -> bytes:
    import base64

    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(MASK_KEY).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)
    return MASK_KEY


PLANTED = {
    "p": "연락처 010-2345-6789 로 연락 주세요. 카드 4111-1111-1111-1111",
    "e": "mail: taro.yamada@mailbox.com",
    "c": "週末は家族で近くの公園に出かけました。",
}


def _unmask_dataset_rows(rows: list[dict[str, Any]], vault: Path, tmp: Path) -> dict[str, str]:
    """Restore masked rows through ``spcl unmask`` (the rows written as a masked/ Parquet part)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from spcl.mask_stage import unmask_output

    folder = tmp / "m" / "masked"
    folder.mkdir(parents=True)
    pq.write_table(
        pa.table(
            {
                "id": [r["id"] for r in rows],
                "row_key": [r["row_key"] for r in rows],
                "masked_text": [r["text"] for r in rows],
                "spans": [r["spans"] for r in rows],
                "vault_file": [r["vault_file"] for r in rows],
            }
        ),
        folder / "part-0.parquet",
    )
    report = unmask_output(tmp / "m", vault, tmp / "restored", MASK_KEY)
    assert not report.refused
    return {r["id"]: r["text"] for r in pq.read_table(tmp / "restored").to_pylist()}


def test_datatrove_mask_step_masks_drops_and_round_trips(
    tmp_path: Path, vault_key_env: bytes
) -> None:
    pytest.importorskip("datatrove")
    from datatrove.data import Document
    from datatrove.pipeline.writers import JsonlWriter

    from spcl.integrations.datatrove_steps import SpclMask

    docs = [Document(text=t, id=k) for k, t in PLANTED.items()] + [
        Document(text=None, id="none"),  # type: ignore
        Document(text=7, id="int"),
    ]  # type: ignore
    step = SpclMask(
        str(tmp_path / "vault"),
        exclusion_writer=JsonlWriter(str(tmp_path / "x"), compression=None),
        batch_size=2,
        settings=corpus_settings(),
        operators=["PHONE=surrogate"],
    )
    out = list(step(iter(docs)))
    assert [d.id for d in out] == ["p", "e", "c"]
    by = {d.id: d for d in out}
    assert by["c"].text == PLANTED["c"] and by["c"].metadata["spcl_mask_status"] == "clean"
    for k in ("p", "e"):
        assert by[k].metadata["spcl_mask_status"] == "masked"
    for value in ("010-2345-6789", "4111-1111-1111-1111", "taro.yamada@mailbox.com"):
        assert all(value not in d.text for d in out)
    assert "010-" in by["p"].text  # a surrogate of the same national format
    assert step.stats["spcl_masked"].total == 2 and step.stats["spcl_quarantine"].total == 2
    excluded = [
        json.loads(line) for f in (tmp_path / "x").glob("*") for line in f.read_text().splitlines()
    ]
    assert sorted(e["id"] for e in excluded) == ["int", "none"]
    assert {e["metadata"]["spcl_mask_reason"] for e in excluded} == {
        "missing_text_field",
        "text_not_string",
    }
    rows = [
        {
            "id": d.id,
            "row_key": d.metadata["spcl_row_key"],
            "text": d.text,
            "spans": d.metadata["spcl_mask_spans"],
            "vault_file": d.metadata["spcl_vault_file"],
        }
        for d in out
        if d.id != "c"
    ]
    assert _unmask_dataset_rows(rows, tmp_path / "vault", tmp_path) == {
        k: PLANTED[k] for k in ("p", "e")
    }


def test_datatrove_filter_writes_unusual_documents_to_the_exclusion_writer(tmp_path: Path) -> None:
    """Text None, an int and a lone surrogate: each excluded with its reason, the rank never dies,
    nothing from the text in the log."""
    pytest.importorskip("datatrove")
    from datatrove.data import Document
    from datatrove.pipeline.writers import JsonlWriter
    from loguru import logger

    from spcl.integrations.datatrove_steps import SpclFilter

    lines: list[str] = []
    sink = logger.add(lines.append, level="DEBUG")
    try:
        docs = [
            Document(text=None, id="n"),
            Document(text=5, id="i"),  # type: ignore[arg-type]
            Document(text="card 4111 1111 1111 1111 \ud800 end", id="s"),
            Document(text="晴れ", id="c"),
        ]
        step = SpclFilter(
            exclusion_writer=JsonlWriter(str(tmp_path / "x"), compression=None),
            settings=corpus_settings(),
        )
        assert [d.id for d in step(iter(docs))] == ["c"]
    finally:
        logger.remove(sink)
    excluded = {
        e["id"]: e
        for f in (tmp_path / "x").glob("*")
        for e in map(json.loads, f.read_text().splitlines())
    }
    assert set(excluded) == {"n", "i", "s"}
    assert {k: e["metadata"]["spcl_quarantine_reason"] for k, e in excluded.items()} == {
        "n": "missing_text_field",
        "i": "text_not_string",
        "s": "invalid_unicode_surrogate",
    }
    assert (
        excluded["i"]["metadata"]["spcl_text_type"] == "int"
        and excluded["s"]["metadata"]["spcl_text_escaped"]
    )
    assert not any("4111" in line for line in lines)


def test_datasets_mask_dataset_masks_and_accounts(tmp_path: Path, vault_key_env: bytes) -> None:
    datasets = pytest.importorskip("datasets")
    from spcl.integrations.hf import mask_dataset

    ds = datasets.Dataset.from_list(
        [{"id": k, "text": t} for k, t in PLANTED.items()] + [{"id": "nul", "text": "a\x00b"}]
    )
    out = mask_dataset(ds, tmp_path / "vault", settings=corpus_settings(), batch_size=3)
    status = dict(zip(out["id"], out["mask_status"], strict=True))
    assert status == {"p": "masked", "e": "masked", "c": "clean", "nul": "quarantine"}
    texts = dict(zip(out["id"], out["text"], strict=True))
    assert texts["c"] == PLANTED["c"] and texts["nul"] is None
    assert "[PHONE_1]" in texts["p"] and "[EMAIL_1]" in texts["e"]
    rows = [
        {
            "id": r["id"],
            "row_key": r["row_key"],
            "text": r["text"],
            "spans": r["mask_spans"],
            "vault_file": r["vault_file"],
        }
        for r in out
        if r["mask_status"] == "masked"
    ]
    assert _unmask_dataset_rows(rows, tmp_path / "vault", tmp_path) == {
        k: PLANTED[k] for k in ("p", "e")
    }


def test_datasets_cache_follows_the_screen_model(tmp_path: Path) -> None:
    """A disk-backed dataset screened with a model, then the model changes in place: the map is
    recomputed."""
    import shutil

    datasets = pytest.importorskip("datasets")
    from spcl.integrations.hf import screen_dataset

    model = tmp_path / "model"
    shutil.copytree(ROOT_MODELS / "screen-default", model)
    st = corpus_settings().model_copy(
        update={"screen": corpus_settings().screen.model_copy(update={"model": str(model)})}
    )
    datasets.Dataset.from_list([{"id": "a", "text": "週末は晴れ"}]).save_to_disk(
        str(tmp_path / "ds")
    )
    ds = datasets.load_from_disk(str(tmp_path / "ds"))
    first = screen_dataset(ds, settings=st)
    card = json.loads((model / "model_card.json").read_text())
    card["name"] = "screen-renamed"
    (model / "model_card.json").write_text(json.dumps(card))
    second = screen_dataset(ds, settings=st)
    assert first["model_version"][0].startswith("screen-default@")
    assert second["model_version"][0].startswith("screen-renamed@")
