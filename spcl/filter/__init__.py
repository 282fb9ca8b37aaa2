"""The filter job (the bulk pass over every document), one module per concern:

- ``job``: run a crawl end to end (choose the engine once, reconcile, write ``stats.json`` and ``manifest.json``);
- ``driver``: the job, its errors, the engine protocol and the checks both engines share on the driver;
- ``local``: the python engine (one process, local files);
- ``task``: one input file in, its screened rows written, a typed report (``TaskReport``) out;
- ``batch``: the per-batch function (Arrow ``RECORD_SCHEMA`` in, ``OUTPUT_SCHEMA`` out) and its context;
- ``route``: the decision policy (which rule hits and screen flags make a document ``flagged``);
- ``stats``: counts merged into ``stats.json``;
- ``spark``: the Spark engine (listing, tasks, the start-up split), over ``spcl.spark``'s session;
- ``spark_tasks``: the task bodies a Spark Python worker runs (and imports: nothing of the driver).
"""
