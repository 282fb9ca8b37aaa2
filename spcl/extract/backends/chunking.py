"""Long documents through a model with a bounded context: overlapping windows, outputs joined.

The extractor only lists ``TYPE<TAB>ORIGINAL`` rows and the contract parser checks every row against
the *whole* source, so a document can be extracted window by window and the windows' outputs
concatenated. Windows overlap by ``overlap`` characters, so a value shorter than the overlap always
lies whole inside at least one window. If any window fails, the document fails (fail closed), with
the window's reason.
"""

from __future__ import annotations

from spcl.extract.backends.base import Extraction, Extractor

_BREAKS = ("\n", "。", ". ", "! ", "? ", "다. ", " ")


def split_windows(text: str, max_chars: int, overlap: int = 200) -> list[tuple[int, int]]:
    """Half-open ``(start, end)`` windows of at most ``max_chars`` that cover ``text`` and overlap
    by at least ``overlap`` characters; a window ends after a line, sentence or word break where one
    lies in its last fifth.

    >>> split_windows("abcdefghij", 4, 1)
    [(0, 4), (3, 7), (6, 10)]
    """
    if max_chars <= overlap:
        raise ValueError("max_chars must be larger than overlap")
    windows: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(len(text), start + max_chars)
        if end < len(text):
            floor = end - max_chars // 5
            cut = max(
                (
                    text.rfind(b, floor, end) + len(b)
                    for b in _BREAKS
                    if text.rfind(b, floor, end) >= 0
                ),
                default=end,
            )
            end = cut if cut - start > overlap else end
        windows.append((start, end))
        if end >= len(text):
            return windows
        start = end - overlap


class ChunkingExtractor(Extractor):
    """Wraps a model backend: documents longer than ``max_chars`` are extracted window by window."""

    def __init__(self, inner: Extractor, max_chars: int = 3000, overlap: int = 200) -> None:
        super().__init__(inner.types)
        self.inner = inner
        self.max_chars = max_chars
        self.overlap = overlap
        self.name = inner.name
        self.model = inner.model
        self.prompt_version = inner.prompt_version

    def run(self, texts: list[str]) -> list[Extraction]:
        """One :class:`Extraction` per text: the windows' raw outputs joined by newlines, or the
        first failed window's reason as ``window_failed:<reason>``."""
        owners: list[int] = []
        pieces: list[str] = []
        for i, text in enumerate(texts):
            for start, end in split_windows(text, self.max_chars, self.overlap):
                owners.append(i)
                pieces.append(text[start:end])
        results = [Extraction(raw="", generated_tokens=0, prompt_tokens=0) for _ in texts]
        for owner, part in zip(owners, self.inner.run(pieces), strict=True):
            doc = results[owner]
            doc.seconds = max(doc.seconds, part.seconds)
            # every window's tokens were spent, failed or not (what the GPU stage costs)
            doc.generated_tokens = _sum_known(doc.generated_tokens, part.generated_tokens)
            doc.prompt_tokens = _sum_known(doc.prompt_tokens, part.prompt_tokens)
            if doc.error is not None:
                continue
            if not part.ok:
                doc.error, doc.raw = f"window_failed:{part.error or 'no_output'}", None
                continue
            doc.raw = f"{doc.raw}\n{part.raw}" if doc.raw else part.raw
        return results

    def close(self) -> None:
        """Close the wrapped backend."""
        self.inner.close()


def _sum_known(total: int | None, part: int | None) -> int | None:
    """``total + part``, or ``None`` once either is unknown."""
    return None if total is None or part is None else total + part
