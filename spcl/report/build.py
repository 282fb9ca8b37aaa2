"""Assemble and write a run report: ``report.html`` (self-contained) and its charts as PNG files.

Layout under the destination (the output folder by default)::

    report.html           the page: tables and every chart inlined (opens offline, on a phone)
    report/*.png          the same charts as files, report/facts.json (the numbers),
                          report/manifest.json

``report/`` carries its own manifest, so it is a nested dataset that ``spcl manifest verify OUT/``
skips, and ``report.html`` is a derived view that verify ignores (``spcl.manifest.DERIVED_FILES``):
writing a report never breaks the output's manifest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spcl.io.storage import write_atomic
from spcl.manifest import write_manifest
from spcl.report import charts, records
from spcl.report.facts import filter_facts, mask_facts, output_kind
from spcl.report.llm_cost import token_section
from spcl.report.page import cards, counts_table, document, esc, image, number, status, table

REPORT_HTML = "report.html"
REPORT_DIR = "report"


def _seconds(value: Any) -> str:
    return "-" if value is None else f"{value:,.1f} s"


def filter_sections(f: records.FilterFacts, add: Callable[[str, bytes], str]) -> list[str]:
    """HTML sections of a filter output's facts; ``add(name, png)`` stores a chart and returns
    its ``<img>``."""
    return [
        *_filter_overview(f, add),
        *_filter_languages(f, add),
        *_filter_reasons(f, add),
        *_filter_scores(f["scores"], add),
        *_filter_outcomes(f, add),
        *_filter_throughput(f["throughput"]),
        *_filter_identity(f["identity"]),
    ]


def _filter_overview(f: records.FilterFacts, add: Callable[[str, bytes], str]) -> list[str]:
    """The headline cards, the reconciliation line and the decisions chart."""
    counts, rec = f["counts"], f["reconciliation"]
    return [
        "<h2>Filter output</h2>",
        cards(
            [
                ("input records", number(rec.get("input_records"))),
                ("clean", number(counts.get("clean"))),
                ("flagged", number(counts.get("flagged"))),
                ("quarantine", number(counts.get("quarantine"))),
                ("reconciliation", status(rec.get("ok"))),
                ("docs/s", number(f["throughput"].get("docs_per_second"))),
            ]
        ),
        (
            f"<p>input = clean + flagged + quarantine: {number(rec.get('input_records'))} = "
            f"{number(rec.get('output_records'))} {status(rec.get('ok'))}</p>"
        ),
        *_llm_share_line(f.get("llm_stage")),
        add("decisions", charts.bar_chart(counts, "documents by decision")),
    ]


def _llm_share_line(llm: records.LlmShare | None) -> list[str]:
    if llm is None or llm["share"] is None:
        return []
    return [
        f"<p>sent to the LLM stage (flagged): {number(llm['documents'])} of"
        f" {number(llm['screened'])} screened documents ({llm['share'] * 100:.2f} %); the mask"
        " output's section estimates the LLM tokens and GPU-hours for them.</p>"
    ]


def _filter_languages(f: records.FilterFacts, add: Callable[[str, bytes], str]) -> list[str]:
    """Documents and flag rate per language (table, then charts when there is a language)."""
    out = [
        "<h2>Languages</h2>",
        table(
            ["language", "clean", "flagged", "flag rate"],
            [
                (
                    lg,
                    v.get("clean", 0),
                    v.get("flagged", 0),
                    f"{f['flag_rate_by_lang'].get(lg, 0) * 100:.1f} %",
                )
                for lg, v in sorted(f["by_lang"].items(), key=lambda kv: -sum(kv[1].values()))
            ],
        ),
    ]
    if f["by_lang"]:
        out.append(
            add("languages", charts.stacked_by_language(f["by_lang"], "documents by language"))
        )
        out.append(
            add(
                "flag_rate",
                charts.bar_chart(
                    f["flag_rate_by_lang"],
                    "flag rate by language",
                    xlabel="flagged share",
                    percent=True,
                ),
            )
        )
    return out


def _filter_reasons(f: records.FilterFacts, add: Callable[[str, bytes], str]) -> list[str]:
    """Why documents were flagged, and which personal data types the rules hit."""
    out = ["<h2>Why documents were flagged</h2>", counts_table(f["flag_reasons"], "reason")]
    split = f.get("flagged_by_lang_cause") or {}
    if split:
        out += [
            "<h3>Flagged documents per language: rule hits vs screen only</h3>",
            table(
                ["language", "rule hits", "screen only", "flagged"],
                [
                    (lg, v["rule_hits"], v["screen_only"], v["rule_hits"] + v["screen_only"])
                    for lg, v in split.items()
                ],
            ),
        ]
    if f["flag_reasons"]:
        out.append(add("reasons", charts.bar_chart(f["flag_reasons"], "flag reasons")))
    pii = f["documents_by_pii_type"]
    out += [
        "<h2>Personal data types (rule hits)</h2>",
        table(
            ["type", "documents", "hits"],
            [
                (t, n, f["pii_hits_by_type"].get(t, 0))
                for t, n in sorted(pii.items(), key=lambda kv: -kv[1])
            ],
        ),
    ]
    if pii:
        out.append(add("pii_types", charts.bar_chart(pii, "documents by PII type")))
    return out


def _filter_scores(sc: records.ScoreFacts, add: Callable[[str, bytes], str]) -> list[str]:
    """The screen's score histograms and thresholds (or a note that the run used rules only)."""
    out = ["<h2>Screen scores</h2>"]
    if sc["documents_scored"]:
        th = ", ".join(f"{k} {v:.4f}" for k, v in sorted(sc["thresholds"].items())) or "unknown"
        out += [
            (
                f"<p>{number(sc['documents_scored'])} documents scored; thresholds: {esc(th)} "
                f"(from the {esc(sc['threshold_source'])}).</p>"
            ),
            *[
                f"<p>{esc(lang)} documents: thresholds"
                f" {esc(', '.join(f'{k} {v:.4f}' for k, v in sorted(th.items())))} (per-language,"
                " model card).</p>"
                for lang, th in sc.get("thresholds_by_lang", {}).items()
            ],
            add("scores", charts.score_histograms(sc)),
        ]
        if sc.get("counts_by_lang"):
            out.append(add("scores_by_lang", charts.score_histograms_by_language(sc)))
    else:
        out.append("<p>No screen scores in this output (rules only).</p>")
    return out


def _filter_outcomes(f: records.FilterFacts, add: Callable[[str, bytes], str]) -> list[str]:
    """Top categories of the flagged documents and the quarantine reasons."""
    out = [
        "<h2>Top categories of flagged documents</h2>",
        counts_table(f["top_categories"], "category"),
    ]
    if f["top_categories"]:
        out.append(
            add("categories", charts.bar_chart(f["top_categories"], "top category (flagged)"))
        )
    out += ["<h2>Quarantine</h2>", counts_table(f["quarantine_reasons"], "reason")]
    if f["quarantine_reasons"]:
        out.append(
            add(
                "quarantine",
                charts.bar_chart(
                    f["quarantine_reasons"],
                    "quarantine reasons",
                    colour=charts.COLOURS["quarantine"],
                ),
            )
        )
    return out


def _filter_throughput(tp: records.FilterThroughput) -> list[str]:
    """Engine, files, elapsed and per-stage seconds, documents per second."""
    stages = tp.get("stage_seconds") or {}
    return [
        "<h2>Throughput and stage timings</h2>",
        table(
            ["measure", "value"],
            [
                ("engine", tp.get("engine") or "-"),
                ("master", tp.get("master") or "-"),
                ("input files", tp.get("input_files")),
                ("skipped files", tp.get("skipped_files")),
                ("elapsed", _seconds(tp.get("elapsed_seconds"))),
                ("task seconds (sum over tasks)", _seconds(tp.get("task_seconds"))),
                ("documents per second", tp.get("docs_per_second")),
                *((f"stage {k}", _seconds(v)) for k, v in stages.items()),
            ],
        ),
    ]


def _filter_identity(ident: records.FilterIdentity) -> list[str]:
    """What produced the output: spcl version, config hashes, screen model, manifest kind."""
    return [
        "<h2>Identity</h2>",
        table(
            ["what", "value"],
            [
                ("spcl version", ident.get("spcl_version")),
                ("config hash", ident.get("config_hash")),
                (
                    "config hashes in the output",
                    ", ".join(ident.get("config_hashes_in_output", [])) or "-",
                ),
                ("screen model", ident.get("model") or "none (rules only)"),
                (
                    "model versions in the output",
                    ", ".join(ident.get("model_versions_in_output", [])) or "-",
                ),
                ("manifest", ident.get("manifest_kind") or "none"),
            ],
        ),
    ]


def mask_sections(m: records.MaskFacts, add: Callable[[str, bytes], str]) -> list[str]:
    """HTML sections of a mask output's facts."""
    rec = m["reconciliation"]
    ident = m["identity"]
    out = [
        "<h2>Mask output</h2>",
        cards(
            [
                ("documents", number(m["documents"])),
                ("masked", number(m["masked"])),
                ("failed (held back)", number(m["failed"])),
                ("masked by fallback", number(m.get("masked_by_fallback"))),
                ("reconciliation", status(rec["ok"])),
                ("docs/s", number(m["throughput"].get("docs_per_second"))),
            ]
        ),
        (
            f"<p>documents = masked/ rows + failed/ rows: {number(rec['documents'])} = "
            f"{number(rec['masked_rows'])} + {number(rec['failed_rows'])} {status(rec['ok'])}</p>"
        ),
        add(
            "mask_outcome",
            charts.bar_chart({"masked": m["masked"], "failed": m["failed"]}, "mask outcome"),
        ),
        "<h3>Failed documents by reason</h3>",
        counts_table(m["failed_reasons"], "reason"),
    ]
    if m["failed_reasons"]:
        out.append(
            add(
                "mask_failed",
                charts.bar_chart(
                    m["failed_reasons"], "failed reasons", colour=charts.COLOURS["quarantine"]
                ),
            )
        )
    out += [
        "<h3>Entities masked by type</h3>",
        counts_table(m["entities_per_type"], "type", "entities"),
    ]
    if m["entities_per_type"]:
        out.append(
            add(
                "mask_entities",
                charts.bar_chart(m["entities_per_type"], "entities by type", xlabel="entities"),
            )
        )
    out += [
        "<h3>Rates, latency and throughput</h3>",
        table(
            ["measure", "value"],
            [
                *((k.replace("_", " "), f"{v * 100:.2f} %") for k, v in m["rates"].items()),
                *((f"latency {k}", _seconds(v)) for k, v in m["latency_seconds"].items()),
                ("documents per second", m["throughput"].get("docs_per_second")),
                ("generated tokens per second", m["throughput"].get("generated_tokens_per_second")),
            ],
        ),
        *token_section(m["tokens"]),
        "<h3>Identity</h3>",
        table(
            ["what", "value"],
            [
                ("backend", ident.get("backend")),
                ("model", ident.get("model")),
                ("prompt version", ident.get("prompt_version")),
                (
                    "models in the output",
                    ", ".join(map(str, ident.get("models_in_output") or [])) or "-",
                ),
                ("fallback", ident.get("fallback") or "none"),
            ],
        ),
    ]
    return out


def screen_eval_sections(report: records.ScreenEvalReport) -> list[str]:
    """The section of a ``spcl eval screen --output`` report: the per language × source table of the
    labelled records (the table ``spcl eval screen`` prints) and the flag rates of the unlabelled
    ones."""
    from spcl.evaluate.screen import LLM_TOKENS_PER_DOC, SOURCE_TABLE_HEADER, source_table

    out = [
        f"<h2>Screen on labelled data: {esc(report.get('model', '-'))}</h2>",
        (
            f"<p>{number(report.get('labelled'))} labelled of {number(report.get('records'))}"
            f" documents; each flagged document costs the LLM stage about {LLM_TOKENS_PER_DOC:,}"
            " tokens.</p>"
        ),
        table(SOURCE_TABLE_HEADER, source_table(report)),
    ]
    rates = report.get("unlabelled_flag_rate") or {}
    if rates:
        out += [
            "<h3>Unlabelled text: share flagged</h3>",
            table(
                ("language", "origin", "documents", "flagged", "flag rate"),
                [
                    (lang, g, v["n"], v["flagged"], v["flag_rate"])
                    for lang, groups in sorted(rates.items())
                    for g, v in sorted(groups.items())
                ],
            ),
        ]
    return out


def read_screen_eval(path: str | Path) -> records.ScreenEvalReport:
    """A ``spcl eval screen --output`` JSON report; ``ValueError`` when the file is not one."""
    try:
        report: records.ScreenEvalReport = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(
            f"{path}: not a readable spcl eval screen report ({type(err).__name__})"
        ) from None
    if not isinstance(report, dict) or "records" not in report or "model" not in report:
        raise ValueError(f"{path}: not a spcl eval screen report (no 'model' and 'records')")
    return report


def write_report(
    output: str | Path,
    *,
    mask: str | Path | None = None,
    dest: str | Path | None = None,
    gpu_tokens_per_s: float | None = None,
    screen_eval: str | Path | None = None,
) -> Path:
    """Write ``report.html`` and ``report/`` (charts, facts, manifest) for a filter or mask
    ``output``.

    ``mask`` adds a mask output's section to a filter output's report (its GPU-hours estimate then
    covers the filter's flagged documents); ``gpu_tokens_per_s`` is the generation rate of that
    estimate (default: the rate the mask run measured); ``screen_eval`` adds the per language ×
    source table of a ``spcl eval screen --output`` report. ``output`` may itself be such a report
    (a ``.json`` file): the page then holds that table alone, written beside it unless ``dest`` is
    given. Returns the path of the page.
    """
    facts: records.ReportFacts = {}
    if Path(output).is_file() and Path(output).suffix == ".json":
        out_dir = Path(dest) if dest is not None else Path(output).parent
        facts["screen_eval"] = read_screen_eval(output)
    else:
        out_dir = Path(dest) if dest is not None else Path(output)
        if output_kind(output) == "filter":
            facts["filter"] = filter_facts(output)
        else:
            facts["mask"] = mask_facts(output, gpu_tokens_per_s=gpu_tokens_per_s)
    if screen_eval is not None:
        facts["screen_eval"] = read_screen_eval(screen_eval)
    if mask is not None:
        if output_kind(mask) != "mask":
            raise ValueError(f"{mask} is not a mask output (metrics.json, masked/, failed/)")
        flagged = facts["filter"]["counts"].get("flagged") if "filter" in facts else None
        facts["mask"] = mask_facts(mask, flagged=flagged, gpu_tokens_per_s=gpu_tokens_per_s)
    charts_dir = out_dir / REPORT_DIR
    charts_dir.mkdir(parents=True, exist_ok=True)
    for old in charts_dir.glob("*.png"):
        old.unlink()
    pngs: dict[str, bytes] = {}

    def add(name: str, png: bytes) -> str:
        pngs[name] = png
        return image(png, name.replace("_", " "))

    sections: list[str] = []
    if "filter" in facts:
        sections += filter_sections(facts["filter"], add)
    if "mask" in facts:
        sections += mask_sections(facts["mask"], add)
    if "screen_eval" in facts:
        sections += screen_eval_sections(facts["screen_eval"])
    title = f"spcl run report: {Path(output).resolve().name}"
    for name, png in pngs.items():
        (charts_dir / f"{name}.png").write_bytes(png)
    (charts_dir / "facts.json").write_text(json.dumps(facts, indent=2, ensure_ascii=False) + "\n")
    page = out_dir / REPORT_HTML
    write_atomic(page, document(title, sections))
    write_manifest(
        charts_dir, kind="run-report", report=REPORT_HTML, charts=sorted(f"{n}.png" for n in pngs)
    )
    return page
