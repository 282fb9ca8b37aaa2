"""Long documents through a bounded-context backend: windows, joined outputs, fail-closed."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from spcl.extract import parse_extraction
from spcl.extract.backends import make_extractor
from spcl.extract.backends.base import Extraction, Extractor
from spcl.extract.backends.chunking import ChunkingExtractor, split_windows


class WindowEchoExtractor(Extractor):
    """Test double standing in for a model with a context limit: lists the e-mail-like and
    phone-like tokens of each window it sees, and fails a window longer than ``limit``
    characters."""

    name = "echo"
    model = "window-echo"

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.seen: list[int] = []

    def run(self, texts: list[str]) -> list[Extraction]:
        out = []
        for text in texts:
            self.seen.append(len(text))
            if len(text) > self.limit:
                out.append(Extraction(error="input_too_long"))
                continue
            rows = [f"EMAIL\t{w}" for w in text.split() if "@" in w]
            rows += [f"PHONE\t{w}" for w in text.split() if w.startswith("010-") and len(w) == 13]
            out.append(Extraction(raw="\n".join(rows), generated_tokens=len(rows)))
        return out


@given(st.text(min_size=0, max_size=3000), st.integers(50, 400), st.integers(0, 49))
def test_windows_cover_the_text_bounded_and_overlapping(
    text: str, max_chars: int, overlap: int
) -> None:
    windows = split_windows(text, max_chars, overlap)
    assert windows[0][0] == 0 and windows[-1][1] == len(text)
    assert all(0 < end - start <= max_chars or len(text) == 0 for start, end in windows)
    for (s1, e1), (s2, _e2) in pairwise(windows):
        # progress, and no gap: every short value lies whole in one window
        assert s1 < s2 <= e1 - overlap


def test_long_document_is_extracted_in_windows_and_every_value_found() -> None:
    filler = "오늘은 날씨가 맑았다. " * 40
    values = ["a.kim@mailbox.com", "010-2345-6789", "b.lee@mailbox.org"]
    text = f"{filler}{values[0]} {filler}{values[1]} {filler}{values[2]} {filler}"
    inner = WindowEchoExtractor(limit=600)
    assert not inner.run([text])[0].ok  # the whole document does not fit
    inner.seen.clear()
    (result,) = ChunkingExtractor(inner, max_chars=600, overlap=80).run([text])
    assert result.ok and max(inner.seen) <= 600 and len(inner.seen) > 3
    parsed = parse_extraction(result.raw or "", text)
    assert sorted(v for _, v in parsed.candidates) == sorted(values)


def test_one_failed_window_fails_the_document_closed() -> None:
    class FlakyEcho(WindowEchoExtractor):
        def run(self, texts: list[str]) -> list[Extraction]:
            out = super().run(texts)
            out[1] = Extraction(error="timeout")
            return out

    long_text = "x@mailbox.com " + "가" * 900
    short_text = "짧은 문서"
    results = ChunkingExtractor(FlakyEcho(limit=10_000), max_chars=400, overlap=50).run(
        [long_text, short_text]
    )
    assert results[0].error == "window_failed:timeout" and results[0].raw is None
    assert results[1].ok


def test_make_extractor_wraps_model_backends_only_when_asked() -> None:
    assert not isinstance(make_extractor("rules", chunk_chars=500), ChunkingExtractor)
    wrapped = make_extractor(
        "openai", model="m", endpoint="http://127.0.0.1:9/v1", chunk_chars=2000
    )
    assert (
        isinstance(wrapped, ChunkingExtractor)
        and wrapped.name == "openai"
        and wrapped.max_chars == 2000
    )
    assert not isinstance(
        make_extractor("openai", model="m", endpoint="http://127.0.0.1:9/v1"), ChunkingExtractor
    )
