"""Real technical text (Debian manual pages, en/ja/ko) as training hard negatives and as a held-out
flag-rate set.

A screen trained on Wikipedia/news sentences and LibreOffice help learned the source, not the topic:
on man pages it flagged "diagnostic output", "the child process is killed", "virus scanner", "SQL
injection" as MEDICAL/CRIME. Manual pages carry no special-care information about anybody, so their
passages are NONE. They are split **by page** (a page's passages never straddle the split):

- ``train.jsonl``: passages of the training pages, ``source`` ``weak:man-<lang>`` (training-only
  weak NONE, never scored in CV), passages with a hard-negative term (kill, diagnostic, execute,
  injection, virus …) first;
- ``eval.jsonl``: passages of the other pages, **unlabelled**, ``source`` ``man`` or ``man-hard`` (a
  hard-negative term in it), for ``spcl eval screen``'s flag rate per language. Every page that
  ``data/detect-eval/prose.jsonl`` uses is on the evaluation side. Beside them, ``source``
  ``help-msg``: translated program messages (gettext catalogues: ``--help`` text, errors), a
  technical source that is in no training set at all.

Rebuild (needs Debian ``manpages``, ``manpages-ja`` and the Korean pages of
``man-db``/``psmisc``/``xz-utils``; the output is committed): ``python -m spcl.screen.technical
--output data/weak-technical`` (byte-identical for the same packages).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from spcl.io.jsonl import read_jsonl_objects
from spcl.manifest import write_manifest
from spcl.screen.passages import passages

MAN_ROOTS = {
    "en": Path("/usr/share/man"),
    "ja": Path("/usr/share/man/ja"),
    "ko": Path("/usr/share/man/ko"),
}
SECTIONS = ("man1", "man4", "man5", "man7", "man8")
HARD_TERMS = {
    "en": re.compile(
        r"\b(kill|killed|kills|diagnos\w*|execut\w*|inject\w*|virus\w*|abort\w*|crash\w*|dead\w*|"
        r"die|dies|fatal|death|attack\w*|victim\w*|infect\w*|illegal|violat\w*|penalt\w*|"
        r"abuse\w*|health\w*|sick|disabl\w*|suspect\w*|trap\w*|zombie|orphan\w*|parent|child)\b",
        re.IGNORECASE,
    ),
    "ja": re.compile(
        r"診断|強制終了|終了|殺|実行|感染|ウイルス|ウィルス|注入|攻撃|違反|不正|障害|死|異常|犯|"
        r"被害|禁止|罰|健康|子プロセス|親プロセス|ゾンビ"
    ),
    "ko": re.compile(
        r"진단|강제|종료|죽|실행|감염|바이러스|주입|공격|위반|불법|장애|사망|이상|범|피해|금지|"
        r"건강|자식|부모|좀비"
    ),
}
"""Words that made the old screen flag technical text (whole words in English)."""
_ROFF = re.compile(
    r"\\f(?:\[[^\]]*\]|\(..|.)|\\\*(?:\(..|\[[^\]]*\]|.)|\\\(..|\\\[[^\]]*\]|\\s[+-]?\d+|"
    r"\\[&|^~0:%!/,)]|\\e"
)
_FONT_MACRO = re.compile(r"^\.(?:B|I|BR|IR|BI|IB|RB|RI|SM|SB)\s+(.*)$")
_DETECT_EVAL = Path(__file__).resolve().parents[2] / "data" / "detect-eval" / "prose.jsonl"


def page_text(raw: str) -> str:
    """Visible text of one roff page: comment and request lines dropped, font and character
    escapes removed."""
    lines = []
    for line in raw.splitlines():
        font = _FONT_MACRO.match(line)
        if font:
            lines.append(font.group(1).replace('"', ""))
        elif not line.startswith((".", "'")):
            lines.append(line)
    text = " ".join(lines).replace("\\-", "-")
    return re.sub(r"\s+", " ", _ROFF.sub("", text)).strip()


def _pages(lang: str) -> Iterator[tuple[str, Path]]:
    root = MAN_ROOTS[lang]
    for section in SECTIONS:
        folder = root / section
        if folder.is_dir():
            for page in sorted(folder.glob("*.gz")):
                yield page.name, page


def _held_out_pages() -> set[str]:
    """Page names ``data/detect-eval/prose.jsonl`` draws its man-page passages from."""
    if not _DETECT_EVAL.is_file():
        return set()
    names = set()
    for row in read_jsonl_objects(_DETECT_EVAL):
        origin = str(row.get("origin", ""))
        if origin.startswith("man:"):
            names.add(origin.rsplit(":", 1)[-1])
    return names


def _split(name: str) -> str:
    return "eval" if int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % 3 == 0 else "train"


def technical_records(
    lang: str,
    max_pages: int = 400,
    n_train: int = 800,
    n_eval: int = 500,
    extra_train_pages: int = 0,
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """(training NONE records, unlabelled evaluation records) for ``lang`` from up to ``max_pages``
    pages (chosen by hashed name), split by page; a pure function of the installed pages.
    ``extra_train_pages`` more pages (the next by hashed name) add training passages only: the
    evaluation side stays the same pages, and extra pages whose name hashes to the evaluation side
    are skipped altogether."""
    held = _held_out_pages()
    hard = HARD_TERMS[lang]
    pages = sorted(_pages(lang), key=lambda p: hashlib.sha256(p[0].encode()).hexdigest())
    rest = [p for p in pages if p[0] not in held]
    extra = [p for p in rest[max_pages : max_pages + extra_train_pages] if _split(p[0]) == "train"]
    pages = [p for p in pages if p[0] in held] + rest[:max_pages] + extra
    seen: set[str] = set()
    train: list[tuple[int, str, dict[str, object]]] = []
    evaluation: list[tuple[int, str, dict[str, object]]] = []
    for name, path in pages:
        try:
            raw = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        except (OSError, EOFError):
            continue
        side = "eval" if name in held else _split(name)
        for i, text in enumerate(passages(page_text(raw), lang, min_chars=80, max_chars=500)):
            if text in seen:
                continue
            seen.add(text)
            key = hashlib.sha256(f"{lang}:{name}:{i}".encode()).hexdigest()
            is_hard = bool(hard.search(text))
            if side == "train":
                rec: dict[str, object] = {
                    "id": f"weak-man-{lang}-{key[:12]}",
                    "lang": lang,
                    "source": f"weak:man-{lang}",
                    "origin": f"{name}#{i}",
                    "text": text,
                    "label": "NONE",
                    "categories": [],
                }
                train.append((0 if is_hard else 1, key, rec))
            else:
                rec = {
                    "id": f"man-{lang}-{key[:12]}",
                    "lang": lang,
                    "source": "man-hard" if is_hard else "man",
                    "origin": f"{name}#{i}",
                    "text": text,
                }
                evaluation.append((0 if is_hard else 1, key, rec))
    return (
        [r for _, _, r in sorted(train, key=lambda t: t[:2])][:n_train],
        [r for _, _, r in sorted(evaluation, key=lambda t: t[1])][:n_eval],
    )


LOCALE_ROOT = Path("/usr/share/locale")


def _catalogue_split(name: str) -> str:
    """Half of the catalogues (by hashed file name) evaluate, half train (the large PostgreSQL
    family is spread over both)."""
    return "eval" if int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % 2 == 0 else "train"


def message_records(
    lang: str, n: int = 400, max_chars: int = 400, side: str = "all"
) -> list[dict[str, object]]:
    """Passages of installed programs' translated messages (gettext ``.mo`` catalogues: ``--help``
    text, errors, option descriptions): the ``ja``/``ko`` translations, or for ``en`` the original
    strings of the Japanese catalogues. Messages of ≥ 40 characters of one catalogue, in key order,
    are joined into passages of up to ``max_chars``; ``n`` passages chosen by hashed key. ``side``
    splits by catalogue (:func:`_catalogue_split` of the file name): ``eval`` gives unlabelled
    records (``source`` ``help-msg``), ``train`` training NONE records (``source``
    ``weak:msg-<lang>``) of the other catalogues, so no catalogue is on both sides; ``all`` (every
    catalogue, unlabelled) is the first set's form."""
    import gettext

    folder = LOCALE_ROOT / ("ja" if lang == "en" else lang) / "LC_MESSAGES"
    script = re.compile(
        {"ja": r"[\u3040-\u30ff]", "ko": r"[\uac00-\ud7a3]", "en": r"[A-Za-z]"}[lang]
    )
    out: list[tuple[str, dict[str, object]]] = []
    seen: set[str] = set()
    for mo in sorted(folder.glob("*.mo")) if folder.is_dir() else []:
        if mo.name.startswith("iso_") or (side != "all" and _catalogue_split(mo.name) != side):
            continue
        try:
            with open(mo, "rb") as fh:
                translations = gettext.GNUTranslations(fh)
            catalog = translations._catalog  # type: ignore[attr-defined]  # gettext: no public API
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        texts = []
        for key in sorted(k for k in catalog if isinstance(k, str) and k):
            text = key if lang == "en" else str(catalog[key])
            text = re.sub(r"\s+", " ", text).strip()
            if len(text) >= 40 and len(script.findall(text)) * 4 >= len(text) and text not in seen:
                seen.add(text)
                texts.append(text)
        current = ""
        for i, text in enumerate([*texts, ""]):
            if current and (not text or len(current) + len(text) > max_chars):
                key = hashlib.sha256(f"{lang}:{mo.name}:{i}".encode()).hexdigest()
                rec: dict[str, object] = {
                    "id": f"msg-{lang}-{key[:12]}",
                    "lang": lang,
                    "source": "help-msg",
                    "origin": f"{mo.name}#{i}",
                    "text": current.strip(),
                }
                if side == "train":
                    rec.update(
                        id=f"weak-msg-{lang}-{key[:12]}",
                        source=f"weak:msg-{lang}",
                        label="NONE",
                        categories=[],
                    )
                out.append((key, rec))
                current = ""
            current += text + " "
    return [rec for _, rec in sorted(out, key=lambda t: t[0])][:n]


TRAIN_PAGES: dict[str, dict[str, int]] = {"ja": {"n_train": 2400, "extra_train_pages": 900}}
"""Per-language overrides of :func:`technical_records` for the written set: Japanese, whose
technical text the screen flagged most, trains on every installed page (the evaluation pages stay
the first set's)."""
MESSAGES_TRAIN = 600
"""Training passages of program messages per language (catalogues on the training side only)."""


def write_technical(out: Path) -> tuple[Path, Path]:
    """Write ``out/train.jsonl``, ``out/eval.jsonl`` (en, ja, ko) and the manifest; returns both
    paths."""

    out.mkdir(parents=True, exist_ok=True)
    paths = (out / "train.jsonl", out / "eval.jsonl")
    counts: dict[str, int] = {}
    with open(paths[0], "w", encoding="utf-8") as ftr, open(paths[1], "w", encoding="utf-8") as fev:
        for lang in ("en", "ja", "ko"):
            train, evaluation = technical_records(lang, **TRAIN_PAGES.get(lang, {}))
            counts[f"train:{lang}"], counts[f"eval:{lang}"] = len(train), len(evaluation)
            train_msgs = message_records(lang, n=MESSAGES_TRAIN, side="train")
            messages = message_records(lang, side="eval")
            counts[f"train-messages:{lang}"] = len(train_msgs)
            counts[f"eval-messages:{lang}"] = len(messages)
            for fh, recs in ((ftr, train + train_msgs), (fev, evaluation + messages)):
                for rec in recs:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    write_manifest(
        out,
        kind="weak-none-training-set",
        licence=(
            "Debian manual pages (manpages, manpages-ja, man-db, psmisc, xz-utils): each page's "
            "own licence (man-pages verbatim, GPL, BSD); program messages: each package's "
            "(mostly GPL/LGPL)"
        ),
        counts=counts,
        sources=[
            "manpages",
            "manpages-ja",
            "man-db-ko",
            "gettext catalogues of installed packages",
        ],
    )
    return paths


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", "-o", dest="out", default="data/weak-technical")
    args = parser.parse_args()
    print(*write_technical(Path(args.out)))
