"""Files of a cross-validation report: metrics JSON, PR curves (PNG) and the union's confusion
matrix."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from spcl.screen.crossval import CVReport, CVResult


def pr_curve(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Precision and recall at every distinct score threshold (descending thresholds).

    >>> p, r = pr_curve(np.array([0.9, 0.8, 0.1]), np.array([True, False, True]))
    >>> p.tolist(), r.tolist()
    ([1.0, 0.5, 0.6666666666666666], [0.5, 0.5, 1.0])
    """
    order = np.argsort(-np.asarray(scores, np.float64), kind="stable")
    pos = np.asarray(positive, bool)[order]
    tp = np.cumsum(pos)
    k = np.arange(1, pos.size + 1)
    return tp / k, tp / max(int(pos.sum()), 1)


def write_cv_outputs(cv: CVResult, report: CVReport, out: str | Path) -> list[Path]:
    """Write ``cv_report.json``, ``cv_predictions.csv`` (ids, labels, out-of-fold scores; no text),
    ``cv_pr_curves.png`` and ``cv_confusion.png`` into ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    written = [root / "cv_report.json"]
    written[0].write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    written.append(root / "cv_predictions.csv")
    with written[-1].open("w", newline="", encoding="utf-8") as fh:
        out_csv = csv.writer(fh)
        out_csv.writerow(
            [
                "id",
                "lang",
                "label",
                "categories",
                "fold",
                "lgbm_score",
                "svc_score",
                "lgbm_flag",
                "svc_flag",
                "flag",
                "baseline_score",
            ]
        )
        for i, r in enumerate(cv.records):
            out_csv.writerow(
                [
                    r.id,
                    r.lang,
                    r.label,
                    "|".join(r.categories),
                    int(cv.fold[i]),
                    f"{cv.lgbm_score[i]:.6f}",
                    f"{cv.svc_score[i]:.6f}",
                    int(cv.lgbm_flag[i]),
                    int(cv.svc_flag[i]),
                    int(cv.flag[i]),
                    f"{cv.baseline_score[i]:.6f}",
                ]
            )
    y = np.isin(cv.labels, ("SCPI", "RELATED"))
    fig, ax = plt.subplots(figsize=(6, 5))
    for name, s in (
        ("LightGBM", cv.lgbm_score),
        ("LinearSVC", cv.svc_score),
        ("baseline char SVC", cv.baseline_score),
    ):
        precision, recall = pr_curve(s, y)
        ax.plot(recall, precision, label=name)
    m = report["overall"]["union"]
    ax.scatter(
        [m["recall"]], [m["precision"]], color="black", zorder=5, label="union at thresholds"
    )
    ax.set_xlabel("recall (SCPI ∪ RELATED)")
    ax.set_ylabel("precision")
    ax.set_title("screen: out-of-fold PR curves (real sentences)")
    ax.legend(loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    written.append(root / "cv_pr_curves.png")
    fig.savefig(written[-1], dpi=90, metadata={"Software": None})
    plt.close(fig)
    labels = ("SCPI", "RELATED", "NONE")
    mat = np.array(
        [[report["confusion_union"][lab][k] for k in ("flagged", "clean")] for lab in labels]
    )
    fig, ax = plt.subplots(figsize=(4, 3.5))
    ax.imshow(mat, cmap="Blues")
    for i in range(3):
        for j in range(2):
            ax.text(j, i, str(mat[i, j]), ha="center", va="center")
    ax.set_xticks([0, 1], ["flagged", "clean"])
    ax.set_yticks([0, 1, 2], list(labels))
    ax.set_title("union: gold label × decision")
    fig.tight_layout()
    written.append(root / "cv_confusion.png")
    fig.savefig(written[-1], dpi=90, metadata={"Software": None})
    plt.close(fig)
    return written
