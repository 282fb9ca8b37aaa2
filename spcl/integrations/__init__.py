"""spcl inside other people's pipelines, all over the filter's one per-batch function
(``spcl.filter.batch``):

- ``rows``: the shared adapter (rows → ``RECORD_SCHEMA`` → ``process_batch`` → the screen's columns
  in input order) and :func:`screen_texts`, the plain Python function for a list of texts;
- ``masking``: the mask stage over in-memory rows (screen → backend → operators → release check →
  vault), the core of the masking steps below;
- ``datatrove_steps``: datatrove steps that filter, annotate or mask (``SpclMask``) (extra
  ``datatrove``);
- ``hf``: ``screen_dataset`` and ``mask_dataset`` over Hugging Face ``datasets.Dataset.map`` (extra
  ``hf``).

- ``spark``: ``screen_dataframe`` for a Spark DataFrame the user already has (``mapInArrow``).
"""

from spcl.integrations.rows import SCREEN_COLUMNS, SCREEN_SCHEMA, Screened, screen_texts

__all__ = ["SCREEN_COLUMNS", "SCREEN_SCHEMA", "Screened", "screen_texts"]
