"""Chat records for fine-tuning: read, check against the versioned extraction prompt, report by id.

A record is the conversational prompt-completion form ``spcl synth to-chat`` writes::

    {"id": "...", "prompt_version": "extract-v4", "prompt": [system, user],
     "completion": [assistant]}

A PII split record (``{"id", "source_text", "target_tsv", ...}``, what ``spcl synth pii`` writes) is
turned into that form with ``spcl.synth.pii.chat_record``, so ``--eval validation.jsonl`` works as
is. Every prompt must equal ``spcl.extract.prompt.build_messages(user text)`` for the current
``PROMPT_VERSION``: training on another prompt than the one served would teach the wrong task.
Records that fail a check are reported as ``(id, reason)``; reasons never contain text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spcl.extract.prompt import PROMPT_VERSION, build_messages
from spcl.io.jsonl import iter_jsonl
from spcl.synth.pii import chat_record


@dataclass(frozen=True, slots=True)
class ChatRecord:
    """One training example: the prompt messages (system + user) and the assistant completion
    text."""

    id: str
    prompt: tuple[dict[str, str], ...]
    completion: str

    def __repr__(self) -> str:  # never print the document or the completion
        return (
            f"ChatRecord(id={self.id!r}, prompt_messages={len(self.prompt)}, "
            f"completion_chars={len(self.completion)})"
        )

    @property
    def messages(self) -> list[dict[str, str]]:
        """The whole conversation: prompt messages then the assistant turn."""
        return [*self.prompt, {"role": "assistant", "content": self.completion}]


@dataclass(frozen=True, slots=True)
class RecordProblem:
    """A record left out of training or evaluation: its id (or ``file:line``) and a reason code."""

    id: str
    reason: str


def chat_from_json(obj: Any) -> ChatRecord:
    """A :class:`ChatRecord` from a parsed chat or PII record; raises ``ValueError`` with a
    reason code."""
    if not isinstance(obj, dict):
        raise ValueError("not_an_object")
    if "source_text" in obj and "prompt" not in obj:
        try:
            obj = chat_record(obj)
        except (KeyError, TypeError):
            raise ValueError("not_a_pii_record") from None
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        raise ValueError("missing_id")
    if obj.get("prompt_version") != PROMPT_VERSION:
        raise ValueError("prompt_version_mismatch")
    prompt, completion = obj.get("prompt"), obj.get("completion")
    if not (
        isinstance(prompt, list) and len(prompt) == 2 and all(isinstance(m, dict) for m in prompt)
    ):
        raise ValueError("bad_prompt")
    user = prompt[1].get("content")
    if prompt[1].get("role") != "user" or not isinstance(user, str):
        raise ValueError("bad_prompt")
    if prompt != build_messages(user):
        raise ValueError("prompt_differs_from_extraction_prompt")
    if not (
        isinstance(completion, list)
        and len(completion) == 1
        and isinstance(completion[0], dict)
        and completion[0].get("role") == "assistant"
        and isinstance(completion[0].get("content"), str)
    ):
        raise ValueError("bad_completion")
    return ChatRecord(obj["id"], tuple(dict(m) for m in prompt), completion[0]["content"])


def iter_records(path: str | Path) -> Iterator[ChatRecord | RecordProblem]:
    """Each non-empty line of ``path`` as a :class:`ChatRecord`, or a :class:`RecordProblem` naming
    why not.

    A duplicate id is a problem (``duplicate_id``): the first record with that id is kept.
    """
    seen: set[str] = set()
    name = Path(path).name
    for item in iter_jsonl(path):
        where = f"{name}:{item.line_no}"
        if item.error is not None:
            yield RecordProblem(where, item.error)
            continue
        obj = item.value
        rid = obj["id"] if isinstance(obj, dict) and isinstance(obj.get("id"), str) else where
        try:
            rec = chat_from_json(obj)
        except ValueError as err:
            yield RecordProblem(rid, str(err))
            continue
        if rec.id in seen:
            yield RecordProblem(rec.id, "duplicate_id")
            continue
        seen.add(rec.id)
        yield rec


def read_records(path: str | Path) -> tuple[list[ChatRecord], list[RecordProblem]]:
    """All records of ``path`` split into the usable ones and the problems (both in file order)."""
    good: list[ChatRecord] = []
    bad: list[RecordProblem] = []
    for item in iter_records(path):
        if isinstance(item, ChatRecord):
            good.append(item)
        else:
            bad.append(item)
    return good, bad
