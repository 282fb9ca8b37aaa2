"""Tokenize a chat record with the model's chat template and build its completion-only loss mask.

The prompt tokens are exactly the ones the ``transformers`` backend feeds at inference
(``spcl.extract.backends.transformers_backend.chat_prompt_ids``: the same messages, the same
template, the generation prompt). Labels are ``-100`` for every system, user and template token and
equal the token id for the assistant's completion text and the end-of-turn token that closes it;
tokens after the end-of-turn are dropped (the model never needs to predict them). Checked, not
assumed, for every record:

- the template renders the prompt as a prefix of the whole conversation, and the conversation's
  first tokens are the inference prompt's tokens (``template_not_prefix``,
  ``prompt_tokens_differ``);
- the trained tokens cover the completion's characters exactly and decode back to it, with no token
  straddling the boundary (``completion_boundary_merge``, ``completion_decode_mismatch``);
- an end-of-turn token follows the completion (``no_end_of_turn``);
- the example fits ``max_length`` whole; it is never cut (``completion_truncated``,
  ``prompt_too_long``).

A record that fails is reported by id and reason, never by its text.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from spcl.errors import RunFailed
from spcl.extract.backends.transformers_backend import chat_prompt_ids
from spcl.finetune.records import ChatRecord

IGNORE = -100


class LossMaskError(RunFailed, ValueError):
    """A record or batch whose loss mask is wrong; the message names ids and reason codes, never
    text."""

    def __init__(self, reason: str, ids: Collection[str] = ()):
        self.reason = reason
        self.ids = list(ids)
        where = (
            f" (ids: {', '.join(self.ids[:10])}{' …' if len(self.ids) > 10 else ''})"
            if self.ids
            else ""
        )
        super().__init__(f"{reason}{where}")


@dataclass(frozen=True, slots=True)
class Example:
    """One tokenized record: ``input_ids`` and ``labels`` (same length), with the sizes of its
    two parts."""

    id: str
    input_ids: tuple[int, ...]
    labels: tuple[int, ...]
    prompt_tokens: int
    completion_tokens: int

    def __repr__(self) -> str:
        return (
            f"Example(id={self.id!r}, tokens={len(self.input_ids)},"
            f" prompt_tokens={self.prompt_tokens}, completion_tokens={self.completion_tokens})"
        )


def _render(tokenizer: Any, messages: list[dict[str, str]], generation_prompt: bool) -> str:
    return str(
        tokenizer.apply_chat_template(
            messages, add_generation_prompt=generation_prompt, tokenize=False
        )
    )


def encode_record(
    tokenizer: Any, record: ChatRecord, *, max_length: int, eos_ids: Collection[int]
) -> Example:
    """The :class:`Example` for ``record``, verified (see the module text); raises
    :class:`LossMaskError`."""

    prompt_ids = chat_prompt_ids(tokenizer, list(record.prompt))
    rendered_prompt = _render(tokenizer, list(record.prompt), True)
    rendered = _render(tokenizer, record.messages, False)
    if not rendered.startswith(rendered_prompt):
        raise LossMaskError("template_not_prefix", [record.id])
    enc = tokenizer(rendered, add_special_tokens=False, return_offsets_mapping=True)
    ids = [int(i) for i in enc["input_ids"]]
    offsets = [(int(s), int(e)) for s, e in enc["offset_mapping"]]
    n_prompt = len(prompt_ids)
    if ids[:n_prompt] != prompt_ids:
        raise LossMaskError("prompt_tokens_differ", [record.id])
    content = record.completion
    c_start = rendered.find(content, len(rendered_prompt)) if content else len(rendered_prompt)
    c_end = c_start + len(content) if c_start >= 0 else len(rendered)
    eos_at = next(
        (i for i in range(n_prompt, len(ids)) if ids[i] in eos_ids and offsets[i][0] >= c_end), None
    )
    if c_start < 0:
        raise LossMaskError("completion_not_rendered", [record.id])
    if eos_at is None:
        raise LossMaskError("no_end_of_turn", [record.id])
    labels = [IGNORE] * (eos_at + 1)
    trained: list[int] = []
    for i in range(n_prompt, eos_at):
        start, end = offsets[i]
        if content and start < c_end and end > c_start:
            if start < c_start or end > c_end:
                raise LossMaskError("completion_boundary_merge", [record.id])
            labels[i] = ids[i]
            trained.append(i)
    labels[eos_at] = ids[eos_at]
    if content:
        covered = (offsets[trained[0]][0], offsets[trained[-1]][1]) if trained else None
        if covered != (c_start, c_end) or trained != list(range(trained[0], trained[-1] + 1)):
            raise LossMaskError("completion_boundary_merge", [record.id])
        if tokenizer.decode([ids[i] for i in trained], skip_special_tokens=False) != content:
            raise LossMaskError("completion_decode_mismatch", [record.id])
    if eos_at + 1 > max_length:
        raise LossMaskError(
            "prompt_too_long" if n_prompt >= max_length else "completion_truncated", [record.id]
        )
    example = Example(
        record.id, tuple(ids[: eos_at + 1]), tuple(labels), n_prompt, len(trained) + 1
    )
    verify_example(example, eos_ids)
    return example


def verify_example(ex: Example, eos_ids: Collection[int]) -> tuple[int, int]:
    """Check one example's mask; returns ``(masked, trained)`` token counts or raises
    :class:`LossMaskError`.

    Promises: the prompt is all ``-100``; every other label is ``-100`` or its own input id; the
    trained tokens are ``completion_tokens`` many and end with the end-of-turn token, which is the
    example's last token and the only trained end-of-turn (a cut completion has none and fails).
    """
    n = len(ex.input_ids)
    if n != len(ex.labels) or not 0 < ex.prompt_tokens < n:
        raise LossMaskError("shape_mismatch", [ex.id])
    if any(label != IGNORE for label in ex.labels[: ex.prompt_tokens]):
        raise LossMaskError("prompt_token_trained", [ex.id])
    trained = [i for i, label in enumerate(ex.labels) if label != IGNORE]
    if any(ex.labels[i] != ex.input_ids[i] for i in trained):
        raise LossMaskError("label_differs_from_input", [ex.id])
    if not trained or trained[-1] != n - 1 or ex.labels[-1] not in eos_ids:
        raise LossMaskError("completion_truncated", [ex.id])
    if (
        sum(1 for i in trained if ex.labels[i] in eos_ids) != 1
        or len(trained) != ex.completion_tokens
    ):
        raise LossMaskError("completion_truncated", [ex.id])
    return n - len(trained), len(trained)


@dataclass(slots=True)
class EncodeReport:
    """Examples that passed, and ``(id, reason)`` for every record that did not."""

    examples: list[Example]
    problems: list[tuple[str, str]]

    @property
    def masked_tokens(self) -> int:
        """Tokens with label -100 over all examples."""
        return sum(len(e.input_ids) - e.completion_tokens for e in self.examples)

    @property
    def trained_tokens(self) -> int:
        """Tokens the loss sees over all examples."""
        return sum(e.completion_tokens for e in self.examples)


def encode_records(
    tokenizer: Any, records: list[ChatRecord], *, max_length: int, eos_ids: Collection[int]
) -> EncodeReport:
    """Encode every record; failures are collected as ``(id, reason)`` instead of raised.

    A tokenizer or template error fails its record only, as ``tokenize_error:<exception type>`` (the
    exception's message, which could quote the text, is not kept).
    """
    report = EncodeReport([], [])
    for rec in records:
        try:
            report.examples.append(
                encode_record(tokenizer, rec, max_length=max_length, eos_ids=eos_ids)
            )
        except LossMaskError as err:
            report.problems.append((rec.id, err.reason))
        except Exception as err:  # a template or tokenizer failure fails this record only
            report.problems.append((rec.id, f"tokenize_error:{type(err).__name__}"))
    return report
