"""One executor layer for the jobs whose unit of work is an input file (filter, mask, generalize,
annotate).

- :mod:`~spcl.executor.stage` — the stage protocol: plan units, set up once per worker, process one
  unit into a typed :class:`~spcl.executor.stage.UnitReport`, finish/reconcile;
- :mod:`~spcl.executor.local` / :mod:`~spcl.executor.spark` — run a stage in this process or one
  Spark task per unit, the same worker code in both (a :class:`~spcl.executor.stage.SparkReader`
  stage, the filter, has Spark read its input and hands the executor its ``mapInArrow`` bodies);
- :mod:`~spcl.executor.filejob` — the file-job skeleton mask, generalize and annotate run on (plan
  by content, retries, refusals, staging cleanup, done-markers, reconciliation; each job a class of
  hooks; imported from its module, so that this package imports without pyarrow);
- the shared pieces: :mod:`~spcl.executor.units` (input listing, unit keys),
  :mod:`~spcl.executor.state` (atomic JSON writes, done-markers, committed parts),
  :mod:`~spcl.executor.runs` (run ids), :mod:`~spcl.executor.errors` (the job error), and the path
  checks of ``spcl.io.inputs.check_job_output``.
"""

from spcl.executor.errors import JobError
from spcl.executor.local import run_local
from spcl.executor.runs import new_run_id, with_run_id
from spcl.executor.spark import run_spark
from spcl.executor.stage import FileStage, Plan, RunInfo, SparkReader, SparkTasks, Stage, UnitReport
from spcl.executor.units import Unit, file_key, list_unit_files, record_file_key

__all__ = [
    "FileStage",
    "JobError",
    "Plan",
    "RunInfo",
    "SparkReader",
    "SparkTasks",
    "Stage",
    "Unit",
    "UnitReport",
    "file_key",
    "list_unit_files",
    "new_run_id",
    "record_file_key",
    "run_local",
    "run_spark",
    "with_run_id",
]
