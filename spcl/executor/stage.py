"""The stage protocol: what a job is, for the executors that run it.

A stage is a job whose work splits into units (input files). The driver **plans** the units
(listing, done-markers, what is left to do), runs its **before** checks (a vault key, a reachable
endpoint, staging left by a killed run); each worker process **sets up** once (models and clients
loaded there, never on the driver and never twice) and **processes** units one at a time, each into
a typed :class:`UnitReport`; the driver **finishes** (reconcile every input unit against the
committed outputs, write metrics and manifests). A unit commits atomically (parts, then its
done-marker), so a retried or speculative Spark task asks :meth:`Stage.committed` and skips what
this run already wrote.

The executors (``spcl.executor.local``, ``spcl.executor.spark``) hold the control flow once; a job
package keeps only what is its own (how to process a unit, what its outputs and metrics are).

A stage whose input Spark should read itself (the filter: Hadoop lists and reads any URL and hands
each file's bytes to a ``mapInArrow`` body) is also a :class:`SparkReader`: after the session starts
the Spark executor asks it for the modules its workers import (preloaded once per executor), to
complete the plan with what only Spark can list, for the :class:`SparkTasks` to run (the bodies and
what they run over), and for the units Spark did not read; the control flow stays the executor's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import (
    Any,
    ClassVar,
    Generic,
    Literal,
    Protocol,
    TypedDict,
    TypeVar,
    runtime_checkable,
)

from spcl.executor.errors import JobError
from spcl.executor.runs import with_run_id
from spcl.executor.units import Unit
from spcl.progress import Progress

C = TypeVar("C")
W = TypeVar("W")
R_co = TypeVar("R_co", covariant=True)  # a stage's metrics: only returned
C_contra = TypeVar("C_contra", contravariant=True)  # a reader only takes the configuration


class UnitReportJson(TypedDict):
    """A :class:`UnitReport` as JSON (what a Spark task sends back)."""

    key: str
    records: int


@dataclass(slots=True)
class UnitReport:
    """What processing one unit returns to the driver: its key and how many records this run asked
    about (all of a unit done from scratch, only the retried ones in a retry pass). Counts only,
    never values."""

    key: str
    records: int = 0

    def to_dict(self) -> UnitReportJson:
        """JSON-ready (what a Spark task sends back)."""
        return {"key": self.key, "records": self.records}

    @classmethod
    def from_dict(cls, data: UnitReportJson) -> UnitReport:
        """A report back from :meth:`to_dict`."""
        return cls(key=str(data["key"]), records=int(data["records"]))


@dataclass(slots=True)
class Plan:
    """The driver's plan: the units to process now, how many are done already, and the stage's own
    context for :meth:`Stage.finish` (e.g. every unit's content hash, read once)."""

    todo: list[Unit]
    skipped: int
    context: Any = None


@dataclass(slots=True)
class RunInfo:
    """How the executor ran the plan (for the stage's metrics): engine, units, records, wall
    time."""

    engine: str  # "python" | "spark"
    files_processed: int
    files_skipped: int
    records: int
    elapsed_seconds: float
    reports: list[Any] = field(default_factory=list)
    """The units' reports (:class:`UnitReport`, or a :class:`SparkReader`'s own report type)."""
    session: Any = None
    """The Spark session of a Spark run (a finish may count with it), else ``None``."""
    timings: dict[str, float] = field(default_factory=dict)
    """The executor's own timings in seconds (``session``: starting the Spark session)."""
    tasks_started: float | None = None
    """Epoch seconds when the first Spark job was submitted (the workers' start-up is measured
    from it)."""


class Stage(Protocol, Generic[C, W, R_co]):
    """A job the executors can run. ``C`` is its config (a dataclass with ``run_id`` and
    ``to_json``/ ``from_json``), ``W`` its worker (what :meth:`setup` builds once per process),
    ``R_co`` its metrics (what :meth:`finish` returns, and the executors with it)."""

    name: ClassVar[str]
    """Short name (``mask``): the Spark application is ``spcl-<name>``."""
    ref: ClassVar[str]
    """``module:attribute`` of the stage object, how a Spark worker finds it."""
    path_fields: ClassVar[tuple[str, ...]]
    """The config's local path fields, made absolute on the driver before a Spark run."""
    error: ClassVar[type[JobError]]
    """The error this job raises (a :class:`JobError`)."""
    setup_when_idle: ClassVar[bool]
    """Set up a worker on the python engine even when nothing is to do (its setup writes output
    folders)."""
    lock_field: ClassVar[str | None]
    """The config field naming the output folder the executors lock for the whole run
    (``spcl.executor.lock``: a second run on the same folder is refused); ``None``: no lock."""

    def config_from_json(self, text: str) -> C:
        """The config back on a worker."""
        ...

    def prepare(self, cfg: C) -> C:
        """The config of this run (a run id; the executor makes paths absolute for Spark first)."""
        ...

    def plan(self, cfg: C) -> Plan:
        """Check the paths, list the units, read the done-markers: what is left to do."""
        ...

    def before(self, cfg: C, plan: Plan, engine: str) -> None:
        """Driver-side work before any unit (clean staging; for Spark: fail fast on a wrong vault
        key or an unreachable endpoint, since workers load their clients themselves)."""
        ...

    def setup(self, cfg: C, clients: dict[str, Any]) -> W:
        """The worker of this process (``clients`` given by a caller, e.g. a test's scripted
        backend)."""
        ...

    def check(self, worker: W) -> None:
        """Ask the worker's clients whether they can serve (before the first unit, python
        engine)."""
        ...

    def committed(self, worker: W, unit: Unit) -> bool:
        """True when this run already committed ``unit`` (a retried or speculative Spark task
        skips it)."""
        ...

    def progress_total(self, plan: Plan) -> int | None:
        """The records the plan's units hold, for the python engine's progress bar (``None``:
        unknown)."""
        ...

    def progress_work(self, plan: Plan) -> int | None:
        """The work (e.g. input bytes) the plan's units hold, for the bar's ETA when records are
        unknown."""
        ...

    def process(self, worker: W, unit: Unit, progress: Progress | None = None) -> UnitReport | Any:
        """Process one unit end to end and commit it, advancing ``progress`` (counts only) when
        given; its report is a :class:`UnitReport` or, for a :class:`SparkReader`, the stage's own
        report type."""
        ...

    def teardown(self, worker: W) -> None:
        """Release the worker's clients."""
        ...

    def finish(self, cfg: C, plan: Plan, run: RunInfo, worker: W | None) -> R_co:
        """Reconcile, write metrics and manifests; returns the metrics (``worker`` on the python
        engine)."""
        ...


@dataclass(frozen=True)
class SparkTasks:
    """One Spark job a :class:`SparkReader` asks for: ``body`` run by ``mapInArrow`` over the
    DataFrame ``data`` (``kind="arrow"``; the body yields Arrow batches of one string column
    ``report``) or by ``mapPartitions`` over the RDD ``data`` (``kind="partitions"``; the body
    yields report strings)."""

    kind: Literal["arrow", "partitions"]
    data: Any
    body: Callable[[Iterator[Any]], Iterator[Any]]


@runtime_checkable
class SparkReader(Protocol[C_contra]):
    """A stage whose input Spark reads itself (the filter's fast path); the Spark executor asks it,
    in order, for the session's settings and the modules its workers import, the plan completed with
    what Spark lists, the jobs to run, and the units Spark did not read. A failed task is not
    wrapped: the worker's exception reaches the caller (the CLI shows it as one line)."""

    def spark_settings(self, cfg: C_contra) -> Any:
        """The settings the session is built with (``spcl.spark.build_session``)."""
        ...

    def spark_preload(self, cfg: C_contra) -> tuple[str, ...]:
        """The modules the stage's Python workers import, imported once per executor by the daemon
        they fork from (``build_session(preload=...)``; empty: none)."""
        ...

    def spark_plan(self, spark: Any, cfg: C_contra, plan: Plan) -> Plan:
        """``plan`` completed with the inputs only Spark can list (URLs), checked; the output
        prepared."""
        ...

    def spark_tasks(self, spark: Any, cfg: C_contra, plan: Plan, rows: Any) -> list[SparkTasks]:
        """The Spark jobs that process ``plan`` (``rows``: an accumulator the bodies add record
        counts to)."""
        ...

    def report_from_json(self, line: str) -> Any:
        """One unit's report back from the line a body yielded."""
        ...

    def spark_leftovers(self, cfg: C_contra, plan: Plan, reports: list[Any]) -> list[Any]:
        """The reports of planned units that Spark did not read, processed on the driver."""
        ...


class FileStage:
    """Defaults a stage over input files inherits: the config read back by
    ``config_type.from_json``, a run id added when the config has none, no known progress total, and
    ``worker.close()`` as teardown. A subclass sets the class attributes and writes ``plan``,
    ``before``, ``setup``, ``check``, ``committed``, ``process`` and ``finish``."""

    config_type: ClassVar[Any]
    """The config dataclass (with ``to_json`` / ``from_json`` and a ``run_id`` field)."""
    setup_when_idle: ClassVar[bool] = True
    lock_field: ClassVar[str | None] = "output"

    def config_from_json(self, text: str) -> Any:
        """The config back on a worker."""
        return self.config_type.from_json(text)

    def prepare(self, cfg: Any) -> Any:
        """``cfg`` with a run id (``spcl.executor.runs.with_run_id``)."""
        return with_run_id(cfg)

    def progress_total(self, plan: Plan) -> int | None:
        """Unknown unless the stage says."""
        return None

    def progress_work(self, plan: Plan) -> int | None:
        """Unknown unless the stage says."""
        return None

    def teardown(self, worker: Any) -> None:
        """Close the worker (its clients)."""
        worker.close()
