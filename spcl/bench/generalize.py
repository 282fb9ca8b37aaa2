"""``spcl bench generalize``: generalize synthetic documents in memory with a configured backend and
print, per document, every entity's candidates, guesses and choice, then LLM calls per entity.

PRINTS VALUES (candidates and guesses in clear): synthetic documents only (``spcl.synth.pii``'s test
split).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from spcl.extract.contract import parse_extraction
from spcl.generalize.engine import Generalizer, GeneralizeSettings
from spcl.generalize.outcome import DocInput
from spcl.generalize.runner import build_clients
from spcl.generalize.spans import collect_spans, document_hits
from spcl.messages import shown
from spcl.synth.pii import generate_records

if TYPE_CHECKING:
    from spcl.generalize.job import GeneralizeJobConfig


def bench_generalize(cfg: GeneralizeJobConfig, docs: int, seed: int | None) -> int:
    """Generalize synthetic documents in memory and print, per document, every entity's candidates,
    guesses and choice, then LLM calls per entity (values in clear: synthetic data only)."""
    records = generate_records(seed if seed is not None else 42)["test"]
    records = (records * (1 + docs // max(1, len(records))))[:docs]
    extractor, chat = build_clients(cfg)
    try:
        if chat is not None:
            chat.check()
        gen = Generalizer(chat, GeneralizeSettings(**cfg.settings))
        inputs = []
        texts = [r["source_text"] for r in records]
        for rec, ext in zip(records, extractor.run(texts), strict=True):
            text = rec["source_text"]
            rows = parse_extraction(ext.raw or "", text, cfg.types).candidates if ext.ok else []
            found = document_hits(text, None)
            inputs.append(
                DocInput(
                    rec["id"],
                    text,
                    rec["lang"],
                    collect_spans(text, rows, found, types=cfg.types),
                    [(h.type, h.start, h.end) for h in found],
                )
            )
        started = time.perf_counter()
        results = gen.run(inputs)
        wall = time.perf_counter() - started
    finally:
        extractor.close()
        if chat is not None:
            chat.close()
    calls = attacked = 0
    for doc, res in zip(inputs, results, strict=True):
        print(
            f"== {shown(doc.id)} ({doc.lang})"
            f" {'ok' if res.reason is None else 'FAILED ' + res.reason}: {res.llm_calls} LLM calls,"
            f" {res.cache_hits} cache hits, {res.guesses} guesses"
        )
        for ent, dec in zip(doc.entities, res.decisions, strict=True):
            print(
                f"  {ent.type:8s} {ent.value!r} -> {dec.replacement!r} [{dec.kind}, rank"
                f" {dec.rank}, {dec.source}, {dec.calls} calls]"
            )
            for k, cand in enumerate(dec.candidates):
                guesses = dec.guesses[k] if k < len(dec.guesses) else None
                print(
                    f"      cand {k}: {cand!r}  guesses: {guesses if guesses is not None else '-'}"
                )
            attacked += bool(dec.guesses)
        calls += res.llm_calls
        if res.text is not None:
            print("  ->", res.text)
    print(
        json.dumps(
            {
                "documents": len(inputs),
                "llm_calls": calls,
                "attacked_entities": attacked,
                "llm_calls_per_attacked_entity": round(calls / attacked, 3) if attacked else 0.0,
                "failed": sum(r.reason is not None for r in results),
                "seconds": round(wall, 3),
            },
            indent=2,
        )
    )
    return 0
