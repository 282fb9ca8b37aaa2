"""The filter job (the bulk pass over every document), one module per concern:

- ``job``: the filter as a stage of ``spcl.executor`` (``STAGE``: plan and check, model card,
  reconcile, write ``stats.json`` and ``manifest.json``), run by ``run_local`` (python engine) or
  ``run_spark`` (Spark engine);
- ``driver``: the job, its errors, and the path, output and model checks and local reading the stage
  uses;
- ``task``: one input file in, its screened rows written, a typed report (``TaskReport``) out;
- ``batch``: the per-batch function (Arrow ``RECORD_SCHEMA`` in, ``OUTPUT_SCHEMA`` out) and its
  context;
- ``route``: the decision policy (which rule hits and screen flags make a document ``flagged``);
- ``stats``: counts merged into ``stats.json``;
- ``spark``: the Spark pieces (URL listing, the ``mapInArrow`` / byte-range jobs, the start-up
  split);
- ``spark_tasks``: the task bodies a Spark Python worker runs (and imports: nothing of the driver).
"""
