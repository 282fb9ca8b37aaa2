"""What the mask stage releases when a model prints a value in another form than the document:
real-text numbers.

Runs against any tree (``PYTHONPATH=CHECKOUT python tools/llm_row_forms.py``) and prints, without
values:

1. **deviated rows** — real English passages (``scpi-real-v2``) with two capitalised bigrams; the
   model's answer lists the first as printed and the second quoted / bulleted / with a period /
   after a colon / upper-cased / with ``Mr.`` / with a score column: passages released with the
   second still in clear, per form;
2. **foreign rows** — names (ja/ko gold names of ``names-gold-v1``; en capitalised bigrams) taken
   from another document, which the source does not hold as printed: how many the contract parser
   accepts anyway (the cost of reading loosely: each accepted one masks something the model did not
   point at);
3. **near-source over-fail** — the same foreign rows beside one of the document's own names:
   documents that now fail closed as ``hallucinated_near_source`` (the foreign row shares a
   capitalised word, two Han/Hangul characters or a kana word with the document) although the row
   points at nothing there;
4. **glued Korean names** — ``names-gold-v1`` Korean sentences, the exact gold names as a model's
   rows: gold names the masker leaves in clear (a name glued to the next word once it stands alone
   elsewhere).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

DATA = Path("/work/shared/data")
_BIGRAM = re.compile(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b")
FORMS = {
    "quoted": 'PERSON\t"{}"',
    "bullet": "- PERSON\t{}",
    "period": "PERSON\t{}.",
    "colon": "PERSON: {}",
    "upper": "PERSON\t{}",
    "title": "PERSON\tMr. {}",
    "score": "PERSON\t{}\t0.9",
}


def _read(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def deviated(data: Path) -> dict[str, Any]:
    """Passages released with a deviated second name still in clear, per form."""
    from spcl.extract.backends import Extraction
    from spcl.mask_stage.document import mask_document

    leaks: Counter[str] = Counter()
    n = 0
    for r in _read(data / "scpi-real-v2" / "labelled.jsonl"):
        names = list(dict.fromkeys(_BIGRAM.findall(r["text"])))
        if len(names) < 2:
            continue
        n += 1
        for form, row in FORMS.items():
            second = names[1].upper() if form == "upper" else names[1]
            out = mask_document(
                r["text"],
                Extraction(raw=f"PERSON\t{names[0]}\n{row.format(second)}\n"),
                [],
                ("PERSON",),
                False,
            )
            if out.released is not None and re.search(
                rf"\b{re.escape(names[1])}\b", out.released.masked_text
            ):
                leaks[form] += 1
    return {"passages": n, "released_in_clear": {f: leaks[f] for f in FORMS}}


def foreign(data: Path) -> dict[str, Any]:
    """Names from another document accepted by the parser, per language."""
    from spcl.extract.contract import parse_extraction

    out: dict[str, Any] = {}
    gold = [r for r in _read(data / "names-gold-v1" / "names.jsonl") if r["persons"]]
    en = [r for r in _read(data / "scpi-real-v2" / "labelled.jsonl") if r["lang"] == "en"]
    for lang, rows in (
        ("ko", [r for r in gold if r["lang"] == "ko"]),
        ("ja", [r for r in gold if r["lang"] == "ja"]),
        ("en", en),
    ):
        n = accepted = 0
        for i, r in enumerate(rows):
            other = rows[(i * 7919 + 13) % len(rows)]
            if lang == "en":
                values = _BIGRAM.findall(other["text"])[:3]
            else:
                values = [other["text"][s:e].strip() for s, e in other["persons"]]
            for v in values:
                if v and v not in r["text"]:
                    n += 1
                    accepted += bool(parse_extraction(f"PERSON\t{v}\n", r["text"]).candidates)
        out[lang] = {"rows": n, "accepted": accepted}
    return out


def over_fail(data: Path) -> dict[str, Any]:
    """Documents failed closed by a harmless foreign row beside one of their own names, per
    language."""
    from spcl.extract.contract import parse_extraction

    out: dict[str, Any] = {}
    gold = [r for r in _read(data / "names-gold-v1" / "names.jsonl") if r["persons"]]
    en = [r for r in _read(data / "scpi-real-v2" / "labelled.jsonl") if r["lang"] == "en"]
    for lang, rows in (
        ("ko", [r for r in gold if r["lang"] == "ko"]),
        ("ja", [r for r in gold if r["lang"] == "ja"]),
        ("en", en),
    ):
        n = failed = 0
        for i, r in enumerate(rows):
            other = rows[(i * 7919 + 13) % len(rows)]
            if lang == "en":
                own, values = _BIGRAM.findall(r["text"])[:1], _BIGRAM.findall(other["text"])[:3]
            else:
                own = [r["text"][s:e].strip() for s, e in r["persons"]][:1]
                values = [other["text"][s:e].strip() for s, e in other["persons"]]
            values = [v for v in values if v and v not in r["text"]]
            if not own or not values:
                continue
            n += 1
            failed += not parse_extraction(
                "".join(f"PERSON\t{v}\n" for v in own + values), r["text"]
            ).parse_success
        out[lang] = {"documents": n, "failed": failed}
    return out


def glued(data: Path) -> dict[str, Any]:
    """Korean gold names left in clear with the exact gold names as a model's rows."""
    from spcl.mask import mask_text

    total = left = 0
    for r in _read(data / "names-gold-v1" / "names.jsonl"):
        text = r["text"]
        spans = [(s, e) for s, e in r["persons"] if text[s:e].strip()]
        if r["lang"] != "ko" or not spans:
            continue
        rows = [("PERSON", text[s:e].strip()) for s, e in spans]
        try:
            # the rows as a model's (trees without the parameter: as before)
            res = mask_text(text, rows, rows)
        except TypeError:
            res = mask_text(text, rows)
        covered = [(x.start, x.end) for x in res.spans]
        for s, e in spans:
            total += 1
            left += not any(a <= s and e <= b for a, b in covered)
    return {"gold_names": total, "left_in_clear": left}


def main() -> None:
    """Print the four measurements as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", type=Path, default=DATA, help="the folder holding scpi-real-v2 and names-gold-v1"
    )
    args = ap.parse_args()
    print(
        json.dumps(
            {
                "deviated": deviated(args.data),
                "foreign": foreign(args.data),
                "over_fail": over_fail(args.data),
                "glued": glued(args.data),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
