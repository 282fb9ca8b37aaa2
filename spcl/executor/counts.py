"""Counts every stage's metrics share: rates, and the block of model tokens read and written."""

from __future__ import annotations

from typing import TypedDict


class TokenCounts(TypedDict):
    """What the model read and wrote (:func:`token_block`)."""

    documents: int
    documents_counted: int
    prompt: int
    completion: int
    prompt_per_document: float
    completion_per_document: float


def rate(num: float, den: float) -> float:
    """``num / den``, or 0 when ``den`` is 0."""
    return num / den if den else 0.0


def token_block(prompt: int, completion: int, documents: int, counted: int) -> TokenCounts:
    """What the model read and wrote: totals, and per document of the stage's input (``documents``;
    the cost of one flagged document, the figure a GPU-hours estimate starts from, ``spcl report``).
    ``counted`` is how many document answers the backend reported counts for (the engine's own, or
    the server's ``usage``; a document retried by a rerun counts again, as its tokens do); 0 means
    there are no counts (the rules backend, a server that sends no ``usage``).

    >>> token_block(1200, 90, 3, 3)["completion_per_document"]
    30.0
    """
    return {
        "documents": documents,
        "documents_counted": counted,
        "prompt": prompt,
        "completion": completion,
        "prompt_per_document": round(rate(prompt, documents), 3),
        "completion_per_document": round(rate(completion, documents), 3),
    }
