"""Teacher-LLM annotation: turn a crawl sample into screen training data, filtered by teacher
agreement.

Modules, one idea each: ``prompt`` (the versioned ja/ko/en few-shot prompt), ``contract`` (the
one-line ``LABEL<TAB>CODES<TAB>CONFIDENCE`` answer and its code → screen-category mapping),
``candidates`` (which texts the teachers see), ``teachers`` (teacher specs, built as the shared chat
clients of ``spcl.extract.backends.chat``), ``agreement`` (the filter and the verifier), ``balance``
(NONE down-sampling by hashed id), ``report`` (kappa per teacher pair, rates, chart), ``job`` (the
per-file unit of work, resumable, plain Python or Spark), ``finalize`` (outputs and manifests),
``review`` (the rejected texts as a review sample).
"""
