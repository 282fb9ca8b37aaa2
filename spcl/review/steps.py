"""The steps of ``spcl review`` on a batch's files: agree, adjudicate, report estimates.

Each function takes paths and settings (what the CLI parsed), reads and writes the files of a review
batch and returns what the command prints; it raises ``ValueError``/``OSError``/``ReviewError``
naming files and ids. Drawing the sample is ``spcl.review.sample`` (plain Python),
``spcl.spark.sample`` or ``spcl.annotate.disputed``: those import this package, so the command picks
the engine.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spcl.manifest import (
    MANIFEST_NAME,
    manifest_ref,
    read_manifest,
    record_counts,
    sha256_file,
    write_manifest,
)
from spcl.review.agree import adjudicate, agreement, check_coverage
from spcl.review.estimate import Estimates, estimate, scan_output, scan_with_plan
from spcl.review.estimate_plot import plot_estimates
from spcl.review.export import private_dir, write_private
from spcl.review.labels import ReviewError, parse_pii
from spcl.review.reviews import Review, read_reviews
from spcl.review.sample import SamplePlan, SampleSpec


def read_reviewer_files(paths: Sequence[str]) -> dict[str, dict[str, Review]]:
    """Each reviewer file's reviews, keyed by reviewer name (``reviewer-a.csv`` → ``a``; the path
    on a clash)."""
    out: dict[str, dict[str, Review]] = {}
    for p in paths:
        name = Path(p).stem
        name = name[len("reviewer-") :] if name.startswith("reviewer-") else name
        if name in out:
            name = p
        out[name] = read_reviews(p)
    return out


def same_files(paths: Sequence[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(same file given twice, different files with identical bytes)`` among reviewer files."""
    by_path: dict[str, str] = {}
    by_hash: dict[str, str] = {}
    same, copies = [], []
    for p in paths:
        real, digest = os.path.realpath(p), sha256_file(p)
        if real in by_path:
            same.append((by_path[real], p))
        elif digest in by_hash:
            copies.append((by_hash[digest], p))
        by_path.setdefault(real, p)
        by_hash.setdefault(digest, p)
    return same, copies


def distinct_reviewer_files(paths: Sequence[str]) -> list[tuple[str, str]]:
    """Refuse a reviewer file given twice; returns the pairs of different files with identical
    bytes (a warning)."""
    same, copies = same_files(paths)
    if same:
        a, b = same[0]
        raise ReviewError(
            f"{b} is given twice (as {a}): agreement of a file with itself says nothing; "
            "give each reviewer's own file"
        )
    return copies


def agree_files(paths: Sequence[str], *, allow_partial: bool = False) -> tuple[Any, Any]:
    """``(Coverage, Agreement)`` of the reviewer files (every reviewer must cover every id unless
    ``allow_partial``)."""
    reviews = read_reviewer_files(paths)
    cov = check_coverage(reviews, allow_partial=allow_partial)
    return cov, agreement(reviews)


def write_agreement(result: Any, out: Path) -> Path:
    """Write the agreement (kappa, confusion, disagreeing ids; no text) to ``out``, private to
    the owner."""
    return write_private(out, json.dumps(result.to_json(), indent=2) + "\n")


def update_batch_manifest(batch: Path, records: int) -> None:
    """Re-hash a review batch after adjudication: kind ``review-batch``, the IAA kappa, and the
    export's manifest (by SHA-256) as its source. Does nothing outside an exported batch folder.
    """
    path = batch / MANIFEST_NAME
    if not path.is_file():
        return
    old = read_manifest(batch)
    keep = {
        k: v
        for k, v in old.items()
        if k not in ("files", "spcl_version", "created", "record_counts")
    }
    agreement_path = batch / "agreement.json"
    if agreement_path.is_file():
        agreed = json.loads(agreement_path.read_text())
        keep["iaa"] = {
            "kappa": agreed.get("kappa"),
            "method": agreed.get("method"),
            "raters": agreed.get("raters"),
        }
    if old.get("kind") == "review-export":
        keep["export_manifest_sha256"] = sha256_file(path)
    keep.update(
        kind="review-batch", adjudicated_records=records, record_counts=record_counts(batch)
    )
    write_manifest(batch, **keep)
    os.chmod(path, 0o600)


def adjudicate_pii(
    rows: list[dict[str, Any]], reviews: dict[str, dict[str, Review]], policy: str
) -> None:
    """Fill each row's ``pii`` (are the rule hits real personal data?) from every reviewer's answer:
    kept when all who answered agree; on disagreement blank, or ``yes`` under
    ``policy="sensitive"``.
    """
    for row in rows:
        answers = {
            a
            for r in reviews.values()
            if row["id"] in r
            if (a := parse_pii(r[row["id"]].row.get("pii"), row_id=row["id"])) is not None
        }
        if len(answers) > 1:
            row["pii"] = "yes" if policy == "sensitive" else ""
            row["agreed"] = "no"
        elif answers or "pii" in row:
            row["pii"] = ({True: "yes", False: "no"}[next(iter(answers))]) if answers else ""


def adjudicate_files(paths: Sequence[str], policy: str = "blank") -> list[dict[str, Any]]:
    """The adjudicated rows of the reviewer files (label and ``pii``; disagreements per
    ``policy``)."""
    reviews = read_reviewer_files(paths)
    rows = adjudicate(reviews, policy=policy)
    adjudicate_pii(rows, reviews, policy)
    return rows


def write_adjudicated(rows: list[dict[str, Any]], out: Path) -> None:
    """Write the rows as a private CSV (UTF-8 with BOM, CRLF) and re-hash the batch folder's
    manifest."""
    private_dir(out.parent)
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\r\n", restval="")
    writer.writeheader()
    writer.writerows(rows)
    write_private(out, "\ufeff" + buf.getvalue())
    update_batch_manifest(out.parent, len(rows))


def by_document_id(reviews: dict[str, Review]) -> dict[str, Review]:
    """Reviews re-keyed by document id (estimates match reviews to output rows by id); refuses
    repeated ids, which an id-keyed estimate cannot tell apart."""
    by_id = {r.id: r for r in reviews.values()}
    if len(by_id) != len(reviews):
        counts = Counter(r.id for r in reviews.values())
        repeated = sorted(i for i, n in counts.items() if n > 1)
        raise ReviewError(
            f"document ids repeat in the reviews ({', '.join(repeated[:10])}); estimates match "
            "reviews to the output by id and cannot tell those records apart"
        )
    return by_id


def estimate_reviews(
    input: str, reviews_path: Path, plan_path: Path, positive: tuple[str, ...]
) -> tuple[Estimates, dict[str, Review]]:
    """``(estimates, reviews by id)``: precision of flagged and miss rate of clean from the
    adjudicated reviews, weighted by the sample plan at ``plan_path`` when there is one (else
    re-scanned with the default spec)."""
    reviews = by_document_id(read_reviews(reviews_path))
    if plan_path.is_file():
        scan = scan_with_plan(
            input, SamplePlan.from_json(json.loads(plan_path.read_text())), set(reviews)
        )
    else:
        scan = scan_output(input, SampleSpec(), set(reviews))
    stats_path = Path(input) / "stats.json"
    counts = json.loads(stats_path.read_text()).get("counts", {}) if stats_path.is_file() else {}
    result = estimate(reviews, scan, counts, positive="auto" if positive == ("auto",) else positive)
    return result, reviews


def write_estimates(
    result: Estimates,
    reviews: dict[str, Review],
    out: Path,
    *,
    input: str,
    reviews_path: Path,
    plan_path: Path,
) -> None:
    """Write ``estimates.json``, ``estimates.png`` and the report's manifest (its sources by
    SHA-256) to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "estimates.json").write_text(json.dumps(result, indent=2) + "\n")
    plot_estimates(result, out / "estimates.png")
    write_manifest(
        out,
        kind="review-report",
        records=sum(1 for r in reviews.values() if r.label),
        sources=[
            manifest_ref(input),
            {"path": str(reviews_path), "sha256": sha256_file(reviews_path)},
        ],
        plan=str(plan_path) if plan_path.is_file() else None,
    )
