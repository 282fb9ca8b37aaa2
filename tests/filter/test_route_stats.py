from __future__ import annotations

import pyarrow as pa

from spcl.config import PolicySettings
from spcl.detect.base import Hit
from spcl.filter.route import decide, reported_hits, rule_reasons, screen_reasons
from spcl.filter.stats import batch_stats, merge_stats, summarize
from spcl.io.schema import OUTPUT_SCHEMA

PHONE = Hit("PHONE", 0, 13, None, "phone_kr@1")
BAD_CARD = Hit("CARD", 20, 39, False, "card@1")
EMAIL = Hit("EMAIL", 40, 60, None, "email@1")


def test_policy_flag_count_ignore() -> None:
    policy = PolicySettings(PHONE="count", EMAIL="flag", CARD="ignore")
    hits = [PHONE, EMAIL, BAD_CARD]
    assert rule_reasons(hits, policy) == ["rule:EMAIL"]
    assert reported_hits(hits, policy) == [PHONE, EMAIL]
    assert rule_reasons([PHONE], policy) == []


def test_invalid_hits_never_flag_and_min_hits() -> None:
    assert rule_reasons([BAD_CARD], PolicySettings()) == []
    assert rule_reasons([PHONE], PolicySettings(min_hits=2)) == []
    assert rule_reasons([PHONE, EMAIL], PolicySettings(min_hits=2)) == ["rule:EMAIL", "rule:PHONE"]


def test_screen_reasons_and_decision() -> None:
    assert screen_reasons({"lgbm": True, "svc": False}) == ["screen:lgbm"]
    assert screen_reasons({"lgbm": True, "svc": True}) == ["screen:lgbm", "screen:svc"]
    assert decide([]) == "clean" and decide(["screen:svc"]) == "flagged"


def _out(rows: list[dict]) -> pa.Table:
    base = {name: None for name in OUTPUT_SCHEMA.names}
    return pa.Table.from_pylist(
        [{**base, "config_hash": "h", "position": 0, "source": "s", **r} for r in rows],
        schema=OUTPUT_SCHEMA,
    )


def test_stats_count_what_was_written_and_reconcile() -> None:
    hit = {"type": "PHONE", "start": 0, "end": 3, "validated": None, "detector": "p@1"}
    table = _out(
        [
            {
                "id": "1",
                "decision": "flagged",
                "lang": "ko",
                "hits": [hit, hit],
                "reasons": ["rule:PHONE"],
            },
            {"id": "2", "decision": "clean", "lang": "ja", "hits": [], "reasons": []},
            {"id": "3", "decision": "quarantine", "quarantine_reason": "screen_error:ValueError"},
        ]
    )
    parts = [batch_stats(table.slice(0, 2)), batch_stats(table.slice(2))]
    stats = summarize(merge_stats(parts), input_records=3)
    assert stats["counts"] == {"clean": 1, "flagged": 1, "quarantine": 1}
    assert stats["reconciliation"] == {"input_records": 3, "output_records": 3, "ok": True}
    assert stats["by_lang"] == {"ja": {"clean": 1}, "ko": {"flagged": 1}}
    assert stats["pii_hits_by_type"] == {"PHONE": 2} and stats["documents_by_pii_type"] == {
        "PHONE": 1
    }
    assert stats["quarantine_reasons"] == {"screen_error": 1}
    assert not summarize(merge_stats(parts), input_records=4)["reconciliation"]["ok"]
