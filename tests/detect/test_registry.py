"""The detector registry (issue 22): a detector is one module with one registry row; every table is
derived.

The toy detector below lives in a module of its own, written to a temporary folder and named in
``SPCL_DETECTORS``: no file of the project is touched. A fresh interpreter then shows that the
configuration, the policy, the filter's batch function, the entity vocabulary, the generalize
ladders and the mask stage's release check all know the new type.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spcl.config import ConfigError, DetectSettings, load_settings, settings_from_dict
from spcl.detect import build_detectors, find_pii
from spcl.rule_types import DEFAULT_CONTEXT, RULE_TYPES, RuleType, check_rows

ROOT = Path(__file__).resolve().parents[2]

TOY_MODULE = '''
"""A toy detector: ticket codes "TCK-" + six digits, only after a context word."""
import re

from spcl.rule_types import Hit, RuleType, context_pattern

RULE_TYPES = (
    RuleType("TOY_TICKET", "TICKET", "toy_ticket:TicketDetector", 50, languages=("en", "ja"),
             context={"en": ("ticket",), "ja": ("チケット",)}),
)
_VALUE = re.compile(r"TCK-\\d{6}(?!\\d)")


class TicketDetector:
    name = "toy_ticket@1"
    type = "TOY_TICKET"

    def __init__(self, settings):
        self._cue = context_pattern(settings.context.get(self.type, {}), settings.languages)

    def find(self, text):
        if self._cue is None:
            return []
        return [Hit(self.type, m.start(), m.end(), None, self.name) for m in _VALUE.finditer(text)
                if self._cue.search(text, max(0, m.start() - 24), m.start())]
'''

PROBE = r"""
import json
from spcl.config import PII_TYPES, PolicySettings, load_settings
from spcl.detect import DETECTORS, TYPE_PRIORITY, find_pii
from spcl.entity_types import DEFAULT_TYPES, RULE_HIT_TYPES
from spcl.extract.backends import Extraction
from spcl.generalize.ladders import LABEL_TYPES
from spcl.integrations.rows import screen_texts
from spcl.mask_stage.candidates import rule_hits
from spcl.mask_stage.document import mask_document

text = "Your ticket TCK-482913 is ready. 今日は晴れです。"
settings = load_settings(overrides={"screen.enabled": False})
out = screen_texts([text, "no code here TCK-482913"], settings=settings)
row = out[0]
hits = rule_hits(text, [{"type": h.type, "start": h.start, "end": h.end, "validated": h.validated}
                        for h in row.hits], list(row.reasons))
released = mask_document(text, Extraction(raw=""), hits, DEFAULT_TYPES, False)
refused = mask_document(text, Extraction(raw=""), hits, ("PERSON",), False)
only_ko = find_pii(text, load_settings(overrides={"detect.languages": ["ko"]}).detect)
print(json.dumps({
    "registered": "TOY_TICKET" in PII_TYPES and "TOY_TICKET" in DETECTORS
                  and "TOY_TICKET" in TYPE_PRIORITY,
    "policy": PolicySettings().action("TOY_TICKET"),
    "entity": RULE_HIT_TYPES["TOY_TICKET"], "vocabulary": "TICKET" in DEFAULT_TYPES,
    "label": "TOY_TICKET" in LABEL_TYPES and "TICKET" in LABEL_TYPES,
    "decision": row.decision, "reasons": list(row.reasons), "no_context": out[1].decision,
    "flagging": [(h.type, h.flagging) for h in hits],
    "masked": released.released.masked_text if released.released else None,
    "released_reason": released.reason,
    "refused_reason": refused.reason, "only_ko": [h.type for h in only_ko],
}))
"""


def test_toy_detector_from_its_own_module(tmp_path: Path) -> None:
    (tmp_path / "toy_ticket.py").write_text(TOY_MODULE, encoding="utf-8")
    env = {
        **os.environ,
        "SPCL_DETECTORS": "toy_ticket",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["registered"] and got["policy"] == "flag"
    assert got["entity"] == "TICKET" and got["vocabulary"] and got["label"]
    assert got["decision"] == "flagged" and got["reasons"] == ["rule:TOY_TICKET"]
    # the context word is what the detector reads from the settings
    assert got["no_context"] == "clean"
    assert got["flagging"] == [["TICKET", True]]
    assert (
        got["released_reason"] is None
        and "TCK-482913" not in got["masked"]
        and "[TICKET_1]" in got["masked"]
    )
    # not masked (TICKET not among the types): the release check refuses
    assert got["refused_reason"] is not None
    assert got["only_ko"] == []  # a detector registered for en/ja is off for a Korean-only corpus


def test_without_the_plugin_the_type_is_unknown() -> None:
    with pytest.raises(ConfigError, match="TOY_TICKET"):
        settings_from_dict({"policy": {"TOY_TICKET": "flag"}})


def test_context_words_come_from_the_config() -> None:
    text = "acct 123456-01-123456"
    assert [h.type for h in find_pii(text)] == ["ACCOUNT"]
    no_en = DetectSettings(context={"ACCOUNT": {"en": []}})
    assert find_pii(text, no_en) == []
    other = DetectSettings(context={"ACCOUNT": {"en": ["wire to"]}})
    assert [h.type for h in find_pii("wire to 123456-01-123456", other)] == ["ACCOUNT"]
    # languages not given are kept
    assert other.context["ACCOUNT"]["ko"] == DEFAULT_CONTEXT["ACCOUNT"]["ko"]
    # languages: the ko words alone do not see an English cue
    assert find_pii(text, DetectSettings(languages=("ko",))) == []
    assert [
        h.type for h in find_pii("계좌 123456-01-123456", DetectSettings(languages=("ko",)))
    ] == ["ACCOUNT"]


def test_context_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"detect\.context"):
        settings_from_dict({"detect": {"context": {"PHONE": {"en": ["call"]}}}})
    with pytest.raises(ConfigError, match=r"detect\.context"):
        settings_from_dict({"detect": {"context": {"SSN": {"fr": ["sécu"]}}}})
    with pytest.raises(ConfigError, match=r"detect\.languages"):
        settings_from_dict({"detect": {"languages": ["xx"]}})


def test_default_yaml_lists_the_registered_context_words() -> None:
    assert load_settings(ROOT / "conf" / "default.yaml").detect.context == DEFAULT_CONTEXT
    assert build_detectors(DetectSettings()).find("SSN 536-90-4399")[0].type == "SSN"


def test_registry_rows_are_checked() -> None:
    row = RULE_TYPES[0]
    with pytest.raises(ValueError, match="twice"):
        check_rows([row, row])
    with pytest.raises(ValueError, match="languages"):
        check_rows([RuleType("X", "X", "m:C", 1, languages=("fr",))])
    with pytest.raises(ValueError, match="ladder"):
        check_rows([RuleType("X", "X", "m:C", 1, ladder="city")])
