"""A chat reply the server ended for another reason than a natural stop is not a complete answer.

``finish_reason == "length"`` was already ``output_truncated``; a reply stopped by a content filter
(``content_filter``, as OpenAI and Azure report it) or aborted by the engine (``abort``, vLLM) may
hold only the first rows of the list, and was used as a complete answer: the document was released
with the rows after the cut unmasked. Such replies now fail closed.
"""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from spcl.extract.backends.openai_chat import _read_reply


def _reply(finish: str | None) -> NS:
    message = NS(content="PERSON\tJonathan Smithers\n")
    return NS(
        choices=[NS(message=message, finish_reason=finish)],
        usage=NS(completion_tokens=5, prompt_tokens=50),
    )


@pytest.mark.parametrize("finish", ["stop", None, "eos", "tool_calls"])
def test_a_natural_stop_is_an_answer(finish: str | None) -> None:
    rep = _read_reply(_reply(finish), 0.0)
    assert rep.ok and rep.text == "PERSON\tJonathan Smithers\n"


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("length", "output_truncated"),
        ("content_filter", "output_incomplete:content_filter"),
        ("abort", "output_incomplete:abort"),
        ("Weird Reason!", "output_incomplete:weird_reason_"),
    ],
)
def test_any_other_end_fails_closed_with_a_reason_code(finish: str, reason: str) -> None:
    rep = _read_reply(_reply(finish), 0.0)
    assert not rep.ok and rep.error == reason and rep.text is None
