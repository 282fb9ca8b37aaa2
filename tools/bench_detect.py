"""What the folded view costs the rule detectors: µs per document with and without it, on clean
text.

    python tools/bench_detect.py [--rounds 25]

Documents: the bundled sample corpus (``data/sample/crawl-0000.jsonl.gz``, synthetic) and the real
prose of ``data/detect-eval/prose.jsonl`` (ja/ko/en). ``find`` is the detector set as the filter job
calls it (the look for characters to fold, then the detectors); ``find_folded`` runs the detectors
alone on the text as it is. Per chunk of 100 documents the minimum CPU time over ``--rounds`` rounds
is kept (the call order rotates each round), so a busy machine shows less in the numbers; the sums
are printed per document.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

from spcl.detect import build_detectors
from spcl.text import normalize

ROOT = Path(__file__).resolve().parent.parent


def per_doc_us(fns: dict, docs: list[str], rounds: int) -> dict[str, float]:
    """Minimum CPU µs per document of each function, chunk by chunk."""
    chunks = [docs[i : i + 100] for i in range(0, len(docs), 100)]
    names = list(fns)
    best = {k: [float("inf")] * len(chunks) for k in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for ci, chunk in enumerate(chunks):
            for k in order:
                f = fns[k]
                t0 = time.process_time()
                for d in chunk:
                    f(d)
                best[k][ci] = min(best[k][ci], time.process_time() - t0)
    return {k: round(sum(v) / len(docs) * 1e6, 1) for k, v in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=25)
    args = ap.parse_args()
    with gzip.open(ROOT / "data/sample/crawl-0000.jsonl.gz", "rt", encoding="utf-8") as fh:
        sample = [normalize(json.loads(line)["text"]) for line in fh]
    with open(ROOT / "data/detect-eval/prose.jsonl", encoding="utf-8") as fh:
        prose = [json.loads(line)["text"] for line in fh]
    detectors = build_detectors()
    fns = {"find": detectors.find, "find_folded": detectors.find_folded}
    for label, docs in (("sample (synthetic)", sample), ("real prose ja/ko/en", prose)):
        chars = sum(map(len, docs)) // len(docs)
        print(
            f"{label}: {len(docs)} docs of {chars} chars: {per_doc_us(fns, docs, args.rounds)}"
            " µs/doc"
        )


if __name__ == "__main__":
    main()
