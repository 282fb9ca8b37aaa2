"""The two prompts of the method (versioned) and the reader of their line-per-item answers.

Stage 1 (candidates, one-shot): the sentence holding the entity with the target span in double
brackets ``[[…]]``; the model lists ``m`` replacements, most specific first, each true of the
original and not containing it. Stage 2 (attack): the whole edited document D′ with the candidate in
double brackets; the model lists ``p`` guesses of the original text. Both answers are one item per
line; numbering, bullets and quotes are stripped and ``<think>`` blocks removed. The one-shot
example is synthetic.
"""

from __future__ import annotations

import re

CANDIDATE_PROMPT_VERSION = "generalize-candidates-v1"
ATTACK_PROMPT_VERSION = "generalize-attack-v1"
PROMPT_VERSION = f"{CANDIDATE_PROMPT_VERSION}+{ATTACK_PROMPT_VERSION}"

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*•·]|\(?\d{1,2}[.):]|\d{1,2}\s*-)\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")

CANDIDATE_SYSTEM = (
    "You generalize personal information so that a text stays useful but the person cannot be"
    " identified.\nYou get a sentence with one span marked by double brackets [[like this]] and the"
    " span's type.\nWrite {m} replacements for the marked span, from the most specific to the least"
    " specific.\nEvery replacement must be TRUE of the original (it describes it correctly, only"
    " less precisely), must not contain the original, and must read naturally in the sentence, in"
    " the sentence's language.\nPrint one replacement per line and nothing else: no numbering, no"
    " explanations."
)
ONE_SHOT = (
    "Type: ORG\nSentence: She was treated at [[St Elsewhere Hospital in Leeds]] last spring.",
    (
        "a hospital in Leeds\na hospital in West Yorkshire\na hospital in northern England\na"
        " hospital in England\na hospital"
    ),
)
ATTACK_SYSTEM = (
    "Some personal information in the document below was replaced by more general text. One"
    " replaced span is marked by double brackets [[like this]]; its type is {type}.\nGuess the"
    " ORIGINAL text of the marked span, using everything the document tells you.\nPrint {p}"
    " different guesses, the most likely first, one per line and nothing else."
)


def mark(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each ``[start, end)`` of ``spans`` (sorted, disjoint) wrapped in double
    brackets."""
    out, pos = [], 0
    for start, end in sorted(spans):
        out += [text[pos:start], "[[", text[start:end], "]]"]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def sentence_around(text: str, start: int, end: int, max_chars: int = 600) -> tuple[str, int, int]:
    """The sentence of ``text`` holding ``[start, end)`` (at most ``max_chars``), and the span's
    offsets in it."""
    left = 0
    for m in _SENTENCE_END.finditer(text, 0, start):
        left = m.end()
    right_m = _SENTENCE_END.search(text, end)
    right = right_m.start() if right_m else len(text)
    half = max(0, (max_chars - (end - start)) // 2)
    left, right = max(left, start - half), min(right, end + half)
    return text[left:right], start - left, end - left


def candidate_messages(sentence_marked: str, entity_type: str, m: int) -> list[dict[str, str]]:
    """Stage-1 chat messages: system, the one-shot example, then the target sentence."""
    return [
        {"role": "system", "content": CANDIDATE_SYSTEM.format(m=m)},
        {"role": "user", "content": ONE_SHOT[0]},
        {"role": "assistant", "content": ONE_SHOT[1]},
        {"role": "user", "content": f"Type: {entity_type}\nSentence: {sentence_marked}"},
    ]


def attack_messages(document_marked: str, entity_type: str, p: int) -> list[dict[str, str]]:
    """Stage-2 chat messages: the attacker's instructions and the edited document D′."""
    return [
        {"role": "system", "content": ATTACK_SYSTEM.format(type=entity_type, p=p)},
        {"role": "user", "content": document_marked},
    ]


def read_items(raw: str, limit: int) -> list[str]:
    """The first ``limit`` distinct non-empty items of a line-per-item answer (bullets, numbers,
    quotes removed).

    >>> read_items("<think>hm</think>1. Seoul\\n2) \\"Korea\\"\\n- Seoul\\n", 5)
    ['Seoul', 'Korea']
    """
    items: list[str] = []
    for line in _THINK.sub("", raw).splitlines():
        item = _BULLET.sub("", line).strip().strip("\"'“”「」`").strip()
        if item and item not in items:
            items.append(item)
        if len(items) >= limit:
            break
    return items
