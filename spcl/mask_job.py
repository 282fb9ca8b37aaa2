"""The mask job: flagged Parquet → extract (a backend) → parse (the contract) → mask → masked / failed / vault.

Layout under ``--output``::

    masked/part-<key>.parquet   id, lang, masked_text, spans, entity_types, n_entities, backend, extracted_by,
                                model, prompt_version, fallback, source_file        (no clear values)
    failed/part-<key>.parquet   id, reason, backend, model, prompt_version, source_file (no text)
    _done/<key>.json            the checkpoint of one input file: its counts and timings
    metrics.json                totals over every finished file, and this run's speed

and the token mappings go to the vault folder (``--vault``), one ``mask-<key>.jsonl`` per input file,
encrypted (``spcl.mask.vault``). ``<key>`` names one input file (its stem plus a hash of its path).

**Fail closed.** A document whose extraction fails (the backend's reason: ``timeout``, ``output_truncated``
…), whose output does not parse (``unparseable_output``, ``hallucinated_only``, ``no_valid_rows``) or whose
masking fails (``mask_error:*``, ``mask_roundtrip``) goes to ``failed/`` with the reason, never to
``masked/``. With ``fallback="rules"`` such a document is retried with the rules backend and, if that
works, masked with ``fallback=true`` and ``extracted_by="rules"``.

**Resumable.** Each input file is one unit of work: its outputs are written under temporary names, moved
into place with ``os.replace`` (vault, then failed, then masked), and only then is its ``_done/<key>.json``
written (also atomically). A rerun skips files with a done-marker and redoes any other file from scratch,
replacing — never appending to — what a killed run left, so nothing is lost and nothing is written twice.
A backend that cannot serve at all (``BackendUnavailable``) stops the job; a rerun resumes.

Paths are local (or a shared filesystem mounted on every worker, for ``jobs/mask.py`` on a cluster).
Logs, exceptions and metrics name files, ids, types and counts, never document text or values.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spcl.extract.backends import Extraction, Extractor, make_extractor
from spcl.extract.contract import ParseResult, parse_extraction
from spcl.mask import mask_text, reassemble_text
from spcl.mask.variants import DEFAULT_TYPES
from spcl.text import normalize

log = logging.getLogger("spcl.mask_job")

SPAN_TYPE = pa.struct(
    [
        pa.field("type", pa.string(), nullable=False),
        pa.field("start", pa.int32(), nullable=False),
        pa.field("end", pa.int32(), nullable=False),
        pa.field("token", pa.string(), nullable=False),
    ]
)
MASKED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("lang", pa.string()),
        pa.field("masked_text", pa.string(), nullable=False),
        pa.field("spans", pa.list_(SPAN_TYPE)),  # half-open offsets into the NFC source
        pa.field("entity_types", pa.list_(pa.string())),  # sorted, distinct
        pa.field("n_entities", pa.int32(), nullable=False),  # masked spans
        pa.field("backend", pa.string(), nullable=False),  # the backend asked for
        pa.field("extracted_by", pa.string(), nullable=False),  # the backend that produced this row
        pa.field("model", pa.string(), nullable=False),
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("fallback", pa.bool_(), nullable=False),
        pa.field("source_file", pa.string(), nullable=False),
    ]
)
FAILED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("backend", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("prompt_version", pa.string(), nullable=False),
        pa.field("source_file", pa.string(), nullable=False),
    ]
)
LATENCY_PERCENTILES = (50, 90, 99)
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class MaskJobError(RuntimeError):
    """The job cannot run (bad input folder, unreadable file); messages name paths, never values."""


@dataclass(slots=True)
class MaskJobConfig:
    """Everything a mask run needs; ``options`` go to the backend's constructor."""

    input: str
    output: str
    vault: str
    backend: str = "rules"
    model: str | None = None
    endpoint: str | None = None
    fallback: str | None = None  # None or "rules"
    batch_size: int = 64
    types: tuple[str, ...] = DEFAULT_TYPES
    options: dict[str, Any] = field(default_factory=dict)
    chunk_chars: int = 0  # > 0: model backends see long documents in overlapping windows of this size

    def to_json(self) -> str:
        """The config as JSON (for Spark workers)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> MaskJobConfig:
        """The config back from :meth:`to_json`."""
        data = json.loads(text)
        data["types"] = tuple(data["types"])
        return cls(**data)


@dataclass(slots=True)
class FileStats:
    """Counts and timings of one input file (the body of its done-marker); sums with ``merge``."""

    files: int = 0
    documents: int = 0
    masked: int = 0
    failed: int = 0
    fallback: int = 0
    failed_reasons: dict[str, int] = field(default_factory=dict)
    entities: dict[str, int] = field(default_factory=dict)  # masked spans per type
    outputs: int = 0  # documents the primary backend produced an output for
    parsed: int = 0  # ... whose output parsed (contract parse_success)
    checked_rows: int = 0
    hallucinated_rows: int = 0
    generated_tokens: int = 0
    extract_seconds: float = 0.0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)  # per document, primary backend

    def merge(self, other: FileStats) -> None:
        """Add ``other`` into this one."""
        for name in ("files", "documents", "masked", "failed", "fallback", "outputs", "parsed", "checked_rows",
                     "hallucinated_rows", "generated_tokens", "extract_seconds", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in ((self.failed_reasons, other.failed_reasons), (self.entities, other.entities)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        self.latencies.extend(other.latencies)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileStats:
        """A ``FileStats`` from a done-marker's ``stats``."""
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def list_input_files(input_path: str | Path) -> list[Path]:
    """The Parquet files under ``input_path`` (a file or a folder, searched recursively), sorted.

    Names starting with ``.`` or ``_`` (Spark's ``_SUCCESS``, temporary files) are skipped.
    """
    root = Path(input_path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise MaskJobError(f"input {root} is neither a Parquet file nor a folder")
    files = [
        p for p in root.rglob("*.parquet")
        if p.is_file() and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts)
    ]
    return sorted(files)


def file_key(path: Path, root: str | Path) -> str:
    """A stable, filesystem-safe name for one input file: its stem and a hash of its path under ``root``.

    >>> file_key(Path("/in/decision=flagged/part-0.parquet"), "/in")[:7]
    'part-0-'
    """
    base = Path(root)
    rel = path.relative_to(base).as_posix() if base.is_dir() else path.name
    digest = hashlib.sha256(rel.encode("utf-8")).hexdigest()[:12]
    return f"{_KEY_UNSAFE.sub('_', path.stem)[:80]}-{digest}"


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _failure_reason(res: ParseResult) -> str:
    if res.hallucinated_rows and not res.candidates:
        return "hallucinated_only"
    if res.rows_read == 0:
        return "unparseable_output"
    return "no_valid_rows"


@dataclass(slots=True)
class _Outcome:
    masked: tuple[str, list[dict[str, Any]], list[str], dict[str, str]] | None = None  # text, spans, types, map
    reason: str | None = None


def mask_document(text: str, extraction: Extraction, types: tuple[str, ...]) -> tuple[_Outcome, ParseResult | None]:
    """Parse one extraction and mask the document, or say why not (fail closed)."""
    if not extraction.ok:
        return _Outcome(reason=extraction.error or "no_output"), None
    try:
        parsed = parse_extraction(extraction.raw or "", text, types)
    except Exception as err:
        return _Outcome(reason=f"parse_error:{type(err).__name__}"), None
    if not parsed.parse_success:
        return _Outcome(reason=_failure_reason(parsed)), parsed
    try:
        result = mask_text(text, parsed.candidates)
        if reassemble_text(result.masked_text, result.mapping) != normalize(text):
            return _Outcome(reason="mask_roundtrip"), parsed
    except Exception as err:
        return _Outcome(reason=f"mask_error:{type(err).__name__}"), parsed
    spans = [{"type": s.type, "start": s.start, "end": s.end, "token": s.token} for s in result.spans]
    return _Outcome(masked=(result.masked_text, spans, sorted({s.type for s in result.spans}), result.mapping)), parsed


class MaskRunner:
    """Runs the job's unit of work (one input file) with one extractor, built once per process."""

    def __init__(self, cfg: MaskJobConfig, extractor: Extractor | None = None, fallback: Extractor | None = None,
                 vault_key: bytes | None = None):
        from spcl.mask.vault import open_vault, resolve_key

        self.cfg = cfg
        self.key = vault_key if vault_key is not None else resolve_key()
        open_vault(cfg.vault, self.key).close()  # creates the header, or checks the key against it
        self.extractor = extractor or make_extractor(cfg.backend, model=cfg.model, endpoint=cfg.endpoint,
                                                     types=cfg.types, options=cfg.options,
                                                     chunk_chars=cfg.chunk_chars)
        if fallback is None and cfg.fallback:
            if cfg.fallback != "rules":
                raise MaskJobError("only --fallback rules is supported")
            fallback = make_extractor("rules", types=cfg.types)
        self.fallback = fallback
        self.out = Path(cfg.output)
        for sub in ("masked", "failed", "_done", "_tmp"):
            (self.out / sub).mkdir(parents=True, exist_ok=True)
        self.check = getattr(self.extractor, "check", None)

    def done_marker(self, key: str) -> Path:
        """The checkpoint file of input file ``key``."""
        return self.out / "_done" / f"{key}.json"

    def _batches(self, path: Path) -> Iterator[pa.RecordBatch]:
        try:
            pf = pq.ParquetFile(path)
        except (OSError, pa.ArrowInvalid) as err:
            raise MaskJobError(f"cannot read {path}: {type(err).__name__}") from None
        names = set(pf.schema_arrow.names)
        if not {"id", "text"} <= names:
            raise MaskJobError(f"{path} has no 'id' and 'text' columns (is it the filter job's flagged output?)")
        columns = ["id", "text"] + (["lang"] if "lang" in names else [])
        yield from pf.iter_batches(batch_size=self.cfg.batch_size, columns=columns)

    def process_file(self, path: Path, key: str) -> FileStats:
        """Mask one input file end to end and commit it (outputs moved into place, then the done-marker)."""
        from spcl.mask.vault import open_vault

        started = time.perf_counter()
        cfg, ex = self.cfg, self.extractor
        stats = FileStats(files=1)
        tmp = self.out / "_tmp" / f"{key}.{os.getpid()}.{secrets.token_hex(4)}"
        tmp.mkdir(parents=True)
        vault_stage = Path(cfg.vault) / "_staging" / tmp.name
        writer = f"mask-{key}"
        vault = open_vault(vault_stage, self.key, writer=writer)
        masked_rows: dict[str, list[Any]] = {name: [] for name in MASKED_SCHEMA.names}
        failed_rows: dict[str, list[Any]] = {name: [] for name in FAILED_SCHEMA.names}
        source_file = path.name
        failed_reasons: Counter[str] = Counter()
        entities: Counter[str] = Counter()
        try:
            for batch in self._batches(path):
                ids = batch.column("id").to_pylist()
                texts = batch.column("text").to_pylist()
                langs = batch.column("lang").to_pylist() if "lang" in batch.schema.names else [None] * len(ids)
                todo = [i for i, t in enumerate(texts) if isinstance(t, str)]
                t0 = time.perf_counter()
                results = ex.run([texts[i] for i in todo]) if todo else []
                stats.extract_seconds += time.perf_counter() - t0
                outcomes: dict[int, tuple[_Outcome, str]] = {}
                for i, res in zip(todo, results, strict=True):
                    stats.latencies.append(round(res.seconds, 6))
                    stats.generated_tokens += res.generated_tokens or 0
                    outcome, parsed = mask_document(texts[i], res, cfg.types)
                    if res.ok:
                        stats.outputs += 1
                    if parsed is not None:
                        stats.parsed += parsed.parse_success
                        stats.checked_rows += parsed.checked_rows
                        stats.hallucinated_rows += len(parsed.hallucinated_rows)
                    outcomes[i] = (outcome, ex.name)
                retry = [i for i in todo if outcomes[i][0].masked is None]
                if self.fallback is not None and retry:
                    for i, res in zip(retry, self.fallback.run([texts[i] for i in retry]), strict=True):
                        outcome, _ = mask_document(texts[i], res, cfg.types)
                        if outcome.masked is not None:
                            outcomes[i] = (outcome, self.fallback.name)
                for i, doc_id in enumerate(ids):
                    stats.documents += 1
                    if doc_id is None:
                        failed_reasons["no_id"] += 1
                        log.warning("%s: a row without an id was skipped (counted as failed)", source_file)
                        continue
                    outcome, by = outcomes.get(i, (_Outcome(reason="no_text"), ex.name))
                    if outcome.masked is None:
                        failed_reasons[outcome.reason or "unknown"] += 1
                        for name, value in zip(FAILED_SCHEMA.names, (doc_id, outcome.reason or "unknown", ex.name,
                                                                     ex.model, ex.prompt_version, source_file),
                                               strict=True):
                            failed_rows[name].append(value)
                        continue
                    masked_text, spans, types, mapping = outcome.masked
                    vault.put(doc_id, mapping)
                    fallback_used = by != ex.name
                    stats.fallback += fallback_used
                    entities.update(s["type"] for s in spans)
                    row = (doc_id, langs[i], masked_text, spans, types, len(spans), ex.name, by,
                           ex.model if not fallback_used else self.fallback.model,  # type: ignore[union-attr]
                           ex.prompt_version if not fallback_used else self.fallback.prompt_version,  # type: ignore[union-attr]
                           fallback_used, source_file)
                    for name, value in zip(MASKED_SCHEMA.names, row, strict=True):
                        masked_rows[name].append(value)
            vault.close()
            stats.failed = sum(failed_reasons.values())
            stats.masked = len(masked_rows["id"])
            stats.failed_reasons = dict(sorted(failed_reasons.items()))
            stats.entities = dict(sorted(entities.items()))
            self._commit(key, tmp, vault_stage, writer, masked_rows, failed_rows)
            stats.seconds = time.perf_counter() - started
            marker = {"input": str(path), "key": key, "backend": ex.name, "model": ex.model,
                      "prompt_version": ex.prompt_version, "stats": asdict(stats)}
            _write_json_atomic(self.done_marker(key), marker)
            log.info("%s: %d documents, %d masked, %d failed", source_file, stats.documents, stats.masked,
                     stats.failed)
            return stats
        finally:
            vault.close()
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(vault_stage, ignore_errors=True)

    def _commit(self, key: str, tmp: Path, vault_stage: Path, writer: str,
                masked_rows: dict[str, list[Any]], failed_rows: dict[str, list[Any]]) -> None:
        moves: list[tuple[Path | None, Path]] = []
        staged_vault = vault_stage / f"{writer}.jsonl"
        moves.append((staged_vault if staged_vault.exists() else None, Path(self.cfg.vault) / f"{writer}.jsonl"))
        for name, rows, schema in (("failed", failed_rows, FAILED_SCHEMA), ("masked", masked_rows, MASKED_SCHEMA)):
            target = self.out / name / f"part-{key}.parquet"
            if rows["id"]:
                staged = tmp / f"{name}.parquet"
                pq.write_table(pa.table(rows, schema=schema), staged, compression="zstd")
                moves.append((staged, target))
            else:
                moves.append((None, target))
        for src, dst in moves:  # vault first, masked last: masked rows never lack their mapping
            if src is None:
                dst.unlink(missing_ok=True)  # a killed run's leftovers for a file that now has none
            else:
                os.replace(src, dst)

    def close(self) -> None:
        """Release the extractors."""
        self.extractor.close()
        if self.fallback is not None:
            self.fallback.close()


def load_done(output: str | Path) -> dict[str, FileStats]:
    """The finished files of an output folder: key → stats."""
    done: dict[str, FileStats] = {}
    for marker in sorted((Path(output) / "_done").glob("*.json")):
        data = json.loads(marker.read_text(encoding="utf-8"))
        done[data["key"]] = FileStats.from_dict(data["stats"])
    return done


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _rate(num: float, den: float) -> float:
    return num / den if den else 0.0


def _marker_identity(output: str | Path) -> tuple[list[str], list[str]]:
    models: set[str] = set()
    prompts: set[str] = set()
    for marker in (Path(output) / "_done").glob("*.json"):
        data = json.loads(marker.read_text(encoding="utf-8"))
        models.add(str(data.get("model", "")))
        prompts.add(str(data.get("prompt_version", "")))
    return sorted(models), sorted(prompts)


def build_metrics(cfg: MaskJobConfig, extractor: Extractor | None, done: dict[str, FileStats],
                  run: dict[str, Any]) -> dict[str, Any]:
    """metrics.json: totals over every finished file plus this run's speed (counts and rates, no values).

    Model and prompt version come from ``extractor``, or (Spark driver, which builds none) the done-markers;
    ``models_in_output`` lists every model that wrote a finished file (a resumed output can hold several).
    """
    total = FileStats()
    for stats in done.values():
        total.merge(stats)
    models, prompts = _marker_identity(cfg.output)  # a resumed output may hold files of several runs
    if extractor is not None:
        model, prompt_version = extractor.model, extractor.prompt_version
    else:
        model = models[0] if len(models) == 1 else "mixed"
        prompt_version = prompts[0] if len(prompts) == 1 else "mixed"
    return {
        "backend": cfg.backend,
        "model": model,
        "prompt_version": prompt_version,
        "models_in_output": models,
        "prompt_versions_in_output": prompts,
        "fallback": cfg.fallback,
        "files": total.files,
        "documents": total.documents,
        "masked": total.masked,
        "failed": total.failed,
        "masked_by_fallback": total.fallback,
        "failed_reasons": dict(sorted(total.failed_reasons.items())),
        "entities_per_type": dict(sorted(total.entities.items())),
        "entities": sum(total.entities.values()),
        "parse_success_rate": _rate(total.parsed, total.outputs),
        "extraction_success_rate": _rate(total.outputs, total.documents),
        "hallucination_rate": _rate(total.hallucinated_rows, total.checked_rows),
        "latency_seconds": {f"p{q}": round(_percentile(total.latencies, q), 6) for q in LATENCY_PERCENTILES},
        "generated_tokens": total.generated_tokens,
        "generated_tokens_per_second": round(_rate(total.generated_tokens, total.extract_seconds), 3),
        "docs_per_second": round(_rate(total.documents, total.seconds), 3),
        "run": run,
    }


def pending_files(cfg: MaskJobConfig) -> tuple[list[tuple[Path, str]], int]:
    """``(path, key)`` of the input files not yet done, and how many are done already."""
    files = list_input_files(cfg.input)
    done = set(load_done(cfg.output)) if (Path(cfg.output) / "_done").exists() else set()
    keyed = [(p, file_key(p, cfg.input)) for p in files]
    return [(p, k) for p, k in keyed if k not in done], sum(k in done for _, k in keyed)


def write_metrics(cfg: MaskJobConfig, extractor: Extractor | None, run: dict[str, Any]) -> dict[str, Any]:
    """Aggregate the done-markers into ``metrics.json`` and return it."""
    metrics = build_metrics(cfg, extractor, load_done(cfg.output), run)
    _write_json_atomic(Path(cfg.output) / "metrics.json", metrics)
    return metrics


def clean_staging(cfg: MaskJobConfig) -> None:
    """Remove what a killed run left under temporary names (call only when no other run is active)."""
    shutil.rmtree(Path(cfg.output) / "_tmp", ignore_errors=True)
    shutil.rmtree(Path(cfg.vault) / "_staging", ignore_errors=True)


def run_mask_job(cfg: MaskJobConfig, extractor: Extractor | None = None) -> dict[str, Any]:
    """Run the job in this process over every unfinished input file; returns ``metrics.json``'s content."""
    started = time.perf_counter()
    todo, skipped = pending_files(cfg)
    clean_staging(cfg)
    runner = MaskRunner(cfg, extractor)
    try:
        if runner.check is not None and todo:
            runner.check()  # an unreachable endpoint stops the job before any file is touched
        docs = 0
        for path, key in todo:
            docs += runner.process_file(path, key).documents
        elapsed = time.perf_counter() - started
        run = {"files_processed": len(todo), "files_skipped": skipped, "documents": docs,
               "elapsed_seconds": round(elapsed, 3), "docs_per_second": round(_rate(docs, elapsed), 3)}
        return write_metrics(cfg, runner.extractor, run)
    finally:
        runner.close()


_RUNNERS: dict[str, MaskRunner] = {}


def _runner_for(cfg_json: str) -> MaskRunner:
    """The runner of this worker process (the extractor and its model are loaded once per process)."""
    runner = _RUNNERS.get(cfg_json)
    if runner is None:
        runner = MaskRunner(MaskJobConfig.from_json(cfg_json))
        _RUNNERS[cfg_json] = runner
    return runner


def process_partition(cfg_json: str, files: Iterable[tuple[str, str]]) -> Iterator[str]:
    """Spark ``mapPartitions`` body: mask each ``(path, key)`` not yet done; yields one JSON line per file."""
    runner = _runner_for(cfg_json)
    for path, key in files:
        if runner.done_marker(key).exists():  # a retried or speculative task: already committed
            continue
        stats = runner.process_file(Path(path), key)
        yield json.dumps({"key": key, "documents": stats.documents})


def run_mask_job_spark(cfg: MaskJobConfig, master: str | None = None) -> dict[str, Any]:
    """Run the job with Spark: one task per unfinished input file, the same ``MaskRunner`` code on executors.

    Executors read the vault key from their own environment (``SPCL_VAULT_KEY`` / ``SPCL_VAULT_KEY_FILE``,
    e.g. ``spark.executorEnv.SPCL_VAULT_KEY_FILE``); it is never shipped inside a task. Paths must be
    visible to every executor (local mode, or a shared filesystem).
    """
    from functools import partial

    from spcl.config import load_settings
    from spcl.mask.vault import open_vault
    from spcl.spark import build_session

    started = time.perf_counter()
    todo, skipped = pending_files(cfg)
    open_vault(cfg.vault).close()  # fail fast on a missing or wrong key, on the driver
    clean_staging(cfg)
    (Path(cfg.output) / "_done").mkdir(parents=True, exist_ok=True)
    docs = 0
    if todo:
        spark = build_session(load_settings(None), master)
        rdd = spark.sparkContext.parallelize([(str(p), k) for p, k in todo], numSlices=len(todo))
        lines = rdd.mapPartitions(partial(process_partition, cfg.to_json())).collect()
        docs = sum(json.loads(line)["documents"] for line in lines)
    elapsed = time.perf_counter() - started
    run = {"engine": "spark", "files_processed": len(todo), "files_skipped": skipped, "documents": docs,
           "elapsed_seconds": round(elapsed, 3), "docs_per_second": round(_rate(docs, elapsed), 3)}
    return write_metrics(cfg, None, run)


_VARIANT_NOISE = re.compile(r"[\s\-./()\u3000]")


def _candidates_from_mapping(mapping: dict[str, str], token_re: re.Pattern[str]) -> list[list[str]]:
    """``[TYPE, surface]`` per token; a surface that is only a spacing/separator variant of an earlier one of
    the same type (``김 가 상`` after ``김가상``) is left out, since the masker found it from the same candidate."""
    seen: set[tuple[str, str]] = set()
    out: list[list[str]] = []
    for tok, surface in sorted(mapping.items(), key=lambda kv: (len(kv[1]) - len(_VARIANT_NOISE.sub("", kv[1])),
                                                                 kv[0])):
        if not token_re.fullmatch(tok):
            continue
        type_ = tok[1:].rsplit("_", 1)[0]
        key = (type_, _VARIANT_NOISE.sub("", surface))
        if key not in seen:
            seen.add(key)
            out.append([type_, surface])
    return out


def export_predictions(output: str | Path, vault_dir: str | Path, pred_path: str | Path,
                       key: bytes | str | Path | None = None) -> int:
    """Write ``spcl eval masking``'s PRED.jsonl from a finished run: candidates from the vault's mappings.

    Masked documents give ``[TYPE, surface]`` for each token of their mapping; failed documents give no
    candidates and ``parse_success: false``. **The file holds values in clear** — use it on synthetic or
    gold data, never on a production corpus. Returns the number of records written.
    """
    from spcl.mask.tokens import TOKEN_RE
    from spcl.mask.vault import open_vault

    vault = open_vault(vault_dir, key)
    n = 0
    with open(pred_path, "w", encoding="utf-8") as fh:
        for name in ("masked", "failed"):
            for part in sorted((Path(output) / name).glob("*.parquet")):
                for doc_id in pq.read_table(part, columns=["id"]).column("id").to_pylist():
                    if name == "masked":
                        cands = _candidates_from_mapping(vault.get(doc_id), TOKEN_RE)
                        rec: dict[str, Any] = {"id": doc_id, "candidates": cands, "parse_success": True}
                    else:
                        rec = {"id": doc_id, "candidates": [], "parse_success": False}
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    n += 1
    return n


def iter_masked(output: str | Path) -> Iterable[dict[str, Any]]:
    """Every masked row of an output folder (for tests and inspection)."""
    for part in sorted((Path(output) / "masked").glob("*.parquet")):
        yield from pq.read_table(part).to_pylist()
