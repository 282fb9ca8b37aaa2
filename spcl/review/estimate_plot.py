"""The chart of ``spcl review report``: precision of flagged and miss rate of clean, overall and per
language, with their Wilson intervals (``estimates.png``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def plot_estimates(result: Mapping[str, Any], path: str | Path) -> Path:
    """A PNG with precision of flagged and miss rate of clean, overall and per language, with
    intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, title in (
        (axes[0], "precision_flagged", "precision of flagged"),
        (axes[1], "miss_rate_clean", "miss rate of clean"),
    ):
        block = result[key]
        entries = [("all", block["overall"]), *sorted(block["by_lang"].items())]
        entries = [(n, r) for n, r in entries if r["rate"] is not None]
        xs = range(len(entries))
        rates = [r["rate"] for _, r in entries]
        err = [
            [r["rate"] - r["low"] for _, r in entries],
            [r["high"] - r["rate"] for _, r in entries],
        ]
        ax.bar(xs, rates, yerr=err, capsize=4, color="#4c72b0")
        ax.set_xticks(list(xs), [f"{n}\n(n={r['reviewed']})" for n, r in entries])
        ax.set_ylim(0, 1)
        ax.set_title(f"{title} (Wilson 95 %)")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
