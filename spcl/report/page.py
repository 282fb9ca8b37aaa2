"""The run report as one self-contained HTML page: tables of counts and the charts inlined as PNG
data URIs.

No script; the Content-Security-Policy allows only the page's own style (by SHA-256) and ``data:``
images, so the file opens anywhere (a phone, a mail attachment) without fetching anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:.8em;max-width:56em;color:#222;
 line-height:1.45}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
img{max-width:100%;height:auto;display:block;margin:.5em 0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:.9em;margin:.4em 0}
th,td{border:1px solid #ddd;padding:.2em .6em;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1b5e20;font-weight:bold}.bad{color:#b71c1c;font-weight:bold}
.cards{display:flex;flex-wrap:wrap;gap:.6em}
.card{border:1px solid #ddd;border-radius:6px;padding:.5em .8em;min-width:9em}
.card b{display:block;font-size:1.3em}
code{word-break:break-all}
"""


def content_security_policy() -> str:
    """Nothing but this page's style and inline ``data:`` images."""
    digest = base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()
    return (
        f"default-src 'none'; img-src data:; style-src 'sha256-{digest}'; base-uri 'none';"
        " form-action 'none'"
    )


def esc(value: Any) -> str:
    """HTML-escaped ``str(value)`` (``-`` for ``None``)."""
    return "-" if value is None else html.escape(str(value))


def number(value: Any) -> str:
    """A count with thousands separators, a float to 4 significant digits, else the escaped
    value."""
    if isinstance(value, bool) or value is None:
        return esc(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}"
    return esc(value)


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A scrollable table; numbers right-aligned."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            (
                f'<td class="n">{number(c)}</td>'
                if isinstance(c, int | float) and not isinstance(c, bool)
                else f"<td>{esc(c)}</td>"
            )
            for c in row
        )
        + "</tr>"
        for row in rows
    )
    return (
        "<div"
        f' class="scroll"><table><tr>{head}</tr>{body or "<tr><td>none</td></tr>"}</table></div>'
    )


def counts_table(counts: Mapping[str, Any], key: str, value: str = "documents") -> str:
    """Two columns, largest first."""
    return table([key, value], sorted(counts.items(), key=lambda kv: (-(kv[1] or 0), kv[0])))


def image(png: bytes, alt: str) -> str:
    """An ``<img>`` with the PNG inlined."""
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def status(ok: bool | None, good: str = "OK", bad: str = "FAILED") -> str:
    """A coloured OK / FAILED word."""
    return f'<span class="{"ok" if ok else "bad"}">{good if ok else bad}</span>'


def cards(items: Iterable[tuple[str, str]]) -> str:
    """Key figures as small cards (the values are pre-formatted HTML)."""
    return (
        '<div class="cards">'
        + "".join(f'<div class="card">{esc(k)}<b>{v}</b></div>' for k, v in items)
        + "</div>"
    )


def document(title: str, sections: Sequence[str]) -> str:
    """The whole page."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            (
                '<meta http-equiv="Content-Security-Policy"'
                f' content="{esc(content_security_policy())}">'
            ),
            f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
            f"<h1>{esc(title)}</h1>",
            *sections,
            (
                "<p><small>Counts, rates, score histograms, reasons and types only: no document"
                " text, id or value.</small></p>"
            ),
            "</body></html>\n",
        ]
    )
