"""The optional re-identification check of a generalize output.

The attacker of stage 2 reads the *final* generalized document with one replaced span marked and
makes ``p`` guesses of the original (``spcl.generalize.prompts.attack_messages``); a span counts as
re-identified when any guess ``matches`` its original (``spcl.generalize.match``; words the
replacement itself shows are not counted). Every replaced span is attacked, labels included, so the
rate is the output's residual risk under this model. Needs an LLM (``openai`` endpoint or a local
``transformers`` model); the report holds counts only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from spcl.extract.backends.chat import ChatClient, ChatRequest
from spcl.generalize.match import matches
from spcl.generalize.outcome import restore
from spcl.generalize.prompts import attack_messages, mark, read_items


class ReidentifyJson(TypedDict):
    """A :class:`ReidentifyReport` as JSON: spans attacked and re-identified, the rate overall
    and per type."""

    documents: int
    spans: int
    reidentified: int
    rate: float | None
    failed_calls: int
    rate_by_type: dict[str, float | None]


@dataclass(slots=True)
class ReidentifyReport:
    """Spans attacked and re-identified, overall and per type; failed calls (no values)."""

    documents: int = 0
    spans: int = 0
    reidentified: int = 0
    failed_calls: int = 0
    by_type: dict[str, list[int]] = field(default_factory=dict)  # type -> [attacked, re-identified]

    def as_dict(self) -> ReidentifyJson:
        """The report as JSON-ready numbers."""

        def rate(n: int, k: int) -> float | None:
            return round(k / n, 4) if n else None

        return {
            "documents": self.documents,
            "spans": self.spans,
            "reidentified": self.reidentified,
            "rate": rate(self.spans, self.reidentified),
            "failed_calls": self.failed_calls,
            "rate_by_type": {t: rate(n, k) for t, (n, k) in sorted(self.by_type.items())},
        }


def reidentify(
    rows: Iterable[dict[str, Any]],
    originals: Any,
    chat: ChatClient,
    *,
    guesses: int = 5,
    temperature: float = 0.3,
    seed: int = 0,
) -> ReidentifyReport:
    """Attack every replaced span of ``rows`` (generalized rows); ``originals(row)`` gives the
    row's vault mapping."""
    report = ReidentifyReport()
    # type, original, replacement, lang, request
    jobs: list[tuple[str, str, str, str, ChatRequest]] = []
    for row in rows:
        report.documents += 1
        mapping = originals(row)
        source = restore(row["generalized_text"], row["spans"], mapping)
        for s in row["spans"]:
            marked = mark(row["generalized_text"], [(s["out_start"], s["out_end"])])
            req = ChatRequest.of(
                attack_messages(marked, s["type"], guesses), temperature=temperature, seed=seed
            )
            original = source[s["start"] : s["end"]]  # == mapping[str(i)]
            jobs.append((s["type"], original, s["replacement"], row.get("lang") or "en", req))
    replies = chat.complete([j[4] for j in jobs]) if jobs else []
    for (type_, original, replacement, lang, _), reply in zip(jobs, replies, strict=True):
        if not reply.ok:
            report.failed_calls += 1
            continue
        hit = any(
            matches(original, g, type_, lang, disclosed=replacement)
            for g in read_items(reply.text or "", guesses)
        )
        report.spans += 1
        report.reidentified += hit
        acc = report.by_type.setdefault(type_, [0, 0])
        acc[0] += 1
        acc[1] += hit
    return report
