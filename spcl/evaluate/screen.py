"""Quality of a trained screen on data it was not trained on: labelled sentences and unlabelled real
text.

Input: JSONL, one record a line, ``{"id", "text", "lang"?, "label"?, "source"?, "origin"?}``.

- A record **with** a ``label`` (SCPI, RELATED or NONE) is scored: topic precision/recall/F1 (SCPI
  and RELATED against NONE), SCPI recall and the share of NONE flagged, overall, per language and
  per language and ``source`` (when present), for the union and for each model alone — the numbers
  of the screen's quality bar.
- A record **without** a label is real text of unknown content: only its flag rate is reported, per
  language and per *origin* (``source``, or the part of ``origin`` before the first ``:``, e.g.
  ``sotu`` or ``man``). This is what the LLM stage will be sent of ordinary text.

``lang`` defaults to the script guess. The report holds counts and rates only, never text or ids.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

import numpy as np

from spcl.errors import UsageError
from spcl.io.jsonl import iter_jsonl
from spcl.labels import LABELS
from spcl.screen.crossval import FlagMetrics, flag_metrics
from spcl.screen.model import Screen
from spcl.text import LANGS, guess_lang

LLM_TOKENS_PER_DOC = 1080
"""Tokens the LLM stage spends on one flagged document (prompt ≈ 894 + completion ≈ 185, measured on
the vLLM path): the cost of every document the screen sends on, sensitive or not."""
SOURCE_TABLE_HEADER = (
    "language",
    "source",
    "documents",
    "SCPI",
    "SCPI found",
    "SCPI recall",
    "NONE",
    "NONE flagged",
    "NONE flag rate",
    "topic F1",
    "sent to LLM",
)
"""Columns of :func:`source_table` (the same table in ``spcl eval screen`` and in ``spcl
report``)."""
GOALS = {
    "f1_min": 0.85,
    "scpi_recall_min": 0.95,
    "lang_scpi_recall_min": 0.95,
    "none_flagged_max": 0.12,
}
"""The bar for the screen on real labelled text: topic F1 ≥ 0.85 (0.88 on text like the training
sources), SCPI recall ≥ 0.95 overall and in Japanese and in Korean, NONE flagged ≤ 12 % overall and
in English."""
SCPI_LANGS = ("ja", "ko")
"""Languages whose SCPI recall is a goal of its own."""
BATCH = 512

SourceCell = dict[str, "FlagMetrics | dict[str, int]"]
"""One language × source of the labelled records: each system's :class:`FlagMetrics` and, beside the
union's, ``counts`` (documents, flagged, SCPI and NONE documents and how many of them were
flagged)."""


class LabelledScreenMetrics(TypedDict):
    """Each system's metrics (``union`` and every head) overall, per language and per language ×
    source."""

    overall: dict[str, FlagMetrics]
    per_lang: dict[str, dict[str, FlagMetrics]]
    per_source: dict[str, dict[str, SourceCell]]


class Goal(TypedDict):
    """One goal of :data:`GOALS`: the measured value and whether it meets the bar."""

    value: float
    met: bool


class GroupRate(TypedDict):
    """Unlabelled documents of one language and origin, and the share flagged."""

    n: int
    flagged: int
    flag_rate: float


class ScreenEvalReport(TypedDict):
    """The JSON report of :func:`evaluate_screen` (``spcl eval screen --output``)."""

    model: str
    thresholds: dict[str, float]
    records: int
    labelled: int
    labelled_metrics: NotRequired[LabelledScreenMetrics]
    goals: NotRequired[dict[str, Goal]]
    unlabelled_flag_rate: NotRequired[dict[str, dict[str, GroupRate]]]


class ScreenEvalError(UsageError, ValueError):
    """A record that cannot be scored (the message names the file, line and field, never the
    text)."""


def read_eval_records(path: str | Path) -> Iterator[dict[str, str]]:
    """Rows ``{"text", "lang", "label", "group"}`` of one JSONL file (``label`` is "" when
    absent)."""
    for item in iter_jsonl(path):
        where = f"{path}:{item.line_no}"
        if item.error is not None:
            raise ScreenEvalError(f"{where}: not valid JSON ({item.error})")
        row = item.value
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise ScreenEvalError(f"{where}: field 'text' missing or not a string")
        label = row.get("label") or ""
        if label and label not in LABELS:
            raise ScreenEvalError(f"{where}: label {label!r} not in {list(LABELS)}")
        lang = row["lang"] if row.get("lang") in LANGS else guess_lang(row["text"])
        origin_prefix = str(row.get("origin") or "").split(":", 1)[0]
        group = str(row.get("source") or origin_prefix or "-")
        yield {"text": row["text"], "lang": lang, "label": label, "group": group}


def evaluate_screen(screen: Screen, rows: Iterable[dict[str, str]]) -> ScreenEvalReport:
    """Score every row (see the module docstring); returns the JSON report."""
    rows = list(rows)
    heads = list(screen.outputs.flags)
    flag = np.zeros(len(rows), bool)
    head_flags = {h: np.zeros(len(rows), bool) for h in heads}
    for start in range(0, len(rows), BATCH):
        part = rows[start : start + BATCH]
        res = screen.predict([r["text"] for r in part], [r["lang"] for r in part])
        sl = slice(start, start + len(part))
        flag[sl] = res.flag
        for h in heads:
            head_flags[h][sl] = res.flags[h]
    labels = np.array([r["label"] for r in rows], dtype=object)
    langs = np.array([r["lang"] for r in rows], dtype=object)
    labelled = labels != ""
    report: ScreenEvalReport = {
        "model": screen.version,
        "thresholds": screen.thresholds,
        "records": len(rows),
        "labelled": int(labelled.sum()),
    }
    if labelled.any():
        groups = np.array([r["group"] for r in rows], dtype=object)
        report["labelled_metrics"] = _labelled(
            labels[labelled],
            langs[labelled],
            groups[labelled],
            {"union": flag[labelled], **{h: f[labelled] for h, f in head_flags.items()}},
        )
        report["goals"] = _goals(report["labelled_metrics"])
    if (~labelled).any():
        report["unlabelled_flag_rate"] = _flag_rates(
            [r for r, lab in zip(rows, labelled, strict=True) if not lab], flag[~labelled]
        )
    return report


def _labelled(
    labels: np.ndarray, langs: np.ndarray, groups: np.ndarray, systems: dict[str, np.ndarray]
) -> LabelledScreenMetrics:
    out: LabelledScreenMetrics = {"overall": {}, "per_lang": {}, "per_source": {}}
    for name, f in systems.items():
        out["overall"][name] = flag_metrics(f, labels.astype(str))
        for lang in sorted(set(langs.tolist())):
            m = langs == lang
            out["per_lang"].setdefault(lang, {})[name] = flag_metrics(f[m], labels[m].astype(str))
            for group in sorted(set(groups[m].tolist())):
                g = m & (groups == group)
                out["per_source"].setdefault(lang, {}).setdefault(group, {})[name] = flag_metrics(
                    f[g], labels[g].astype(str)
                )
                if name == "union":
                    out["per_source"][lang][group]["counts"] = _counts(f[g], labels[g].astype(str))
    return out


def _counts(flag: np.ndarray, labels: np.ndarray) -> dict[str, int]:
    scpi, none = labels == "SCPI", labels == "NONE"
    return {
        "n": int(flag.size),
        "flagged": int(flag.sum()),
        "scpi": int(scpi.sum()),
        "scpi_flagged": int((flag & scpi).sum()),
        "none": int(none.sum()),
        "none_flagged": int((flag & none).sum()),
    }


def source_table(report: ScreenEvalReport) -> list[tuple[Any, ...]]:
    """Rows of :data:`SOURCE_TABLE_HEADER`, one per language × source of the labelled records of an
    :func:`evaluate_screen` report (union flags), then one ``*`` row per language; empty without
    labels. ``sent to LLM`` is the share of that source's documents the screen flags (the labelled
    mix, which is usually richer in topic passages than a crawl)."""
    metrics = report.get("labelled_metrics")
    if metrics is None:
        return []
    rows: list[tuple[Any, ...]] = []
    for lang, groups in sorted(metrics["per_source"].items()):
        total = dict.fromkeys(("n", "flagged", "scpi", "scpi_flagged", "none", "none_flagged"), 0)
        for group, v in sorted(groups.items()):
            if "counts" not in v:
                continue
            # the cell's one entry that is not a system's metrics
            c = cast("dict[str, int]", v["counts"])
            rows.append(_source_row(lang, group, c, cast(FlagMetrics, v["union"])["f1"]))
            for k in total:
                total[k] += c[k]
        if len(groups) > 1 and total["n"]:
            rows.append(_source_row(lang, "*", total, metrics["per_lang"][lang]["union"]["f1"]))
    return rows


def _rate(k: int, n: int) -> float | str:
    return round(k / n, 4) if n else "-"


def _source_row(lang: str, group: str, c: dict[str, int], f1: float) -> tuple[Any, ...]:
    return (
        lang,
        group,
        c["n"],
        c["scpi"],
        c["scpi_flagged"],
        _rate(c["scpi_flagged"], c["scpi"]),
        c["none"],
        c["none_flagged"],
        _rate(c["none_flagged"], c["none"]),
        f1,
        _rate(c["flagged"], c["n"]),
    )


def _goals(metrics: LabelledScreenMetrics) -> dict[str, Goal]:
    union = metrics["overall"]["union"]
    checks = {
        "f1": (union["f1"], union["f1"] >= GOALS["f1_min"]),
        "scpi_recall": (union["scpi_recall"], union["scpi_recall"] >= GOALS["scpi_recall_min"]),
        "none_flagged": (
            union["none_flag_rate"],
            union["none_flag_rate"] <= GOALS["none_flagged_max"],
        ),
    }
    for lang in SCPI_LANGS:  # only when that language's SCPI documents were scored
        lang_union = metrics["per_lang"].get(lang, {}).get("union")
        scpi = lang_union["scpi_recall"] if lang_union is not None else None
        if scpi is not None and not math.isnan(scpi):
            checks[f"{lang}_scpi_recall"] = (scpi, scpi >= GOALS["lang_scpi_recall_min"])
    en_union = metrics["per_lang"].get("en", {}).get("union")
    en_none = en_union["none_flag_rate"] if en_union is not None else None
    if en_none is not None and not math.isnan(en_none):
        checks["en_none_flagged"] = (en_none, en_none <= GOALS["none_flagged_max"])
    return {k: {"value": v, "met": bool(ok)} for k, (v, ok) in checks.items()}


def _flag_rates(rows: list[dict[str, str]], flag: np.ndarray) -> dict[str, dict[str, GroupRate]]:
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r, f in zip(rows, flag.tolist(), strict=True):
        for key in ((r["lang"], "*"), (r["lang"], r["group"])):
            counts[key][0] += 1
            counts[key][1] += int(f)
    out: dict[str, dict[str, GroupRate]] = {}
    for (lang, group), (n, k) in sorted(counts.items()):
        out.setdefault(lang, {})[group] = {"n": n, "flagged": k, "flag_rate": round(k / n, 4)}
    return out


def _text_table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    cells = [list(header)] + [
        [f"{c:.3f}" if isinstance(c, float) else str(c) for c in row] for row in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return [
        "  ".join(
            c.rjust(w) if i > 1 else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in cells
    ]


def format_summary(report: ScreenEvalReport) -> str:
    """A short human-readable summary of :func:`evaluate_screen`'s report."""
    lines = [f"model {report['model']}: {report['records']} records, {report['labelled']} labelled"]
    metrics = report.get("labelled_metrics")
    if metrics:
        for scope, values in [
            ("all", metrics["overall"]["union"]),
            *((lang, v["union"]) for lang, v in metrics["per_lang"].items()),
        ]:
            lines.append(
                f"  {scope:>4}: F1 {values['f1']:.3f}  P {values['precision']:.3f}  R"
                f" {values['recall']:.3f}  SCPI recall {values['scpi_recall']:.3f}  NONE flagged"
                f" {values['none_flag_rate']:.3f}  (n={values['n']})"
            )
        lines.append(
            "  goals: "
            + ", ".join(
                f"{k} {'met' if g['met'] else 'NOT met'}" for k, g in report["goals"].items()
            )
        )
        rows = source_table(report)
        if rows:
            lines.append("  per language and source (union):")
            lines.extend("  " + line for line in _text_table(SOURCE_TABLE_HEADER, rows))
    for lang, groups in report.get("unlabelled_flag_rate", {}).items():
        parts = ", ".join(f"{g} {v['flag_rate']:.1%} of {v['n']}" for g, v in groups.items())
        lines.append(f"  unlabelled {lang}: {parts}")
    return "\n".join(lines)
