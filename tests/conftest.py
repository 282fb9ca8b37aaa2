"""Shared fixtures: small corpora with planted PII and every kind of bad record."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from tests.support.environment import SPARK_TEST_JAVA_OPTS
from tests.support.paths import ROOT
from tests.support.vault import VAULT_KEY

# Set here, before any test starts a JVM (see tests.support.environment); an outer SPARK_SUBMIT_OPTS
# wins.
os.environ.setdefault("SPARK_SUBMIT_OPTS", SPARK_TEST_JAVA_OPTS)
# `make test` runs two xdist workers on two cores: one OpenMP thread each (torch would start one per
# core in each worker, and subprocesses inherit it). Threads only; an outer OMP_NUM_THREADS wins.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# Property tests check what a function returns, not how fast: Hypothesis's default 200 ms deadline
# per example fails a correct test when a loaded machine (two xdist workers plus Spark JVMs on two
# cores) stalls one example.
hypothesis_settings.register_profile("spcl", deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "spcl"))

# The longest test files (paths relative to tests/) start first: `make test` hands whole files to
# two xdist workers in collection order, so a long file collected last (the vLLM engine and server,
# ≈ 4-5 min) would run alone at the end while the other worker idles. Only the order changes; every
# test still runs.
LONG_FILES_FIRST = (
    "e2e/test_vllm_cpu.py",
    "e2e/test_cluster_recipe.py",
    "finetune/test_train.py",
    "e2e/test_standalone_cluster.py",
)
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under ``tests/e2e/`` ``e2e`` (``slow`` stays as each test sets it), and put
    the tests of :data:`LONG_FILES_FIRST` first (a stable sort: the order inside each file is
    kept)."""
    e2e = TESTS / "e2e"
    for item in items:
        if item.path.is_relative_to(e2e):
            item.add_marker(pytest.mark.e2e)
    rank = {name: i for i, name in enumerate(LONG_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(_relative(item.path), len(rank)))


def _relative(path: Path) -> str:
    """``path`` relative to ``tests/`` in ``/`` form (the path itself when it lies elsewhere)."""
    return path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else path.as_posix()


@pytest.fixture(scope="session")
def root() -> Path:
    """The project root."""
    return ROOT


@pytest.fixture()
def vault_key(monkeypatch: pytest.MonkeyPatch) -> bytes:
    """A known vault key (:data:`tests.support.vault.VAULT_KEY`) in the environment, no key file;
    the key."""
    monkeypatch.setenv("SPCL_VAULT_KEY", base64.b64encode(VAULT_KEY).decode())
    monkeypatch.delenv("SPCL_VAULT_KEY_FILE", raising=False)
    return VAULT_KEY
