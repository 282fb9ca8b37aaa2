"""The filter job (the bulk pass over every document), one module per concern:

- ``job``: run a crawl end to end (list inputs, run the tasks with the python or Spark engine, reconcile,
  write ``stats.json`` and ``manifest.json``);
- ``task``: one input file in, its screened rows written, a small report out;
- ``batch``: the per-batch function (Arrow ``RECORD_SCHEMA`` in, ``OUTPUT_SCHEMA`` out) and its context;
- ``route``: the decision policy (which rule hits and screen flags make a document ``flagged``);
- ``stats``: counts merged into ``stats.json``.

- ``spark``: the Spark engine (listing, the ``mapInArrow`` adapter), over ``spcl.spark``'s session.
"""
