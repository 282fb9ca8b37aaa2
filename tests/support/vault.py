"""The vault key the mask, unmask and generalize tests run with (a test key, never a real one)."""

from __future__ import annotations

VAULT_KEY = bytes(range(32))
