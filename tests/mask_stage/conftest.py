"""Every mask-stage test runs with the known vault key in the environment."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _known_vault_key(vault_key: bytes) -> None:
    """Use the root conftest's ``vault_key`` for every test here."""
