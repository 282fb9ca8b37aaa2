"""Shared fixtures: small corpora with planted PII and every kind of bad record."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from spcl.extract.backends import Extraction, Extractor

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample"
SHARED_DATA = ROOT / "data" / "scpi-real-v1" / "labelled.jsonl"

# Every Spark driver the tests start (in-process sessions, the jobs/*.py subprocesses, spark-submit: all read
# SPARK_SUBMIT_OPTS) runs its short jobs with the quick C1 compiler only: the optimizing C2 compiler's threads
# otherwise compete with the test for the CPU at JVM start-up, about doubling the start-up time on two cores.
# A JIT setting only; what the jobs compute is the same. Set here, before any test starts a JVM; an outer
# SPARK_SUBMIT_OPTS wins.
SPARK_TEST_JAVA_OPTS = "-XX:TieredStopAtLevel=1"
os.environ.setdefault("SPARK_SUBMIT_OPTS", SPARK_TEST_JAVA_OPTS)
# `make test` runs two xdist workers on two cores: one OpenMP thread each (torch would start one per core in each
# worker, and subprocesses inherit it). Threads only; an outer OMP_NUM_THREADS wins.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# Property tests check what a function returns, not how fast: Hypothesis's default 200 ms deadline per example
# fails a correct test when a loaded machine (two xdist workers plus Spark JVMs on two cores) stalls one example.
hypothesis_settings.register_profile("spcl", deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "spcl"))

# The longest test files start first: `make test` hands whole files to two xdist workers in collection order, so
# a long file collected last (the vLLM engine and server, ≈ 4-5 min) would run alone at the end while the other
# worker idles. Only the order changes; every test still runs.
LONG_FILES_FIRST = (
    "test_vllm_cpu.py", "test_cluster_recipe.py", "test_finetune_train.py", "test_standalone_cluster.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the tests of :data:`LONG_FILES_FIRST` first (a stable sort: the order inside each file is kept)."""
    rank = {name: i for i, name in enumerate(LONG_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session")
def root() -> Path:
    """The project root."""
    return ROOT


def write_lines(path: Path, lines: list[bytes], gz: bool = False) -> Path:
    """Write raw JSONL lines (optionally gzip-compressed)."""
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def doc_line(doc_id: str, text: str, **extra: object) -> bytes:
    """One JSONL record."""
    return json.dumps({"id": doc_id, "text": text, **extra}, ensure_ascii=False).encode()



class TimeoutOnce(Extractor):
    """Test double (not a model): a transient ``timeout`` for every document of its first call, then nothing found
    (rule hits still make the spans)."""

    name = "scripted"
    model = "scripted-v0"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def run(self, texts: list[str]) -> list[Extraction]:
        self.calls += 1
        return [Extraction(error="timeout") if self.calls == 1 else Extraction(raw="") for _ in texts]
