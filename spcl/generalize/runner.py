"""The generalize job's worker: the extractor and chat client of one process (built once), and the
work on one batch of a flagged file's rows (spans, the two-stage generalizer, the release check),
routed to the pass's ``generalized`` / ``failed`` rows and its vault file. The job skeleton's loop
(``spcl.executor.filejob``, ``spcl.executor.vaultjob``) reads the rows and commits;
``spcl.generalize.job`` is the stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from spcl.config import GeneralizeSettings
from spcl.executor import new_run_id
from spcl.executor.unitpass import DUPLICATE, NEW
from spcl.executor.vaultjob import VaultRun
from spcl.extract.backends import Extractor, make_extractor
from spcl.extract.backends.chat import ChatClient
from spcl.extract.backends.registry import (
    GENERALIZE_BACKENDS,
    RULES_BACKEND,
    is_model_backend,
    make_chat,
    takes_option,
)
from spcl.extract.contract import parse_extraction
from spcl.generalize.config import GeneralizeJobConfig
from spcl.generalize.engine import Generalizer
from spcl.generalize.outcome import DocInput
from spcl.generalize.prompts import PROMPT_VERSION
from spcl.generalize.records import GenStats, is_transient_reason
from spcl.generalize.spans import collect_spans, document_hits
from spcl.mask.ids import release_id
from spcl.mask.vault import open_vault, resolve_key
from spcl.text import guess_lang, normalize

__all__ = ["GeneralizeRunner", "build_clients"]


def build_clients(cfg: GeneralizeJobConfig) -> tuple[Extractor, ChatClient | None]:
    """The extractor and the chat client of ``cfg.backend`` (an in-process model is loaded once,
    shared)."""
    if not is_model_backend(cfg.backend):
        return make_extractor(cfg.backend, types=cfg.types), None
    if cfg.backend not in GENERALIZE_BACKENDS:
        *first, last = GENERALIZE_BACKENDS
        raise ValueError(
            f"unknown generalize backend {cfg.backend!r}; choose {', '.join(first)} or {last} "
            "(serve a vLLM model with `vllm serve` and use --backend openai)"
        )
    if cfg.extract_backend is not None and not is_model_backend(cfg.extract_backend):
        return make_extractor(cfg.extract_backend, types=cfg.types), make_chat(
            cfg.backend, model=cfg.model, endpoint=cfg.endpoint, options=cfg.options
        )
    # the chat client shares the extractor's weights
    if takes_option(cfg.backend, "chat", "loaded"):
        extractor = make_extractor(
            cfg.backend, model=cfg.model, types=cfg.types, options=cfg.extract_options
        )
        loaded = (extractor.net, extractor.tokenizer)  # type: ignore[attr-defined]  # loaded model
        return extractor, make_chat(
            cfg.backend, model=cfg.model, options={"loaded": loaded, **cfg.options}
        )
    extractor = make_extractor(
        cfg.backend,
        model=cfg.model,
        endpoint=cfg.endpoint,
        types=cfg.types,
        options=cfg.extract_options,
    )
    return extractor, make_chat(
        cfg.backend, model=cfg.model, endpoint=cfg.endpoint, options=cfg.options
    )


class GeneralizeRunner:
    """Runs the job's unit of work (one input file) with clients built once per process."""

    def __init__(
        self,
        cfg: GeneralizeJobConfig,
        extractor: Extractor | None = None,
        chat: ChatClient | None = None,
        vault_key: bytes | None = None,
    ):
        self.cfg = cfg
        self.key = vault_key if vault_key is not None else resolve_key()
        self.run_id = new_run_id()  # names this process's vault files (one per input file and run)
        # creates the header, or checks the key against it
        self._ids = open_vault(cfg.vault, self.key)
        self._ids.close()  # kept for its keyed id hash only (spcl.mask.ids)
        if extractor is None:
            extractor, chat = build_clients(cfg)
        self.extractor, self.chat = extractor, chat
        self.generalizer = Generalizer(chat, GeneralizeSettings(**cfg.settings))
        self.output = Path(cfg.output)
        for sub in ("generalized", "failed", "_done", "_tmp"):
            (self.output / sub).mkdir(parents=True, exist_ok=True)

    @property
    def identity(self) -> tuple[str, str, str]:
        """``(backend, model, prompt version)`` written on every row."""
        if self.chat is None:
            return RULES_BACKEND, self.extractor.model, "rules-ladders-v1"
        return self.cfg.backend, self.chat.model, PROMPT_VERSION

    def prepare(
        self, batch: pa.RecordBatch, stats: GenStats
    ) -> tuple[list[str | None], list[DocInput | str], list[str | None], set[int]]:
        """Ids, and per row a :class:`DocInput` or the reason it cannot be generalized; the langs;
        and the rows the extractor reported token counts for (its counts are added to ``stats``)."""
        ids = batch.column("id").to_pylist()
        texts = batch.column("text").to_pylist()
        names = batch.schema.names
        langs = batch.column("lang").to_pylist() if "lang" in names else [None] * len(ids)
        hits = batch.column("hits").to_pylist() if "hits" in names else [None] * len(ids)
        todo = [i for i, t in enumerate(texts) if isinstance(t, str) and ids[i] is not None]
        extractions = self.extractor.run([normalize(texts[i]) for i in todo]) if todo else []
        counted: set[int] = set()
        out: list[DocInput | str] = [
            "no_text" if ids[i] is not None else "no_id" for i in range(len(ids))
        ]
        for i, ext in zip(todo, extractions, strict=True):
            text = normalize(texts[i])
            stats.extract_tokens += ext.generated_tokens or 0
            stats.extract_prompt_tokens += ext.prompt_tokens or 0
            if ext.generated_tokens is not None or ext.prompt_tokens is not None:
                counted.add(i)
            if not ext.ok:
                out[i] = f"extract:{ext.error or 'no_output'}"
                continue
            parsed = parse_extraction(ext.raw or "", text, self.cfg.types)
            if not parsed.parse_success:
                out[i] = "extract:" + (
                    "hallucinated_near_source" if parsed.near_source_rows else "unparseable_output"
                )
                continue
            try:
                # the hits column (None: none) ∪ the detectors again
                found = document_hits(text, hits[i])
                entities = collect_spans(
                    text, parsed.candidates, found, types=self.cfg.types, names=self.cfg.names
                )
                kept = [(h.type, h.start, h.end) for h in found]
            except Exception as err:
                out[i] = f"spans_error:{type(err).__name__}"
                continue
            out[i] = DocInput(str(ids[i]), text, langs[i] or guess_lang(text), entities, kept)
        return ids, out, langs, counted

    def take(
        self, run: VaultRun, keys: Sequence[str], batch: pa.RecordBatch, picked: list[str]
    ) -> None:
        """Generalize one batch of rows (``picked``: ``UnitRun.pick`` of their ``keys``) into the
        pass's ``generalized`` / ``failed`` rows (and its vault)."""
        stats, failed_rows, name = run.stats, run.rows["failed"], run.unit.path.name
        backend, model, prompt_version = self.identity
        if DUPLICATE in picked:
            raw_ids = batch.column("id").to_pylist()
            for j, verdict in enumerate(picked):
                if verdict == DUPLICATE:
                    stats.documents += run.settled is None
                    failed_rows.add(
                        raw_ids[j],
                        keys[j],
                        "duplicate_row_key",
                        False,
                        backend,
                        model,
                        prompt_version,
                        name,
                    )
        batch = batch.filter(pa.array([v == NEW for v in picked], pa.bool_()))
        row_keys = [rk for rk, v in zip(keys, picked, strict=True) if v == NEW]
        if not batch.num_rows:
            return
        run.records += batch.num_rows
        ids, prepared, langs, counted = self.prepare(batch, stats)
        docs = [p for p in prepared if isinstance(p, DocInput)]
        results = iter(self.generalizer.run(docs)) if docs else iter(())
        for i, item in enumerate(prepared):
            if run.settled is None:
                stats.documents += 1
            res = next(results) if isinstance(item, DocInput) else None
            if res is not None:
                stats.add(res)
            stats.token_documents += i in counted or (res is not None and res.counted)
            if isinstance(item, str):
                reason: str | None = item
            else:
                # an item that is not a reason is a document: it has a result
                assert res is not None
                reason = res.reason
            # an id that holds a value: released as its keyed hash
            shown = release_id(ids[i], self._ids)
            if ids[i] is None or reason is not None or res is None or res.text is None:
                reason = "no_id" if ids[i] is None else (reason or "unknown")
                failed_rows.add(
                    shown,
                    row_keys[i],
                    reason,
                    is_transient_reason(reason),
                    backend,
                    model,
                    prompt_version,
                    name,
                )
                continue
            run.vault.put(row_keys[i], res.mapping, row_id=str(shown), source_id=ids[i])
            run.rows["generalized"].add(
                shown,
                row_keys[i],
                langs[i],
                res.text,
                res.spans,
                len(res.spans),
                backend,
                model,
                prompt_version,
                name,
                run.writer,
            )

    def close(self) -> None:
        """Release the clients."""
        self.extractor.close()
        # one client may serve both
        if self.chat is not None and id(self.chat) != id(self.extractor):
            self.chat.close()
