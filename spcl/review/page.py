"""The interactive labelling page of a review export: one self-contained HTML file, no server, no
network.

Each document is an ``<article data-doc-id="…">`` with its text (rule hits in ``<mark>``), scores,
reasons and stratum; label buttons carry ``data-label`` (SCPI / RELATED / NONE), category toggles
``data-category``, the rule-hit answer ``data-pii`` (yes / no), and a note field. Keys: 1/2/3 label,
j/k move, m/c/d/o categories, y/n hits are / are not real personal data, ? help. Labels are kept in
``localStorage`` under ``spcl-review:<sample key>`` (the SHA-256 of the sample's JSONL, recorded in
the export manifest) after every change, so a reload or a crash loses nothing.

``window.spclLabelsCSV()`` returns the reviewer's CSV — the columns of ``sample.csv`` with
``label``, ``categories``, ``pii`` and ``note`` filled — and the "Download CSV" button saves it
(with a BOM, like ``sample.csv``); ``spcl review agree / adjudicate / report`` read it. The export
columns are computed and formula-guarded in Python (``spcl.review.export.csv_cells``); the script
guards only what the reviewer typed, by the same rule as ``spcl.review.reviews.escape_cell``.

The Content-Security-Policy allows nothing but this page's own inline style and script (by SHA-256):
no network, no other script, even if a document's text tried. Document text is HTML-escaped in the
page and ``<``, ``>``, ``&`` are escaped in the JSON data block.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from spcl.review.labels import CATEGORIES, LABELS

CATEGORY_KEYS: dict[str, str] = {"m": "MEDICAL", "c": "CRIME", "d": "DISABILITY", "o": "OTHER"}
"""Keyboard toggles of the categories."""

STORAGE_PREFIX = "spcl-review:"
"""``localStorage`` key prefix; the sample key follows."""

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,"Noto Sans CJK JP","Noto Sans KR",sans-serif;margin:0;color:#222;
 background:#fafafa}
header.bar{position:sticky;top:0;z-index:2;background:#263238;color:#fff;padding:.5em 1em;
 display:flex;flex-wrap:wrap;gap:.6em;align-items:center}
header.bar h1{font-size:1em;margin:0;flex:1 1 12em}
header.bar input{width:9em}
#progress{font-weight:bold}
main{max-width:60em;margin:0 auto;padding:.5em 1em 40vh}
.doc{border:2px solid #ccc;border-radius:6px;padding:.8em;margin:1em 0;background:#fff}
.doc.current{border-color:#1565c0;box-shadow:0 0 0 3px #90caf9}
.doc.labelled{background:#f1f8e9}
.doc h3{margin:.1em 0;font-size:.95em;word-break:break-all}
.meta{color:#555;font-size:.85em}
.text{white-space:pre-wrap;margin:.5em 0;line-height:1.6;overflow-wrap:anywhere}
mark.hit{background:#ffd54f}
mark.hit::after{content:attr(data-type);color:#a15c00;font-size:.65em;vertical-align:super;
 margin-left:1px}
table.scores td{padding:0 .6em 0 0;font-size:.85em}
.controls{display:flex;flex-wrap:wrap;gap:.4em;align-items:center}
.controls button{font:inherit;padding:.3em .7em;border:1px solid #888;border-radius:4px;
 background:#eee;cursor:pointer}
.controls button[aria-pressed=true]{background:#1565c0;color:#fff;border-color:#0d47a1}
.controls .sep{width:1px;height:1.6em;background:#ccc}
.controls input.note{flex:1 1 12em;font:inherit;padding:.3em}
#help{position:fixed;right:1em;top:3.5em;z-index:3;background:#fff;border:2px solid #263238;
 border-radius:6px;padding:.8em 1.2em;box-shadow:0 4px 16px #0004}
#help td{padding:.1em .6em}
.warn{background:#ffebee;color:#b71c1c;padding:.5em 1em;margin:0}
kbd{border:1px solid #999;border-radius:3px;padding:0 .3em;background:#f5f5f5;color:#222}
"""

_JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("spcl-data").textContent);
  var KEY = data.storage_prefix + data.key;
  var LABELS = data.labels, CATEGORIES = data.categories, CATKEYS = data.category_keys;
  var docs = Array.prototype.slice.call(document.querySelectorAll("article.doc"));
  var progressEl = document.getElementById("progress");
  var helpEl = document.getElementById("help");
  var reviewerEl = document.getElementById("reviewer");
  var warnEl = document.getElementById("storage-warning");
  // labels by document id in a prototype-free map: an id such as "__proto__" is just a key
  var state = { reviewer: "", current: 0, labels: Object.create(null) };

  function warn() { warnEl.hidden = false; }
  function load() {
    try {
      var raw = window.localStorage.getItem(KEY);
      if (!raw) { return; }
      var saved = JSON.parse(raw);
      if (saved && typeof saved === "object" && saved.labels && typeof saved.labels === "object") {
        state.reviewer = String(saved.reviewer || "");
        state.current = Math.max(0, Math.min(docs.length - 1, saved.current | 0));
        Object.keys(saved.labels).forEach(function (id) { state.labels[id] = saved.labels[id]; });
      }
    } catch (e) { warn(); }
  }
  function save() {
    try { window.localStorage.setItem(KEY, JSON.stringify(state)); } catch (e) { warn(); }
  }
  // labels are keyed by the row key (unique per record) where the sample has one, else by the id
  function idOf(el) { return el.getAttribute("data-row-key") || el.getAttribute("data-doc-id"); }
  var keyColumn = data.columns.indexOf("row_key") >= 0 ? data.columns.indexOf("row_key") : 0;
  function entryOf(id) {
    var e = state.labels[id];
    if (!e) { e = state.labels[id] = { label: "", categories: [], pii: "", note: "" }; }
    return e;
  }
  function press(el, selector, attr, isOn) {
    var buttons = el.querySelectorAll(selector);
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].setAttribute("aria-pressed", String(isOn(buttons[i].getAttribute(attr))));
    }
  }
  function render(el) {
    var e = state.labels[idOf(el)] || { label: "", categories: [], pii: "", note: "" };
    press(el, "[data-label]", "data-label", function (v) { return v === e.label; });
    press(el, "[data-category]", "data-category",
      function (v) { return e.categories.indexOf(v) >= 0; });
    press(el, "[data-pii]", "data-pii", function (v) { return v === e.pii; });
    var note = el.querySelector("input.note");
    if (note && document.activeElement !== note) { note.value = e.note || ""; }
    el.classList.toggle("labelled", !!e.label);
  }
  function progress() {
    var n = 0;
    for (var i = 0; i < docs.length; i++) {
      var e = state.labels[idOf(docs[i])];
      if (e && e.label) { n++; }
    }
    progressEl.textContent = n + " / " + docs.length + " labelled";
    progressEl.setAttribute("data-labelled", String(n));
  }
  function setCurrent(i, scroll) {
    if (!docs.length) { return; }
    i = Math.max(0, Math.min(docs.length - 1, i));
    docs[state.current].classList.remove("current");
    state.current = i;
    docs[i].classList.add("current");
    if (scroll) { docs[i].scrollIntoView({ block: "nearest" }); }
  }
  function changed(el) { save(); render(el); progress(); }
  function setLabel(el, label) { entryOf(idOf(el)).label = label; changed(el); }
  function toggleCategory(el, cat) {
    var e = entryOf(idOf(el));
    var has = e.categories.indexOf(cat) >= 0;
    e.categories = CATEGORIES.filter(function (c) {
      return c === cat ? !has : e.categories.indexOf(c) >= 0;
    });
    changed(el);
  }
  function setPii(el, value) {
    if (!el.querySelector("[data-pii]")) { return; }
    var e = entryOf(idOf(el));
    e.pii = e.pii === value ? "" : value;
    changed(el);
  }

  // the same rule as spcl.review.reviews.escape_cell: guard formula-like cells,
  // keep numbers numbers
  function escapeCell(v) {
    v = String(v);
    if (/^[=+\-@\t\r']/.test(v) &&
        !/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(v)) { return "'" + v; }
    return v;
  }
  function quote(v) { return /[",\r\n]/.test(v) ? "\"" + v.replace(/"/g, "\"\"") + "\"" : v; }
  function labelsCSV() {
    var lines = [data.columns.map(quote).join(",")];
    for (var i = 0; i < data.rows.length; i++) {
      var cells = data.rows[i];
      var e = state.labels[cells[keyColumn] || cells[0]] ||
        { label: "", categories: [], pii: "", note: "" };
      var filled = [e.label, e.categories.join(","), e.pii, e.note].map(escapeCell);
      lines.push(cells.concat(filled).map(quote).join(","));
    }
    return lines.join("\r\n") + "\r\n";
  }
  window.spclLabelsCSV = labelsCSV;

  function download() {
    var name = state.reviewer
      ? "reviewer-" + state.reviewer.replace(/[^A-Za-z0-9_-]/g, "_") + ".csv"
      : "labels-" + data.key.slice(0, 12) + ".csv";
    var blob = new Blob(["\ufeff" + labelsCSV()], { type: "text/csv;charset=utf-8" });
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) { return; }
    if (t.closest("#download")) { download(); return; }
    if (t.closest("#help-button")) { helpEl.hidden = !helpEl.hidden; return; }
    var el = t.closest("article.doc");
    if (!el) { return; }
    setCurrent(docs.indexOf(el), false);
    var b = t.closest("[data-label],[data-category],[data-pii]");
    if (!b) { save(); return; }
    if (b.hasAttribute("data-label")) { setLabel(el, b.getAttribute("data-label")); }
    else if (b.hasAttribute("data-category")) {
      toggleCategory(el, b.getAttribute("data-category"));
    }
    else { setPii(el, b.getAttribute("data-pii")); }
  });
  document.addEventListener("input", function (ev) {
    var t = ev.target;
    if (t === reviewerEl) { state.reviewer = reviewerEl.value.trim(); save(); return; }
    if (t instanceof Element && t.matches("input.note")) {
      var el = t.closest("article.doc");
      entryOf(idOf(el)).note = t.value;
      save();
    }
  });
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    if (t instanceof Element && t.matches("input,textarea,select")) {
      if (ev.key === "Escape") { t.blur(); }
      return;
    }
    var el = docs[state.current];
    var k = ev.key;
    if (k === "?") { helpEl.hidden = !helpEl.hidden; }
    else if (k === "Escape") { helpEl.hidden = true; }
    else if (!el) { return; }
    else if (k === "j" || k === "ArrowDown") { setCurrent(state.current + 1, true); save(); }
    else if (k === "k" || k === "ArrowUp") { setCurrent(state.current - 1, true); save(); }
    else if (k >= "1" && k <= String(LABELS.length) && k.length === 1) {
      setLabel(el, LABELS[+k - 1]);
    }
    else if (CATKEYS[k]) { toggleCategory(el, CATKEYS[k]); }
    else if (k === "y") { setPii(el, "yes"); }
    else if (k === "n") { setPii(el, "no"); }
    else if (k === "e") { var note = el.querySelector("input.note"); if (note) { note.focus(); } }
    else { return; }
    ev.preventDefault();
  });

  load();
  reviewerEl.value = state.reviewer;
  docs.forEach(render);
  progress();
  setCurrent(state.current, false);
  document.body.setAttribute("data-ready", "true");
})();
"""


def _csp_hash(source: str) -> str:
    return (
        "'sha256-"
        + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode()
        + "'"
    )


def content_security_policy(style: str = _CSS, script: str = _JS) -> str:
    """The page's policy: nothing loads or runs but its own inline style and script (matched by
    SHA-256)."""
    return (
        f"default-src 'none'; style-src {_csp_hash(style)}; script-src {_csp_hash(script)}; "
        "img-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
    )


def json_for_script(value: Any) -> str:
    """JSON safe inside a ``<script type="application/json">`` block (no ``<``, ``>``, ``&``
    characters)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def highlight(text: str, hits: Sequence[Mapping[str, Any]]) -> str:
    """HTML-escaped ``text`` with non-overlapping hit spans wrapped in ``<mark
    data-type="TYPE">``."""
    out: list[str] = []
    cursor = 0
    for h in sorted(hits, key=lambda h: (h["start"], -h["end"])):
        if h["start"] < cursor:
            continue
        out.append(html.escape(text[cursor : h["start"]]))
        t = html.escape(h["type"])
        out.append(
            f'<mark class="hit" title="{t}"'
            f' data-type="{t}">{html.escape(text[h["start"] : h["end"]])}</mark>'
        )
        cursor = h["end"]
    out.append(html.escape(text[cursor:]))
    return "".join(out)


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _article(index: int, r: Mapping[str, Any]) -> str:
    scores = r["scores"] or {}
    cells = "".join(
        f"<td>{html.escape(k)}: {html.escape(_fmt(v))}</td>"
        for k, v in scores.items()
        if v is not None
    )
    meta = " · ".join(
        html.escape(str(x))
        for x in (r["decision"], r["lang"] or "-", r["top_category"] or "-", r["stratum"])
    )
    reasons = html.escape(", ".join(r["reasons"])) or "-"
    labels = "".join(
        f'<button type="button" data-label="{lab}" aria-pressed="false"><kbd>{i}</kbd>'
        f" {lab}</button>"
        for i, lab in enumerate(LABELS, 1)
    )
    keys = {v: k for k, v in CATEGORY_KEYS.items()}
    cats = "".join(
        f'<button type="button" data-category="{c}" aria-pressed="false"><kbd>{keys[c]}</kbd>'
        f" {c}</button>"
        for c in CATEGORIES
    )
    pii = (
        '<span class="sep"></span><span>hits real?</span>'
        '<button type="button" data-pii="yes" aria-pressed="false"><kbd>y</kbd> yes</button>'
        '<button type="button" data-pii="no" aria-pressed="false"><kbd>n</kbd> no</button>'
        if r["hits"]
        else ""
    )
    doc_id = html.escape(r["id"], quote=True)
    row_key = html.escape(str(r.get("row_key") or ""), quote=True)
    key_attr = f' data-row-key="{row_key}"' if row_key else ""
    return (
        f'<article class="doc" data-doc-id="{doc_id}"{key_attr} data-index="{index}">'
        f"<h3>{index + 1}. {doc_id}</h3>"
        f'<div class="meta">{meta}<br>reasons: {reasons}</div>'
        f'<table class="scores"><tr>{cells or "<td>no screen scores</td>"}</tr></table>'
        f'<div class="text">{highlight(r["text"], r["hits"])}</div>'
        f'<div class="controls">{labels}<span class="sep"></span>{cats}{pii}'
        '<input class="note" type="text" placeholder="note (e)" aria-label="note"></div>'
        "</article>"
    )


_HELP = "".join(
    f"<tr><td><kbd>{k}</kbd></td><td>{html.escape(v)}</td></tr>"
    for k, v in (
        ("1 2 3", " / ".join(LABELS)),
        ("j k", "next / previous document"),
        ("m c d o", "toggle " + ", ".join(CATEGORY_KEYS.values())),
        ("y n", "the highlighted rule hits are / are not real personal data"),
        ("e", "write a note (Esc leaves it)"),
        ("?", "this help"),
    )
)


def labelling_page(
    records: Sequence[Mapping[str, Any]],
    csv_rows: Sequence[Sequence[str]],
    columns: Sequence[str],
    *,
    key: str,
    title: str,
    redacted: bool,
) -> str:
    """The self-contained labelling page for ``records`` (as from ``review_records``).

    ``csv_rows`` are the formula-guarded export cells of each record (the ``columns`` before the
    reviewer's ``label``, ``categories``, ``pii``, ``note``); ``key`` names the sample (its
    ``localStorage`` slot).
    """
    data = {
        "key": key,
        "storage_prefix": STORAGE_PREFIX,
        "columns": list(columns),
        "rows": [list(r) for r in csv_rows],
        "labels": list(LABELS),
        "categories": list(CATEGORIES),
        "category_keys": CATEGORY_KEYS,
    }
    note = " (redacted: rule hits replaced by [TYPE])" if redacted else ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        (
            '<meta http-equiv="Content-Security-Policy"'
            f' content="{html.escape(content_security_policy())}">'
        ),
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>",
        f'<body data-sample-key="{html.escape(key)}">',
        (
            f'<header class="bar"><h1>{html.escape(title)}</h1><span id="progress">0 /'
            f" {len(records)} labelled</span>"
        ),
        '<label>reviewer <input id="reviewer" type="text" autocomplete="off"></label>',
        '<button type="button" id="download">Download CSV</button>',
        (
            '<button type="button" id="help-button" aria-label="keyboard'
            ' shortcuts">?</button></header>'
        ),
        f'<div id="help" hidden><b>Keyboard</b><table>{_HELP}</table></div>',
        (
            '<p id="storage-warning" class="warn" hidden>This browser does not keep labels for'
            " local files: download the CSV before closing the page.</p>"
        ),
        (
            f"<main><p>{len(records)} documents{note}. Rule hits are highlighted. Labels are saved"
            " in this browser as you go; <b>Download CSV</b> hands them back.</p>"
        ),
        *(_article(i, r) for i, r in enumerate(records)),
        "</main>",
        f'<script type="application/json" id="spcl-data">{json_for_script(data)}</script>',
        f"<script>{_JS}</script>",
        "</body></html>\n",
    ]
    return "\n".join(parts)
