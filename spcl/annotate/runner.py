"""The annotate job's worker: the teacher clients of one process (built once), asking them about a
batch of records (agreement filter, verifier), and routing each record of a batch to the labelled /
rejected / dropped / pending rows of a pass over one input file (:class:`AnnotatePass`). The job
skeleton's loop (``spcl.executor.filejob``) reads the records and commits the parts;
``spcl.annotate.job`` is the stage.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import pyarrow as pa

from spcl.annotate.agreement import Decision, TeacherVote, decide, verify
from spcl.annotate.candidates import is_candidate
from spcl.annotate.config import WORK, AnnotateConfig
from spcl.annotate.prompt import PROMPT_VERSION, build_messages
from spcl.annotate.teachers import make_client, teacher_request
from spcl.executor.unitpass import SETTLED, UnitRun
from spcl.extract.backends.chat import ChatClient, ChatRequest
from spcl.extract.backends.registry import is_server_backend, takes_option
from spcl.extract.backends.transient import is_transient
from spcl.text import LANGS, guess_lang, normalize

__all__ = ["AnnotatePass", "AnnotateRunner", "transient_failure"]


@dataclass(slots=True, kw_only=True)
class AnnotatePass(UnitRun):
    """One pass over one input file (``spcl.executor.unitpass.UnitRun``; ``settled``: the positions
    the kept parts hold): the part rows by part (the kept ones of a retry pass and the new ones),
    the file's name in the output, the candidates per language, the pending records of a retry
    pass's prior run, and the positions it asked about."""

    rows: dict[str, list[dict[str, Any]]]
    source_file: str
    langs: Counter[str]
    prior_pending: list[dict[str, Any]]
    asked: set[int] = field(default_factory=set)


class TeacherStats(TypedDict):
    """One teacher's (or the verifier's) counts in a file's stats: documents asked, outputs, parsed
    votes, failures by kind, tokens and seconds."""

    documents: int
    outputs: int
    parsed: int
    parse_failures: dict[str, int]
    backend_errors: dict[str, int]
    generated_tokens: int
    wall_seconds: float
    latency_seconds: float


class Candidate(TypedDict):
    """A record to ask the teachers about: its id, normalized text, language and position in the
    file."""

    id: str
    text: str
    lang: str
    position: int


def _teacher_stats() -> TeacherStats:
    return {
        "documents": 0,
        "outputs": 0,
        "parsed": 0,
        "parse_failures": {},
        "backend_errors": {},
        "generated_tokens": 0,
        "wall_seconds": 0.0,
        "latency_seconds": 0.0,
    }


def transient_failure(votes: list[TeacherVote], check: TeacherVote | None) -> TeacherVote | None:
    """The first teacher (then the verifier) vote whose backend failed *transiently*, else ``None``:
    such a record is left pending for a rerun, never rejected for good."""
    for tv in [*votes, *([check] if check is not None else [])]:
        if tv.error is not None and is_transient(tv.error):
            return tv
    return None


def _lang(meta: str | None, text: str) -> str:
    if meta:
        try:
            lang = json.loads(meta).get("lang")
        except (ValueError, AttributeError):
            lang = None
        if lang in LANGS:
            return str(lang)
    return guess_lang(text)


class AnnotateRunner:
    """Runs the job's unit of work (one input file) with its teacher clients, built once per
    process."""

    def __init__(self, cfg: AnnotateConfig, clients: dict[str, ChatClient] | None = None):
        self.cfg = cfg
        specs = [*cfg.teachers, *([cfg.verifier] if cfg.verifier else [])]
        opts = dict(cfg.options)
        n_engines = sum(takes_option(s.backend, "chat", "gpu_memory_utilization") for s in specs)
        if n_engines > 1:  # several in-process engines share the GPUs
            opts.setdefault("gpu_memory_utilization", round(0.85 / n_engines, 3))
        self.clients = dict(clients or {})
        for s in specs:
            if s.name not in self.clients:
                self.clients[s.name] = make_client(s, opts)
        self.output = Path(cfg.output)
        self.work = self.output / WORK
        for sub in ("parts", "done"):
            (self.work / sub).mkdir(parents=True, exist_ok=True)

    def check(self) -> None:
        """Ask every client whether it can serve (an unreachable endpoint stops the job before
        any file)."""
        for client in self.clients.values():
            client.check()

    def _ask(
        self, name: str, requests: list[ChatRequest], stats: dict[str, TeacherStats]
    ) -> list[TeacherVote]:
        t0 = time.perf_counter()
        replies = self.clients[name].complete(requests)
        st = stats.setdefault(name, _teacher_stats())
        st["wall_seconds"] += time.perf_counter() - t0
        votes = []
        for r in replies:
            st["documents"] += 1
            st["latency_seconds"] += r.seconds
            st["generated_tokens"] += r.tokens or 0
            tv = TeacherVote.from_output(name, r.text, r.error)
            if tv.error is not None:
                st["backend_errors"][tv.error] = st["backend_errors"].get(tv.error, 0) + 1
            else:
                st["outputs"] += 1
                if tv.vote is not None:
                    st["parsed"] += 1
                else:
                    kind = tv.parse_failure
                    assert kind is not None  # from_output: no vote, no error -> a parse failure
                    st["parse_failures"][kind] = st["parse_failures"].get(kind, 0) + 1
            votes.append(tv)
        return votes

    def annotate(
        self, docs: list[Candidate], stats: dict[str, Any]
    ) -> list[tuple[Decision, list[TeacherVote], TeacherVote | None]]:
        """Ask every teacher about ``docs`` (dicts with ``text``), filter, verify; one outcome
        per doc."""
        if not docs:
            return []
        requests = [teacher_request(build_messages(d["text"]), self.cfg.options) for d in docs]
        names = [t.name for t in self.cfg.teachers]
        for n in names:
            stats["teachers"].setdefault(n, _teacher_stats())
        if all(is_server_backend(t.backend) for t in self.cfg.teachers):  # servers: ask all at once
            with ThreadPoolExecutor(
                max_workers=len(names), thread_name_prefix="spcl-teacher"
            ) as pool:
                votes = list(pool.map(lambda n: self._ask(n, requests, stats["teachers"]), names))
        else:  # in-process models share the accelerator: one teacher after the other
            votes = [self._ask(n, requests, stats["teachers"]) for n in names]
        per_doc = [[v[i] for v in votes] for i in range(len(docs))]
        decisions = [decide(vs, self.cfg.min_confidence) for vs in per_doc]
        checks: list[TeacherVote | None] = [None] * len(docs)
        if self.cfg.verifier is not None:
            kept = [i for i, d in enumerate(decisions) if d.kept]
            if kept:
                vv = self._ask(
                    self.cfg.verifier.name, [requests[i] for i in kept], stats["verifier"]
                )
                for i, tv in zip(kept, vv, strict=True):
                    checks[i] = tv
                    decisions[i] = verify(decisions[i], tv)
        return list(zip(decisions, per_doc, checks, strict=True))

    def take(
        self, run: AnnotatePass, keys: Sequence[int], batch: pa.RecordBatch, picked: list[str]
    ) -> None:
        """Ask about one batch of records (``picked``: ``UnitRun.pick`` of their positions,
        ``keys``) and route each to the pass's labelled / rejected / dropped / pending rows; a retry
        pass asks about the unsettled readable records only (counted already)."""
        cfg, stats, rows, source_file = self.cfg, run.stats, run.rows, run.source_file

        def drop(doc_id: str, position: int, reason: str) -> None:
            rows["dropped"].append(
                {"id": doc_id, "reason": reason, "source_file": source_file, "position": position}
            )

        docs: list[Candidate] = []
        for (doc_id, text, meta, error, position), verdict in zip(
            zip(
                *(batch.column(c).to_pylist() for c in ("id", "text", "meta", "error", "position")),
                strict=True,
            ),
            picked,
            strict=True,
        ):
            if run.settled is not None:  # a retry pass: only the unsettled records, counted already
                if verdict != SETTLED and isinstance(text, str) and error is None:
                    text = normalize(text)
                    run.asked.add(position)
                    docs.append(
                        {
                            "id": doc_id,
                            "text": text,
                            "lang": _lang(meta, text),
                            "position": position,
                        }
                    )
                continue
            stats["input_records"] += 1
            if error is not None or not isinstance(text, str):
                drop(doc_id, position, f"unreadable:{error or 'no_text'}")
                continue
            text = normalize(text)
            if len(text) > cfg.max_chars:
                drop(doc_id, position, "too_long")
                continue
            lang = _lang(meta, text)
            if not is_candidate(text, cfg.candidates, lang):
                drop(doc_id, position, "no_person_mention")
                continue
            run.langs[lang] += 1
            docs.append({"id": doc_id, "text": text, "lang": lang, "position": position})
        for doc, (decision, votes, check) in zip(docs, self.annotate(docs, stats), strict=True):
            base = {"id": doc["id"], "text": doc["text"], "lang": doc["lang"]}
            tail = {
                "votes": [v.to_json() for v in votes],
                "verifier": check.to_json() if check else None,
                "source_file": source_file,
                "position": doc["position"],
            }
            if (failed := transient_failure(votes, check)) is not None:  # retryable, never rejected
                rows["pending"].append(
                    {
                        "id": doc["id"],
                        "reason": failed.failure,
                        "error": failed.error,
                        "source_file": source_file,
                        "position": doc["position"],
                    }
                )
            elif decision.kept:
                rows["labelled"].append(
                    {
                        **base,
                        "label": decision.label,
                        "categories": list(decision.categories),
                        "source": f"annotate:{PROMPT_VERSION}",
                        "codes": list(decision.codes),
                        "confidence": decision.confidence,
                        **tail,
                    }
                )
            else:
                assert decision.reason is not None
                rows["rejected"].append({**base, "reason": decision.reason, **tail})

    def close(self) -> None:
        """Close every client."""
        for client in self.clients.values():
            client.close()
