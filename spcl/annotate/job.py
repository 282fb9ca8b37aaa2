"""The annotate job: a crawl sample → candidates → two or more teacher LLMs → agreement filter → verifier
→ balance → labelled training data for ``spcl train``, the disputed texts for people, and a report.

Layout under ``--out``::

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
prompt or thresholds are refused (use a new ``--out``). Logs, errors and the report name files, ids,
teachers and counts — never document text or model output.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from spcl.annotate.agreement import Decision, TeacherVote, decide, verify
from spcl.annotate.candidates import CANDIDATE_MODES, is_candidate
from spcl.annotate.prompt import PROMPT_VERSION, build_messages
from spcl.annotate.teachers import TeacherSpec, make_client, name_teachers, teacher_request
from spcl.config import InputSettings
from spcl.extract.backends.chat import ChatClient, ChatRequest
from spcl.extract.backends.transient import is_transient
from spcl.io.readers import is_supported, read_records
from spcl.io.storage import write_atomic
from spcl.io.writers import file_key
from spcl.manifest import sha256_file
from spcl.text import LANGS, guess_lang, normalize

log = logging.getLogger("spcl.annotate")

OUTPUT_FILES: tuple[str, ...] = ("labelled.jsonl", "rejected.jsonl", "dropped.jsonl", "pending.jsonl")
PARTS = ("labelled", "rejected", "dropped", "pending")
WORK = "_work"


class AnnotateError(RuntimeError):
    """The job cannot run (bad input, settings that do not match the existing parts); names paths only."""


@dataclass(slots=True)
class AnnotateConfig:
    """Everything an annotate run needs; ``options`` go to every teacher client's constructor."""

    input: str
    out: str
    teachers: list[TeacherSpec]
    verifier: TeacherSpec | None = None
    min_confidence: float = 0.8
    candidates: str = "person"
    positive_share: float | None = None
    seed: int = 0
    batch_size: int = 32
    max_chars: int = 6000
    options: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""  # names the run in done-markers (set by run_annotate*; not part of parts_hash)

    def __post_init__(self) -> None:
        if len(self.teachers) < 2:
            raise ValueError("annotate needs at least two --teacher")
        if self.candidates not in CANDIDATE_MODES:
            raise ValueError(f"--candidates must be one of {', '.join(CANDIDATE_MODES)}")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError("--min-confidence must lie in [0, 1]")
        if self.positive_share is not None and not 0.0 < self.positive_share <= 1.0:
            raise ValueError("--positive-share must lie in (0, 1]")
        named = name_teachers([*self.teachers, *([self.verifier] if self.verifier else [])])
        self.teachers = named[:len(self.teachers)]
        self.verifier = named[-1] if self.verifier else None

    def to_json(self) -> str:
        """The config as JSON (for Spark workers)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> AnnotateConfig:
        """The config back from :meth:`to_json`."""
        data = json.loads(text)
        data["teachers"] = [TeacherSpec(**t) for t in data["teachers"]]
        data["verifier"] = TeacherSpec(**data["verifier"]) if data["verifier"] else None
        return cls(**data)

    def parts_hash(self) -> str:
        """Hash of what decides the parts (teachers, verifier, prompt, thresholds, candidates) — not balance."""
        what = {"prompt": PROMPT_VERSION, "teachers": [t.to_json() for t in self.teachers],
                "verifier": self.verifier.to_json() if self.verifier else None, "min_confidence": self.min_confidence,
                "candidates": self.candidates, "max_chars": self.max_chars}
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


METADATA_FILES = frozenset({"manifest.json", "stats.json", "metrics.json", "report.json", "plan.json",
                            "agreement.json", "estimates.json"})
"""spcl's own metadata files: never read as input when a folder (e.g. a filter output) is given."""


def list_input_files(input_path: str | Path) -> list[Path]:
    """The JSONL / Parquet files under ``input_path`` (a file or a folder, recursive), sorted; names starting
    with ``.`` or ``_`` and spcl's metadata files (:data:`METADATA_FILES`) are skipped."""
    root = Path(input_path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise AnnotateError(f"input {root} is neither a file nor a folder")
    settings = InputSettings()
    return sorted(p for p in root.rglob("*") if p.is_file() and is_supported(p.name, settings)
                  and p.name not in METADATA_FILES
                  and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts))


def input_key(path: Path, root: str | Path) -> str:
    """A stable, filesystem-safe name for one input file: its stem and a hash of its path under ``root``."""
    base = Path(root)
    rel = path.relative_to(base).as_posix() if base.is_dir() else path.name
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.name.split(".")[0])[:60]
    return f"{stem}-{file_key(rel)}"


def write_private_atomic(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` (mode 0600) under a temporary name, then move it into place
    (``spcl.io.storage.write_atomic``)."""
    write_atomic(path, data, private=True)


def jsonl_text(rows: Iterable[dict[str, Any]]) -> str:
    """One JSON object a line (UTF-8 text kept as is)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a JSONL file written by this job."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def merge_counts(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Add ``theirs`` into ``mine``: numbers sum, dicts merge recursively, anything else keeps ``mine``."""
    for k, v in theirs.items():
        if isinstance(v, dict):
            merge_counts(mine.setdefault(k, {}), v)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            mine[k] = mine.get(k, 0) + v
        else:
            mine.setdefault(k, v)
    return mine


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


def read_marker(path: Path) -> dict[str, Any] | None:
    """A done-marker, or ``None`` when the file was never committed."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


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
        n_vllm = sum(s.backend == "vllm" for s in specs)
        if n_vllm > 1:  # several in-process engines share the GPUs
            opts.setdefault("gpu_memory_utilization", round(0.85 / n_vllm, 3))
        self.clients = dict(clients or {})
        for s in specs:
            if s.name not in self.clients:
                self.clients[s.name] = make_client(s, opts)
        self.out = Path(cfg.out)
        self.work = self.out / WORK
        for sub in ("parts", "done"):
            (self.work / sub).mkdir(parents=True, exist_ok=True)

    def check(self) -> None:
        """Ask every client whether it can serve (an unreachable endpoint stops the job before any file)."""
        for client in self.clients.values():
            client.check()

    def done_marker(self, key: str) -> Path:
        """The checkpoint file of input file ``key``."""
        return self.work / "done" / f"{key}.json"

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
        if all(t.backend == "openai" for t in self.cfg.teachers):  # servers: ask every teacher at once
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

    def _prior(self, key: str, input_sha: str) -> tuple[dict[str, Any] | None, dict[str, list[dict[str, Any]]]]:
        """The done-marker and committed part rows of ``key`` when this pass only retries its pending records
        (same content, some pending), else ``(None, empty parts)``: the file is done from scratch."""
        marker = read_marker(self.done_marker(key))
        rows: dict[str, list[dict[str, Any]]] = {p: [] for p in PARTS}
        if marker is None or marker.get("input_sha256") != input_sha or not marker.get("pending"):
            return None, rows
        for part in PARTS:
            part_path = self.work / "parts" / f"{key}.{part}.jsonl"
            rows[part] = list(read_jsonl(part_path)) if part_path.exists() else []
        return marker, rows

    def process_file(self, path: Path, key: str) -> dict[str, Any]:
        """Annotate one input file end to end and commit it (parts moved into place, then the done-marker);
        when the file is committed with pending records and unchanged, ask again for exactly those."""
        started = time.perf_counter()
        cfg = self.cfg
        root = Path(cfg.input)
        source_file = path.relative_to(root).as_posix() if root.is_dir() else path.name
        if not os.access(path, os.R_OK):
            raise AnnotateError(f"cannot read {path}")
        input_sha = sha256_file(path)  # the done-marker holds it: a changed file with the same name is redone
        marker, rows = self._prior(key, input_sha)
        prior_pending, rows["pending"] = rows["pending"], []
        # a retry pass asks about every record no committed part settles: the pending ones, and any a run
        # killed between its part writes left in none (so a record is never lost nor written twice)
        settled = ({int(r["position"]) for part in ("labelled", "rejected", "dropped") for r in rows[part]}
                   if marker is not None else None)
        asked: set[int] = set()
        stats: dict[str, Any] = marker["stats"] if marker is not None else {
            "files": 1, "input_records": 0, "candidates": 0, "candidates_by_lang": {}, "dropped_reasons": {},
            "rejected_reasons": {}, "labelled": 0, "teachers": {}, "verifier": {}, "seconds": 0.0}
        langs: Counter[str] = Counter(stats["candidates_by_lang"])

        def drop(doc_id: str, position: int, reason: str) -> None:
            rows["dropped"].append({"id": doc_id, "reason": reason, "source_file": source_file, "position": position})

        with open(path, "rb") as fh:
            for batch in read_records(fh, str(path), InputSettings(), batch_rows=cfg.batch_size):
                docs: list[dict[str, Any]] = []
                for doc_id, text, meta, error, position in zip(
                        *(batch.column(c).to_pylist() for c in ("id", "text", "meta", "error", "position")),
                        strict=True):
                    if settled is not None:  # a retry pass: only the unsettled records, counted already
                        if position not in settled and isinstance(text, str) and error is None:
                            text = normalize(text)
                            asked.add(position)
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
                    langs[lang] += 1
                    docs.append({"id": doc_id, "text": text, "lang": lang, "position": position})
                for doc, (decision, votes, check) in zip(docs, self.annotate(docs, stats), strict=True):
                    base = {"id": doc["id"], "text": doc["text"], "lang": doc["lang"]}
                    tail = {"votes": [v.to_json() for v in votes], "verifier": check.to_json() if check else None,
                            "source_file": source_file, "position": doc["position"]}
                    if (failed := transient_failure(votes, check)) is not None:  # retryable, never rejected
                        rows["pending"].append({"id": doc["id"], "reason": failed.failure, "error": failed.error,
                                                "source_file": source_file, "position": doc["position"]})
                    elif decision.kept:
                        rows["labelled"].append({**base, "label": decision.label,
                                                 "categories": list(decision.categories),
                                                 "source": f"annotate:{PROMPT_VERSION}", "codes": list(decision.codes),
                                                 "confidence": decision.confidence, **tail})
                    else:
                        assert decision.reason is not None
                        rows["rejected"].append({**base, "reason": decision.reason, **tail})
        if settled is not None:  # a pending record this pass did not ask about stays pending (never lost)
            rows["pending"] += [r for r in prior_pending if int(r["position"]) not in asked | settled]
        stats["candidates"] = sum(langs.values())
        stats["candidates_by_lang"] = dict(langs)
        for part, name in (("dropped", "dropped_reasons"), ("rejected", "rejected_reasons"),
                           ("pending", "pending_reasons")):
            stats[name] = dict(Counter(r["reason"] for r in rows[part]))
        stats["labelled"] = len(rows["labelled"])
        stats["pending"] = len(rows["pending"])
        stats["seconds"] = round(stats.get("seconds", 0.0) + time.perf_counter() - started, 6)
        for part in PARTS:  # commit: parts first, the done-marker last
            write_private_atomic(self.work / "parts" / f"{key}.{part}.jsonl", jsonl_text(rows[part]))
        runs = [*(marker or {}).get("runs", []), cfg.run_id]
        write_private_atomic(self.done_marker(key), json.dumps(
            {"key": key, "source_file": source_file, "input": str(path.resolve()), "parts_hash": cfg.parts_hash(),
             "input_sha256": input_sha, "pending": stats["pending"], "last_run": cfg.run_id, "runs": runs,
             "stats": stats},
            indent=1, sort_keys=True) + "\n")
        log.info("%s (%s): %d records, %d candidates, %d labelled, %d rejected, %d pending", source_file,
                 "retry" if marker is not None else "full", stats["input_records"], stats["candidates"],
                 stats["labelled"], len(rows["rejected"]), stats["pending"])
        return {**stats, "records_this_run": len(asked) if settled is not None else stats["input_records"]}

    def close(self) -> None:
        """Close every client."""
        for client in self.clients.values():
            client.close()


def load_done(out: str | Path) -> dict[str, dict[str, Any]]:
    """``{key: done-marker}`` of every committed input file of an output folder."""
    folder = Path(out) / WORK / "done"
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


def pending_files(cfg: AnnotateConfig) -> tuple[list[tuple[Path, str]], int]:
    """``(path, key)`` of the input files with work to do — not yet done, changed since, or with pending
    records to ask again about — and how many are done already."""
    keyed = [(p, input_key(p, cfg.input)) for p in list_input_files(cfg.input)]
    done = load_done(cfg.out)
    stale = [k for k, m in done.items() if m.get("parts_hash") != cfg.parts_hash()]
    if stale:
        raise AnnotateError(f"{cfg.out} holds {len(stale)} file(s) annotated with other teachers, prompt or "
                            "thresholds; use a new --out")
    for path, key in keyed:  # an output folder belongs to one input: never replace another input's labels
        recorded = done.get(key, {}).get("input")
        if recorded is not None and Path(recorded).resolve() != path.resolve():
            raise AnnotateError(f"{cfg.out} holds the labels of another input file ({recorded}) under the name "
                                f"of {path}; use a new --out for a different --input")
    current = {k for p, k in keyed if k in done and done[k].get("input_sha256") == sha256_file(p)  # by content
               and not done[k].get("pending")}
    return [(p, k) for p, k in keyed if k not in current], len(current)


def _with_run_id(cfg: AnnotateConfig) -> AnnotateConfig:
    """``cfg`` with a fresh ``run_id`` unless it has one."""
    from spcl.mask_stage.config import new_run_id

    return cfg if cfg.run_id else replace(cfg, run_id=new_run_id())


def clean_staging(cfg: AnnotateConfig) -> None:
    """Remove what a killed run left under temporary names (call only when no other run is active)."""
    shutil.rmtree(Path(cfg.out) / WORK / "tmp", ignore_errors=True)
    for stale in (Path(cfg.out) / WORK / "parts").glob(".*"):
        stale.unlink(missing_ok=True)


def run_annotate(cfg: AnnotateConfig, clients: dict[str, ChatClient] | None = None) -> dict[str, Any]:
    """Run the job in this process over every unfinished input file, then finalize; returns ``report.json``."""
    from spcl.annotate.finalize import finalize

    started = time.perf_counter()
    cfg = _with_run_id(cfg)
    todo, skipped = pending_files(cfg)
    clean_staging(cfg)
    docs = 0
    if todo:  # a rerun with nothing left to ask only re-balances: no model is loaded, no server asked
        runner = AnnotateRunner(cfg, clients)
        try:
            runner.check()
            for path, key in todo:
                docs += runner.process_file(path, key)["records_this_run"]
        finally:
            runner.close()
    elapsed = time.perf_counter() - started
    return finalize(cfg, {"engine": "python", "files_processed": len(todo), "files_skipped": skipped,
                          "records": docs, "elapsed_seconds": round(elapsed, 3)})


_RUNNERS: dict[str, AnnotateRunner] = {}


def process_partition(cfg_json: str, files: Iterable[tuple[str, str]]) -> Iterator[str]:
    """Spark ``mapPartitions`` body: annotate each ``(path, key)`` not yet done; one JSON line per file.

    The runner (and its clients, e.g. an in-process vLLM engine) is built once per Python worker.
    """
    runner = _RUNNERS.get(cfg_json)
    if runner is None:
        runner = _RUNNERS[cfg_json] = AnnotateRunner(AnnotateConfig.from_json(cfg_json))
    for path, key in files:
        marker = read_marker(runner.done_marker(key))
        if marker is not None and marker.get("input_sha256") == sha256_file(Path(path)) and (
                not marker.get("pending") or marker.get("last_run") == runner.cfg.run_id):
            continue  # a retried or speculative task: this run already committed this file's content
        stats = runner.process_file(Path(path), key)
        yield json.dumps({"key": key, "records": stats["records_this_run"]})


def run_annotate_spark(cfg: AnnotateConfig, master: str | None = None) -> dict[str, Any]:
    """Run the job with Spark: one task per unfinished input file (the same ``AnnotateRunner`` code on
    executors), then finalize on the driver. Paths must be visible to every executor."""
    from spcl.annotate.finalize import finalize
    from spcl.spark import build_session
    from spcl.spark.files import run_per_file, with_absolute_paths

    started = time.perf_counter()
    cfg = _with_run_id(with_absolute_paths(cfg, ("input", "out")))
    todo, skipped = pending_files(cfg)
    clean_staging(cfg)
    for spec in [*cfg.teachers, *([cfg.verifier] if cfg.verifier else [])]:
        if spec.backend == "openai" and todo:  # fail fast on the driver; in-process models load on executors
            client = make_client(spec, {"retries": 0})
            try:
                client.check()
            finally:
                client.close()
    (Path(cfg.out) / WORK / "done").mkdir(parents=True, exist_ok=True)
    docs = 0
    if todo:
        spark = build_session(None, master, app_name="spcl-annotate")
        lines = run_per_file(spark, [(str(p), k) for p, k in todo], process_partition, cfg.to_json())
        docs = sum(json.loads(line)["records"] for line in lines)
    elapsed = time.perf_counter() - started
    return finalize(cfg, {"engine": "spark", "files_processed": len(todo), "files_skipped": skipped,
                          "records": docs, "elapsed_seconds": round(elapsed, 3)})
