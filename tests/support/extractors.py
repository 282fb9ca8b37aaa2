"""Test-double extractors (not models) for the mask and generalize job tests."""

from __future__ import annotations

from spcl.extract.backends import Extraction, Extractor


class TimeoutOnce(Extractor):
    """Test double (not a model): a transient ``timeout`` for every document of its first call, then
    nothing found (rule hits still make the spans)."""

    name = "scripted"
    model = "scripted-v0"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def run(self, texts: list[str]) -> list[Extraction]:
        self.calls += 1
        return [
            Extraction(error="timeout") if self.calls == 1 else Extraction(raw="") for _ in texts
        ]
