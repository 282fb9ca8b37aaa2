"""What the LLM stage costs: tokens per flagged document, and the GPU-hours the flagged subset
needs.

The mask job's ``metrics.json`` carries the model's own token counts (``tokens``: prompt and
completion, in total and per document; ``spcl.mask_stage.metrics.token_block``) and the generated
tokens per second of the run that measured them. Here they become an estimate for the whole flagged
subset: the flagged documents (the filter output's count when the report has one, else the mask
output's documents) times the completion tokens per document, divided by a generation rate — the one
the user gives (``--gpu-tokens-per-s``: output tokens per second one GPU sustains in batch, vLLM's
"output token throughput" for that model) or, lacking one, the rate this mask run measured (on
whatever ran it: a CPU figure says little about a GPU). Prompt tokens are reported beside it: with
prefix caching the shared system prompt is read once per batch, so generation dominates the time.
Only counts and rates here, never text.
"""

from __future__ import annotations

from typing import Literal

from spcl.report.page import number, table
from spcl.report.records import MaskMetrics, TokenFacts


def token_facts(
    metrics: MaskMetrics, flagged: int | None = None, gpu_tokens_per_s: float | None = None
) -> TokenFacts:
    """The ``tokens`` block of a mask output's facts: per-document counts and the GPU-hours
    estimate.

    ``flagged`` defaults to the mask output's documents; ``rate_source`` says where the rate came
    from (``given``, ``measured``, or ``none`` when there is no rate or no counts; then
    ``gpu_hours`` is ``None``).

    >>> t = token_facts({"documents": 4, "generated_tokens_per_second": 50.0, "backend": "vllm",
    ...                  "tokens": {"documents": 4, "documents_counted": 4, "prompt": 2000,
    ...                             "completion": 400, "prompt_per_document": 500.0,
    ...                             "completion_per_document": 100.0}},
    ...                 flagged=36_000, gpu_tokens_per_s=2000.0)
    >>> t["flagged_documents"], t["completion_tokens"], t["gpu_hours"], t["rate_source"]
    (36000, 3600000, 0.5, 'given')
    """
    block = metrics.get("tokens") or {}
    documents = int(metrics.get("documents") or 0)
    counted = int(block.get("documents_counted") or 0)
    prompt_per_doc = float(block.get("prompt_per_document") or 0.0)
    completion_per_doc = float(block.get("completion_per_document") or 0.0)
    # metrics written before prompt counts
    if not block and metrics.get("generated_tokens") and documents:
        completion_per_doc, counted = float(metrics["generated_tokens"]) / documents, documents
    n = documents if flagged is None else int(flagged)
    measured = float(metrics.get("generated_tokens_per_second") or 0.0)
    source: Literal["given", "measured", "none"]
    if gpu_tokens_per_s is not None and gpu_tokens_per_s > 0:
        rate, source = float(gpu_tokens_per_s), "given"
    elif measured > 0:
        rate, source = measured, "measured"
    else:
        rate, source = 0.0, "none"
    if not counted:
        source = "none"
    completion = round(n * completion_per_doc)
    hours = round(completion / rate / 3600, 4) if source != "none" else None
    return {
        "documents_counted": counted,
        "prompt_per_document": prompt_per_doc,
        "completion_per_document": completion_per_doc,
        "flagged_documents": n,
        "flagged_source": "mask output" if flagged is None else "filter output",
        "prompt_tokens": round(n * prompt_per_doc),
        "completion_tokens": completion,
        "tokens_per_second": rate or None,
        "rate_source": source,
        "measured_tokens_per_second": measured or None,
        "measured_on": metrics.get("backend"),
        "gpu_hours": hours,
    }


def token_section(t: TokenFacts) -> list[str]:
    """HTML of the tokens block: per-document counts, the flagged subset's tokens and its
    GPU-hours."""
    if not t["documents_counted"]:
        return [
            "<h3>Tokens and GPU cost</h3>",
            (
                "<p>No token counts in this output (the rules backend, or a server that sends no"
                " usage).</p>"
            ),
        ]
    rate = {
        "given": "given (--gpu-tokens-per-s)",
        "measured": (
            f"measured in this run ({t['measured_on']}; not a GPU figure unless it ran on one)"
        ),
        "none": "none",
    }[t["rate_source"]]
    return [
        "<h3>Tokens and GPU cost</h3>",
        table(
            ["measure", "value"],
            [
                ("documents with token counts", number(t["documents_counted"])),
                ("prompt tokens per document", number(t["prompt_per_document"])),
                ("completion tokens per document", number(t["completion_per_document"])),
                (f"flagged documents ({t['flagged_source']})", number(t["flagged_documents"])),
                ("prompt tokens, flagged subset", number(t["prompt_tokens"])),
                ("completion tokens, flagged subset", number(t["completion_tokens"])),
                (
                    "generated tokens per second",
                    f"{number(t['tokens_per_second'] or '-')} ({rate})",
                ),
                (
                    "GPU-hours for the flagged subset",
                    "-" if t["gpu_hours"] is None else f"{t['gpu_hours']:,.2f} h",
                ),
            ],
        ),
        (
            "<p>GPU-hours = flagged documents × completion tokens per document ÷ generated tokens"
            " per second ÷ 3600 (one GPU; prompt tokens are read once per batch for the shared"
            " system prompt with prefix caching). The counts come from the model that ran here; a"
            " larger model prints a different number of tokens.</p>"
        ),
    ]
