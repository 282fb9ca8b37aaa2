"""The annotate job: a crawl sample → candidates → two or more teacher LLMs → agreement filter → verifier
→ balance → labelled training data for ``spcl train``, the disputed texts for people, and a report.

Layout under ``--output``::

    labelled.jsonl   id, text, lang, label, categories, source (what ``spcl train`` reads) + codes,
                     confidence, votes (each teacher's label, codes, categories, confidence), verifier
    rejected.jsonl   id, text, lang, reason, votes, verifier  (for ``spcl review export --what rejected``)
    dropped.jsonl    id, reason, source_file, position — no text: ``unreadable:<reader reason>``,
                     ``too_long``, ``no_person_mention``, ``balanced_out`` (+ label)
    pending.jsonl    id, reason (``backend_error:<teacher>``), error (``http_503``, ``timeout`` …),
                     source_file, position — no text: records a teacher or the verifier could not answer
                     *transiently* (``spcl.extract.backends.transient``) after the client's retries
    report.json      counts per step, reconciliation, Cohen's kappa per teacher pair (overall and per
                     category), parse-failure and backend-error rates, tokens and seconds per document
    agreement.png    per-category kappa of every teacher pair
    manifest.json    SHA-256 of every file, teachers, thresholds, seed, the input's manifest
    _work/           per-input-file parts and done-markers (checkpoints; a nested dataset with its own manifest)

Every input record ends in exactly one of labelled / rejected / dropped / pending (``report.json`` checks it).

**Scale.** Records are read ``batch_size`` at a time; each batch goes to every teacher (``openai``
teachers all at once, each with ``concurrency`` requests in flight; in-process models one after the
other), then the kept texts to the verifier. ``--engine spark`` runs one task per input file.

**Resumable** like ``spcl mask``: each input file is one unit of work whose four part files are moved
into place with ``os.replace`` before its done-marker is written; a rerun skips files with a marker and no
pending records, asks the teachers again for exactly the pending records of the others (the rest of the
file is kept as it is), and redoes a file without a marker, or whose content changed, from scratch.
Pending records make the run exit 3 (:data:`~spcl.extract.backends.transient.EXIT_TRANSIENT`), as
``spcl mask`` does for transient failures. The final files are rebuilt from the parts at the end of every run, so a
rerun with another ``--positive-share`` or ``--seed`` only re-balances. Parts made with other teachers,
prompt or thresholds are refused (use a new ``--output``). Logs, errors and the report name files, ids,
teachers and counts — never document text or model output.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa

from spcl.annotate.agreement import Decision, TeacherVote, decide, verify
from spcl.annotate.candidates import is_candidate
from spcl.annotate.config import (
    PARTS,
    WORK,
    AnnotateConfig,
    AnnotateError,
    input_key,
    jsonl_text,
    list_input_files,
    read_jsonl,
    write_private_atomic,
)
from spcl.annotate.finalize import finalize
from spcl.annotate.prompt import PROMPT_VERSION, build_messages
from spcl.annotate.teachers import make_client, teacher_request
from spcl.config import InputSettings
from spcl.executor import JobError, Plan, RunInfo, run_local, run_spark
from spcl.executor.filejob import SETTLED, FileJob, UnitPass, UnitRun
from spcl.extract.backends.chat import ChatClient, ChatRequest
from spcl.extract.backends.registry import is_server_backend, takes_option
from spcl.extract.backends.transient import is_transient
from spcl.io.readers import read_records
from spcl.text import LANGS, guess_lang, normalize

__all__ = ["STAGE", "AnnotateConfig", "AnnotateError", "AnnotateRunner", "AnnotateStage", "run_annotate",
           "run_annotate_spark", "transient_failure"]

log = logging.getLogger("spcl.annotate")

@dataclass(slots=True, kw_only=True)
class AnnotatePass(UnitRun):
    """One pass over one input file (``spcl.executor.filejob.UnitRun``; ``rows``: the part rows by part,
    ``settled``: the positions the kept parts hold): the file's name in the output, the candidates per
    language, the pending records of a retry pass's prior run, and the positions it asked about."""

    source_file: str
    langs: Counter[str]
    prior_pending: list[dict[str, Any]]
    asked: set[int] = field(default_factory=set)


def _teacher_stats() -> dict[str, Any]:
    return {"documents": 0, "outputs": 0, "parsed": 0, "parse_failures": {}, "backend_errors": {},
            "generated_tokens": 0, "wall_seconds": 0.0, "latency_seconds": 0.0}


def transient_failure(votes: list[TeacherVote], check: TeacherVote | None) -> TeacherVote | None:
    """The first teacher (then the verifier) vote whose backend failed *transiently*, else ``None``: such a
    record is left pending for a rerun, never rejected for good."""
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
    """Runs the job's unit of work (one input file) with its teacher clients, built once per process."""

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
        """Ask every client whether it can serve (an unreachable endpoint stops the job before any file)."""
        for client in self.clients.values():
            client.check()

    def _ask(self, name: str, requests: list[ChatRequest], stats: dict[str, Any]) -> list[TeacherVote]:
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
                    st["parse_failures"][tv.parse_failure] = st["parse_failures"].get(tv.parse_failure, 0) + 1
            votes.append(tv)
        return votes

    def annotate(self, docs: list[dict[str, Any]], stats: dict[str, Any]) -> list[tuple[Decision, list[TeacherVote],
                                                                                       TeacherVote | None]]:
        """Ask every teacher about ``docs`` (dicts with ``text``), filter, verify; one outcome per doc."""
        if not docs:
            return []
        requests = [teacher_request(build_messages(d["text"]), self.cfg.options) for d in docs]
        names = [t.name for t in self.cfg.teachers]
        for n in names:
            stats["teachers"].setdefault(n, _teacher_stats())
        if all(is_server_backend(t.backend) for t in self.cfg.teachers):  # servers: ask all at once
            with ThreadPoolExecutor(max_workers=len(names), thread_name_prefix="spcl-teacher") as pool:
                votes = list(pool.map(lambda n: self._ask(n, requests, stats["teachers"]), names))
        else:  # in-process models share the accelerator: one teacher after the other
            votes = [self._ask(n, requests, stats["teachers"]) for n in names]
        per_doc = [[v[i] for v in votes] for i in range(len(docs))]
        decisions = [decide(vs, self.cfg.min_confidence) for vs in per_doc]
        checks: list[TeacherVote | None] = [None] * len(docs)
        if self.cfg.verifier is not None:
            kept = [i for i, d in enumerate(decisions) if d.kept]
            if kept:
                vv = self._ask(self.cfg.verifier.name, [requests[i] for i in kept], stats["verifier"])
                for i, tv in zip(kept, vv, strict=True):
                    checks[i] = tv
                    decisions[i] = verify(decisions[i], tv)
        return list(zip(decisions, per_doc, checks, strict=True))

    def take(self, run: AnnotatePass, batch: pa.RecordBatch, picked: list[str]) -> None:
        """Ask about one batch of records (``picked``: ``UnitRun.pick`` of their positions) and route each to
        the pass's labelled / rejected / dropped / pending rows; a retry pass asks about the unsettled
        readable records only (counted already)."""
        cfg, stats, rows, source_file = self.cfg, run.stats, run.rows, run.source_file

        def drop(doc_id: str, position: int, reason: str) -> None:
            rows["dropped"].append({"id": doc_id, "reason": reason, "source_file": source_file, "position": position})

        docs: list[dict[str, Any]] = []
        for (doc_id, text, meta, error, position), verdict in zip(
                zip(*(batch.column(c).to_pylist() for c in ("id", "text", "meta", "error", "position")), strict=True),
                picked, strict=True):
            if run.settled is not None:  # a retry pass: only the unsettled records, counted already
                if verdict != SETTLED and isinstance(text, str) and error is None:
                    text = normalize(text)
                    run.asked.add(position)
                    docs.append({"id": doc_id, "text": text, "lang": _lang(meta, text), "position": position})
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
            tail = {"votes": [v.to_json() for v in votes], "verifier": check.to_json() if check else None,
                    "source_file": source_file, "position": doc["position"]}
            if (failed := transient_failure(votes, check)) is not None:  # retryable, never rejected
                rows["pending"].append({"id": doc["id"], "reason": failed.failure, "error": failed.error,
                                        "source_file": source_file, "position": doc["position"]})
            elif decision.kept:
                rows["labelled"].append({**base, "label": decision.label, "categories": list(decision.categories),
                                         "source": f"annotate:{PROMPT_VERSION}", "codes": list(decision.codes),
                                         "confidence": decision.confidence, **tail})
            else:
                assert decision.reason is not None
                rows["rejected"].append({**base, "reason": decision.reason, **tail})

    def close(self) -> None:
        """Close every client."""
        for client in self.clients.values():
            client.close()


class AnnotateStage(FileJob):
    """The annotate job on the job skeleton (``spcl.executor.filejob``): a unit is one input file (JSONL or
    Parquet), its worker an :class:`AnnotateRunner` (the teacher clients, e.g. in-process vLLM engines, built
    once per process, and only when some file has work to do). Its done-markers live in ``_work/done``; an
    output holding any file annotated with other teachers, prompt or thresholds is refused."""

    config_type: ClassVar[type[AnnotateConfig]] = AnnotateConfig
    name: ClassVar[str] = "annotate"
    ref: ClassVar[str] = "spcl.annotate.job:STAGE"
    path_fields: ClassVar[tuple[str, ...]] = ("input", "output")
    lock_field: ClassVar[str | None] = "output"
    error: ClassVar[type[JobError]] = AnnotateError
    setup_when_idle: ClassVar[bool] = False  # a rerun with nothing to ask only re-balances: no model loaded
    done_folder: ClassVar[str] = f"{WORK}/done"
    staging_folders: ClassVar[tuple[str, ...]] = (f"{WORK}/tmp",)
    staging_globs: ClassVar[tuple[str, ...]] = (f"{WORK}/parts/.*",)
    vault_field: ClassVar[str | None] = None
    check_all_markers: ClassVar[bool] = True
    settings_what: ClassVar[str] = "annotated with other teachers, prompt or thresholds"
    results_what: ClassVar[str] = "labels"
    private_markers: ClassVar[bool] = True

    def list_units(self, cfg: AnnotateConfig) -> list[tuple[Path, str]]:
        """The JSONL / Parquet input files and their keys."""
        return [(p, input_key(p, cfg.input)) for p in list_input_files(cfg.input)]

    def release_hash(self, cfg: AnnotateConfig) -> str:
        """``AnnotateConfig.parts_hash``: teachers, verifier, prompt, thresholds, candidates (not balance)."""
        return cfg.parts_hash()

    def needs_retry(self, cfg: AnnotateConfig, marker: dict[str, Any]) -> bool:
        """Pending records to ask about again."""
        return bool(marker.get("pending"))

    def before_spark(self, cfg: AnnotateConfig, plan: Plan) -> None:
        """Ask every server teacher on the driver first (in-process models load on the executors)."""
        for spec in [*cfg.teachers, *([cfg.verifier] if cfg.verifier else [])]:
            if is_server_backend(spec.backend) and plan.todo:
                client = make_client(spec, {"retries": 0})
                try:
                    client.check()
                finally:
                    client.close()

    def setup(self, cfg: AnnotateConfig, clients: dict[str, Any]) -> AnnotateRunner:
        """The runner (``clients``: given chat clients by teacher name, e.g. a test's)."""
        return AnnotateRunner(cfg, clients or None)

    def check(self, worker: AnnotateRunner) -> None:
        """Ask every client whether it can serve."""
        worker.check()

    def begin(self, worker: AnnotateRunner, unit: UnitPass) -> AnnotatePass:
        """A pass over one file; given a prior marker (unchanged, with pending records), it keeps the
        committed parts and asks again for exactly the pending records."""
        root = Path(worker.cfg.input)
        source_file = unit.path.relative_to(root).as_posix() if root.is_dir() else unit.path.name
        rows: dict[str, list[dict[str, Any]]] = {p: [] for p in PARTS}
        for part in PARTS if unit.prior is not None else ():
            path = worker.work / "parts" / f"{unit.key}.{part}.jsonl"
            rows[part] = list(read_jsonl(path)) if path.exists() else []
        prior_pending, rows["pending"] = rows["pending"], []
        # a retry pass asks about every record no committed part settles: the pending ones, and any a run
        # killed between its part writes left in none (so a record is never lost nor written twice)
        settled = ({int(r["position"]) for part in ("labelled", "rejected", "dropped") for r in rows[part]}
                   if unit.prior is not None else None)
        stats: dict[str, Any] = unit.prior["stats"] if unit.prior is not None else {
            "files": 1, "input_records": 0, "candidates": 0, "candidates_by_lang": {}, "dropped_reasons": {},
            "rejected_reasons": {}, "labelled": 0, "teachers": {}, "verifier": {}, "seconds": 0.0}
        return AnnotatePass(unit=unit, settled=settled, stats=stats, rows=rows, source_file=source_file,
                            langs=Counter(stats["candidates_by_lang"]), prior_pending=prior_pending)

    def read_unit(self, worker: AnnotateRunner, run: AnnotatePass) -> Iterator[tuple[list[Any], pa.RecordBatch]]:
        """The file's records in batches (``spcl.io.readers.read_records``) and their positions."""
        with open(run.unit.path, "rb") as fh:
            for batch in read_records(fh, str(run.unit.path), InputSettings(), batch_rows=worker.cfg.batch_size):
                yield batch.column("position").to_pylist(), batch

    def take(self, worker: AnnotateRunner, run: AnnotatePass, keys: Sequence[Any], batch: pa.RecordBatch,
             picked: list[str]) -> None:
        """:meth:`AnnotateRunner.take`."""
        worker.take(run, batch, picked)

    def commit(self, worker: AnnotateRunner, run: AnnotatePass) -> dict[str, Any]:
        """The file's counts, its parts moved into place; its done-marker. The unit reports the records a
        retry asked about, or all the file's records."""
        rows, stats = run.rows, run.stats
        if run.settled is not None:  # a pending record this pass did not ask about stays pending (never lost)
            rows["pending"] += [r for r in run.prior_pending if int(r["position"]) not in run.asked | run.settled]
        stats["candidates"] = sum(run.langs.values())
        stats["candidates_by_lang"] = dict(run.langs)
        for part, name in (("dropped", "dropped_reasons"), ("rejected", "rejected_reasons"),
                           ("pending", "pending_reasons")):
            stats[name] = dict(Counter(r["reason"] for r in rows[part]))
        stats["labelled"] = len(rows["labelled"])
        stats["pending"] = len(rows["pending"])
        stats["seconds"] = round(stats.get("seconds", 0.0) + time.perf_counter() - run.started, 6)
        for part in PARTS:  # commit: parts first, the done-marker last
            write_private_atomic(worker.work / "parts" / f"{run.unit.key}.{part}.jsonl", jsonl_text(rows[part]))
        run.records = len(run.asked) if run.settled is not None else int(stats["input_records"])
        return {**run.unit.marker, "source_file": run.source_file, "pending": stats["pending"], "stats": stats}

    def log_unit(self, run: AnnotatePass) -> None:
        """The file's counts."""
        stats = run.stats
        log.info("%s (%s): %d records, %d candidates, %d labelled, %d rejected, %d pending", run.source_file,
                 run.mode, stats["input_records"], stats["candidates"], stats["labelled"], len(run.rows["rejected"]),
                 stats["pending"])

    def finish(self, cfg: AnnotateConfig, plan: Plan, run: RunInfo, worker: AnnotateRunner | None) -> dict[str, Any]:
        """Merge the parts, balance, write the outputs and the report (``spcl.annotate.finalize``)."""
        return finalize(cfg, {"engine": run.engine, "files_processed": run.files_processed,
                              "files_skipped": run.files_skipped, "records": run.records,
                              "elapsed_seconds": run.elapsed_seconds})


STAGE = AnnotateStage()


def run_annotate(cfg: AnnotateConfig, clients: dict[str, ChatClient] | None = None) -> dict[str, Any]:
    """Run the job in this process over every unfinished input file, then finalize; returns ``report.json``."""
    return run_local(STAGE, cfg, clients)


def run_annotate_spark(cfg: AnnotateConfig, master: str | None = None, submitted: bool = False) -> dict[str, Any]:
    """Run the job with Spark: one task per unfinished input file (the same ``AnnotateRunner`` code on
    executors), then finalize on the driver. Paths must be visible to every executor.
    ``submitted``: running under spark-submit (``jobs/*.py``), whose master is kept unless ``master`` is given."""
    return run_spark(STAGE, cfg, master, submitted)
