"""The extraction prompt (versioned): what the LLM is asked to print, with few-shot examples.

The model lists what it finds, one ``TYPE<TAB>ORIGINAL`` line per item, copying the text exactly as
it appears; it never rewrites the document. ``build_messages(text)`` gives the chat messages for one
document (system prompt + the document as the user turn); the same messages are used for fine-tuning
records (``spcl synth to-chat``) and at inference, so training and serving cannot drift apart. Every
value in the examples is synthetic (placeholder phone numbers, reserved example domains, numbers
that fail their check digits).
"""

from __future__ import annotations

from spcl.entity_types import DEFAULT_TYPES

# v2: the "nothing found" example answers with an empty output; v3: ID, IP,
PROMPT_VERSION = "extract-v4"
# CREDENTIAL; v4: SSN and ITIN (US taxpayer numbers, no longer RRN)

TYPE_DESCRIPTIONS: dict[str, str] = {
    "PERSON": (
        "a private person's name (not companies, brands or public figures in their public role)"
    ),
    "RRN": "a resident registration or national identification number",
    "DOB": "a date of birth",
    "REL": (
        "a word naming a family member or personal relationship of a person (mother, husband,"
        " 아들, 妻)"
    ),
    "ADDRESS": "a home or postal address of a person",
    "PHONE": "a personal telephone number (not a company's representative or toll-free number)",
    "EMAIL": "a personal e-mail address",
    "ACCOUNT": "a bank account number",
    "CARD": "a payment card number",
    "ID": "a passport, driver's licence or other identity-document number",
    "IP": "a public IP address (IPv4 or IPv6)",
    "CREDENTIAL": "a secret: a password, API key, access token or private key",
    "SSN": "a US social security number",
    "ITIN": "a US individual taxpayer identification number",
}

FEW_SHOT: tuple[tuple[str, str], ...] = (
    (
        (
            "신청인 김가상(900101-1234560)의 연락처는 010-0000-1234이며, 보호자는 어머니 "
            "박예시입니다. 대표번호 1588-0000으로 문의하세요."
        ),
        "PERSON\t김가상\nRRN\t900101-1234560\nPHONE\t010-0000-1234\nREL\t어머니\nPERSON\t박예시",
    ),
    (
        "山田仮名さんの住所は東京都架空区見本町1-2-3、メールは yamada@example.com です。",
        "PERSON\t山田仮名\nADDRESS\t東京都架空区見本町1-2-3\nEMAIL\tyamada@example.com",
    ),
    (
        (
            "Please refund Jordan Sample (born March 5, 1990) to account 000-111-222333. "
            "Product code XR-2024-17 is out of stock."
        ),
        "PERSON\tJordan Sample\nDOB\tMarch 5, 1990\nACCOUNT\t000-111-222333",
    ),
    ("제품 코드 AB-1234는 고객센터 1577-0000에서 교환할 수 있습니다.", ""),
)


def system_prompt(types: tuple[str, ...] = DEFAULT_TYPES) -> str:
    """The system prompt listing ``types``, the output contract and the few-shot examples."""
    lines = [
        "You find personal information in a document. Do not rewrite the document.",
        (
            "Print one line per item: TYPE, a tab character, then the text exactly as it appears in"
            " the document"
        ),
        (
            "(same characters, spacing and separators). Print each distinct item once, in order of"
            " appearance."
        ),
        (
            "Print nothing else: no explanations, no numbering, no quotes. If there is nothing,"
            " print nothing."
        ),
        "",
        "Types:",
    ]
    lines += [f"{t}: {TYPE_DESCRIPTIONS.get(t, t.lower())}" for t in types]
    lines += [
        "",
        (
            "Not personal: company representative or toll-free numbers, product codes, order"
            " numbers, public office addresses."
        ),
    ]
    for i, (doc, answer) in enumerate(FEW_SHOT, 1):
        # an empty answer is shown as an empty output (the contract accepts it); never as a word
        # such as "(nothing)", which a model would copy and the parser must reject
        label = (
            f"Example {i} output:"
            if answer
            else f"Example {i} output (nothing found: an empty output):"
        )
        lines += ["", f"Example {i} document:", doc, label, answer]
    return "\n".join(lines)


def build_messages(text: str, types: tuple[str, ...] = DEFAULT_TYPES) -> list[dict[str, str]]:
    """Chat messages for one document: the system prompt, then the document text as the user
    turn."""
    return [{"role": "system", "content": system_prompt(types)}, {"role": "user", "content": text}]
