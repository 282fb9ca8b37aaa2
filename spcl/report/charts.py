"""The report's charts as PNG bytes (matplotlib, Agg backend): bars of counts, score histograms."""

from __future__ import annotations

import io
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from spcl.screen.heads import head_view

COLOURS = {"clean": "#4c72b0", "flagged": "#dd8452", "quarantine": "#c44e52", "other": "#55a868"}
_DPI = 110


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    plt = _plt()
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def bar_chart(
    counts: Mapping[str, float],
    title: str,
    *,
    xlabel: str = "documents",
    top: int = 15,
    colour: str = COLOURS["other"],
    percent: bool = False,
) -> bytes:
    """Horizontal bars, largest first (at most ``top``, the rest summed as ``(other)``)."""
    plt = _plt()
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(items) > top:
        items = [*items[: top - 1], ("(other)", sum(v for _, v in items[top - 1 :]))]
    items = items[::-1]
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * max(len(items), 2) + 1.0))
    values = [v * 100 if percent else v for _, v in items]
    ax.barh([k for k, _ in items], values, color=colour)
    for y, v in enumerate(values):
        ax.text(v, y, f" {v:.1f} %" if percent else f" {v:,.0f}", va="center", fontsize=8)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.margins(x=0.18)
    return _png(fig)


def stacked_by_language(by_lang: Mapping[str, Mapping[str, int]], title: str) -> bytes:
    """Documents per language, clean and flagged stacked."""
    plt = _plt()
    langs = sorted(by_lang, key=lambda lg: -sum(by_lang[lg].values()))[:15]
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * max(len(langs), 2) + 1.0))
    left = [0] * len(langs)
    for dec in ("clean", "flagged"):
        vals = [by_lang[lg].get(dec, 0) for lg in langs]
        ax.barh(langs, vals, left=left, color=COLOURS[dec], label=dec)
        left = [a + b for a, b in zip(left, vals, strict=True)]
    ax.invert_yaxis()
    ax.set_title(title)
    ax.set_xlabel("documents")
    ax.legend(loc="lower right")
    return _png(fig)


def score_histograms(scores: Mapping[str, Any]) -> bytes:
    """One panel per screen head (the heads whose ``<head>_edges`` the facts hold, in their order):
    the first head's histogram stacked by decision, the others over all scored documents, each with
    its threshold."""
    plt = _plt()
    heads = [
        k.removesuffix("_edges")
        for k in scores
        if k.endswith("_edges") and f"{k[:-6]}_counts" in scores
    ]
    fig, axes = plt.subplots(len(heads), 1, figsize=(6.4, 3.0 * len(heads)), squeeze=False)
    th = scores.get("thresholds", {})
    for n, (ax, head) in enumerate(zip(axes[:, 0], heads, strict=True)):
        edges: Sequence[float] = scores[f"{head}_edges"]
        widths = [b - a for a, b in itertools.pairwise(edges)]
        if n == 0:
            by_dec = scores.get(f"{head}_counts_by_decision") or {"all": scores[f"{head}_counts"]}
            bottom = [0] * (len(edges) - 1)
            for dec, counts in by_dec.items():
                ax.bar(
                    edges[:-1],
                    counts,
                    width=widths,
                    bottom=bottom,
                    align="edge",
                    color=COLOURS.get(dec, COLOURS["other"]),
                    label=dec,
                )
                bottom = [a + b for a, b in zip(bottom, counts, strict=True)]
        else:
            ax.bar(
                edges[:-1],
                scores[f"{head}_counts"],
                align="edge",
                color=COLOURS["other"],
                width=widths,
                label="all scored",
            )
        if head in th:
            ax.axvline(th[head], color="black", linestyle="--", label=f"threshold {th[head]:.3f}")
        ax.set_title(head_view(head).title)
        ax.set_ylabel("documents")
        ax.set_yscale("symlog", linthresh=1)
        ax.legend(fontsize=8)
        if head_view(head).scale == "margin" and n == len(heads) - 1:
            ax.set_xlabel(f"margin (outside [{edges[0]:g}, {edges[-1]:g}] counted in the end bins)")
    return _png(fig)


def score_histograms_by_language(scores: Mapping[str, Any]) -> bytes:
    """One panel per (screen head, language): the head's score histogram over that language's
    documents, with the threshold the decisions used there (the model card's per-language one, else
    the global one)."""
    plt = _plt()
    counts: Mapping[str, Mapping[str, Sequence[int]]] = scores["counts_by_lang"]
    heads = sorted(counts)
    langs = sorted({lang for per in counts.values() for lang in per})
    fig, axes = plt.subplots(
        len(heads), len(langs), figsize=(3.2 * len(langs), 2.6 * len(heads)), squeeze=False
    )
    by_lang = scores.get("thresholds_by_lang") or {}
    for r, head in enumerate(heads):
        edges: Sequence[float] = scores["edges_by_head"][head]
        widths = [b - a for a, b in itertools.pairwise(edges)]
        for c, lang in enumerate(langs):
            ax = axes[r][c]
            ax.bar(
                edges[:-1],
                counts[head].get(lang, [0] * len(widths)),
                width=widths,
                align="edge",
                color=COLOURS["other"],
            )
            th = (by_lang.get(lang) or {}).get(head, scores.get("thresholds", {}).get(head))
            source = "language" if head in (by_lang.get(lang) or {}) else "global"
            if th is not None:
                ax.axvline(th, color="black", linestyle="--", label=f"{source} threshold {th:.3f}")
                ax.legend(fontsize=7)
            ax.set_title(f"{head} · {lang}", fontsize=9)
            ax.set_yscale("symlog", linthresh=1)
    fig.tight_layout()
    return _png(fig)
