"""The annotation prompt (versioned): the APPI special-care codes, the label set and ja/ko/en
few-shot examples.

One document per request. The model answers with one line ``LABEL<TAB>CODES<TAB>CONFIDENCE``
(``spcl.annotate.contract``). Everything goes into a single user turn — instructions, examples, then
the document — because some chat templates (Gemma) refuse a system role; the shared prefix still
lets a server cache it. Every person and value in the examples is invented.
"""

from __future__ import annotations

PROMPT_VERSION = "annotate-v1"

LABEL_DESCRIPTIONS: dict[str, str] = {
    "SCPI": (
        "the text reveals special-care information (a code below) about an identifiable individual"
        " person (named, or described so that someone could tell who it is)"
    ),
    "RELATED": (
        "the text is about one of these topics, but no identifiable individual person is concerned"
    ),
    "NONE": "the text is about none of these topics",
}
"""Document labels, most sensitive first (the screen's label set)."""

CODE_DESCRIPTIONS: dict[str, str] = {
    "RACE": "race, ethnic origin",
    "CREED": "religious faith, political or philosophical belief",
    "SOCIAL_STATUS": (
        "a social status one cannot change (descent from a discriminated group, birth status)"
    ),
    "MEDICAL": "illness, medical history, treatment",
    "CRIMINAL_RECORD": "a criminal record (past convictions)",
    "CRIME_VICTIM": "having been the victim of a crime",
    "DISABILITY": "a physical, intellectual or mental disability",
    "HEALTH_CHECK": "results of a medical check-up, test or examination",
    "MEDICAL_GUIDANCE": "guidance, diagnosis, prescription or care by a doctor or pharmacist",
    "CRIMINAL_PROCEDURE": (
        "arrest, search, detention, prosecution or trial as a suspect or defendant"
    ),
    "JUVENILE_PROCEDURE": "juvenile protection proceedings or a juvenile case",
    "LGBT": "sexual orientation or gender identity",
}
"""The 11 special-care categories of Japan's APPI (Art. 2(3) and its Cabinet Order) plus LGBT, by
code."""

CODES: tuple[str, ...] = tuple(CODE_DESCRIPTIONS)

FEW_SHOT: tuple[tuple[str, str], ...] = (
    (
        "김가상(45)씨는 지난달 당뇨병 진단을 받고 서울의 한 병원에 입원해 인슐린 처방을 받았다.",
        "SCPI\tMEDICAL,MEDICAL_GUIDANCE\t0.95",
    ),
    (
        "山田仮名さん（32）は窃盗の疑いで逮捕された。警察によると、山田さんには前科がある。",
        "SCPI\tCRIMINAL_PROCEDURE,CRIMINAL_RECORD\t0.95",
    ),
    (
        (
            "Regular health check-ups help detect type 2 diabetes early; most patients manage it"
            " with diet."
        ),
        "RELATED\tMEDICAL,HEALTH_CHECK\t0.9",
    ),
    ("장애인 의무 고용률이 내년부터 3.1%로 오른다.", "RELATED\tDISABILITY\t0.85"),
    (
        "My coworker Jordan Sample told me he is gay and that he converted to Buddhism last year.",
        "SCPI\tLGBT,CREED\t0.9",
    ),
    ("この製品は全国の店舗で販売されており、送料は無料です。", "NONE\t-\t0.95"),
    ("오늘 서울은 맑고 낮 기온은 25도까지 오르겠습니다.", "NONE\t-\t0.95"),
)


def instructions() -> str:
    """The fixed part of the prompt: task, labels, codes, output contract and the few-shot
    examples."""
    lines = [
        "You label one document for sensitive personal information (special-care categories).",
        "",
        "Labels:",
        *(f"{label}: {desc}" for label, desc in LABEL_DESCRIPTIONS.items()),
        "",
        "Codes:",
        *(f"{code}: {desc}" for code, desc in CODE_DESCRIPTIONS.items()),
        "",
        "Answer with exactly one line: LABEL, a tab, CODES, a tab, CONFIDENCE.",
        (
            "CODES: the codes that apply, comma-separated without spaces (at least one for SCPI and"
            " RELATED);"
        ),
        "write - for NONE. CONFIDENCE: a number from 0 to 1. Print nothing else.",
    ]
    for i, (doc, answer) in enumerate(FEW_SHOT, 1):
        lines += ["", f"Example {i} document:", doc, f"Example {i} answer:", answer]
    lines += ["", "Document:"]
    return "\n".join(lines)


_INSTRUCTIONS = instructions()


def build_messages(text: str) -> list[dict[str, str]]:
    """Chat messages for one document: a single user turn (instructions, examples, then
    ``text``)."""
    return [{"role": "user", "content": f"{_INSTRUCTIONS}\n{text}\n\nAnswer:"}]
