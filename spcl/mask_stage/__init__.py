"""The mask job (the LLM stage): flagged Parquet → extract (a backend) → candidates → mask → release
check → ``masked/`` / ``failed/`` / vault.

Layout under ``--output``::

    masked/part-<key>.parquet   id, row_key, lang, masked_text, spans (with found_by),
                                entity_types, n_entities, backend, extracted_by, model,
                                prompt_version, fallback, source_file, vault_file, config_hash
                                (no clear values)
    failed/part-<key>.parquet   id, row_key, reason, transient, backend, model, prompt_version,
                                source_file, config_hash (no text)
    _done/<key>.json            the state of one input file: its content hash, runs, counts and
                                timings
    metrics.json                totals, transient/permanent failures, reconciliation, this run's
                                speed
    manifest.json               SHA-256 and size of every file, config hash, model, prompt version

and the token mappings go to the vault folder (``--vault``): one new ``mask-<key>-<run>-<n>.jsonl``
per input file and run, encrypted (``spcl.mask.vault``), keyed by row key; the vault gets its own
``manifest.json``.

The promise, module by module: the stages add up (``candidates``: extractor rows ∪ rule hits ∪ name
finders), nothing reaches ``masked/`` without passing the release check (``release``: every flagging
rule hit inside a masked span), every input row lands in ``masked/`` or ``failed/`` (reconciled),
failures say whether a rerun retries them (``failures``), a rerun redoes changed files and retries
transient failures (``state``), and ``unmask`` restores the exact source of every masked row whose
round trip it can prove.
"""

from spcl.mask_stage.config import MaskJobConfig
from spcl.mask_stage.inputs import MaskJobError, file_key, list_input_files
from spcl.mask_stage.predictions import export_predictions, iter_masked
from spcl.mask_stage.run import run_mask_job, run_mask_job_spark
from spcl.mask_stage.schema import FAILED_SCHEMA, MASKED_SCHEMA
from spcl.mask_stage.state import load_markers
from spcl.mask_stage.task import MaskRunner
from spcl.mask_stage.unmask import unmask_output

__all__ = [
    "FAILED_SCHEMA",
    "MASKED_SCHEMA",
    "MaskJobConfig",
    "MaskJobError",
    "MaskRunner",
    "export_predictions",
    "file_key",
    "iter_masked",
    "list_input_files",
    "load_markers",
    "run_mask_job",
    "run_mask_job_spark",
    "unmask_output",
]
