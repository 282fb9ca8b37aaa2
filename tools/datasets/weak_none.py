"""Weakly labelled NONE passages from real technical text (LibreOffice help, ja/ko; MPL-2.0).

The real labelled set holds Wikipedia/news/review sentences only; on other real web text — manuals,
software documentation — a screen trained on it alone flagged a quarter of Japanese man-page
passages. Passages of the LibreOffice help (Debian ``libreoffice-help-ja`` / ``-ko``) are real text
that carries no special-care information about anybody: they are added to training as ``NONE`` with
``source`` starting ``weak:``, which makes them training-only augmentation (never scored in CV),
like the synthetic set.

Rebuild the shipped file (needs the Debian packages; the output is committed): ``python -m
tools.datasets.weak_none --output data/weak-none`` (byte-identical for the same packages and seed).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable
from pathlib import Path

from spcl.io.jsonl import write_jsonl
from spcl.screen.passages import passages

HELP_ROOT = Path("/usr/share/libreoffice/help")
_TAGS = re.compile(r"<[^>]+>")
_SCRIPTS = re.compile(r"(?s)<(script|style|head)\b.*?</\1>")
_SPACES = re.compile(r"\s+")
HELP_FOLDERS = {"ja": "ja", "ko": "ko", "en": "en-US"}
"""Folder of each language under :data:`HELP_ROOT` (Debian
``libreoffice-help-ja``/``-ko``/``-en-us``)."""


def page_text(raw: str) -> str:
    """Visible text of one help page (scripts, styles and tags removed, entities decoded)."""
    return _SPACES.sub(" ", html.unescape(_TAGS.sub(" ", _SCRIPTS.sub(" ", raw)))).strip()


def weak_none_records(
    lang: str,
    n: int,
    seed: int = 0,
    root: Path = HELP_ROOT,
    keep: Callable[[str], bool] | None = None,
) -> list[dict[str, object]]:
    """``n`` NONE records for ``lang`` ("ja", "ko" or "en"), chosen by hashed passage key (a pure
    function of the pages and ``seed``); with ``keep``, only passages it accepts."""
    folder = root / HELP_FOLDERS[lang]
    if not folder.is_dir():
        package = f"libreoffice-help-{HELP_FOLDERS[lang].lower()}"
        raise FileNotFoundError(f"{folder} not found: install the Debian package {package}")
    candidates = []
    for page in sorted(folder.rglob("*.html")):
        rel = page.relative_to(folder).as_posix()
        for i, text in enumerate(
            passages(page_text(page.read_text(encoding="utf-8", errors="replace")), lang)
        ):
            key = hashlib.sha256(f"{seed}:{lang}:{rel}:{i}".encode()).hexdigest()
            candidates.append((key, rel, i, text))
    seen: set[str] = set()
    records: list[dict[str, object]] = []
    for key, rel, i, text in sorted(candidates):
        if text in seen:
            continue
        seen.add(text)
        if keep is not None and not keep(text):
            continue
        records.append(
            {
                "id": f"weak-lohelp-{lang}-{key[:12]}",
                "lang": lang,
                "source": f"weak:libreoffice-help-{lang}",
                "origin": f"{rel}#{i}",
                "text": text,
                "label": "NONE",
                "categories": [],
            }
        )
        if len(records) == n:
            break
    return records


def write_weak_none(out: Path, n_per_lang: int = 1500, seed: int = 0) -> Path:
    """Write ``out/libreoffice-help.jsonl`` (ja then ko) and its manifest; returns the JSONL
    path."""
    from spcl.manifest import write_manifest

    out.mkdir(parents=True, exist_ok=True)
    path = out / "libreoffice-help.jsonl"
    write_jsonl(
        path,
        (record for lang in ("ja", "ko") for record in weak_none_records(lang, n_per_lang, seed)),
    )
    write_manifest(
        out,
        kind="weak-none-training-set",
        licence="MPL-2.0 (LibreOffice help, via Debian)",
        seed=seed,
        n_per_lang=n_per_lang,
        sources=["libreoffice-help-ja", "libreoffice-help-ko"],
    )
    return path


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", "-o", dest="out", default="data/weak-none")
    parser.add_argument("--n", type=int, default=1500, help="passages per language")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(write_weak_none(Path(args.out), args.n, args.seed))
