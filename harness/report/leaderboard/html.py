"""The HTML leaderboard: one self-contained file (data, script, styles and plots inline; no
network at view time) with a sortable table, corpus and stratum selectors, the paper tables,
the plots and each cell's provenance."""

from __future__ import annotations

import base64
import html
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.render import interval, number
from harness.report.leaderboard.tables import Table, Value
from metrics.registry import higher_is_better, in_percent


def _data(board: Board, corpora: list[str]) -> dict:
    cells, metrics = [], []
    for c in corpora:
        for name, e in sorted(board.cells[c].items()):
            res = e.doc.get("results") or {}
            strata = {"overall": _summary(res.get("overall"))}
            for strat, by in res.items():
                if strat == "overall" or not isinstance(by, dict):
                    continue
                for label, s in by.items():
                    strata[f"{strat}={label}"] = _summary(s)
            computed = list(e.doc.get("metrics") or [])
            for m in e.doc.get("metrics") or []:
                if m not in metrics:
                    metrics.append(m)
            prov = e.doc.get("provenance") or {}
            cells.append(
                {
                    "corpus": c,
                    "retriever": name,
                    "label": board.label(name),
                    "stale": e.stale,
                    "computed": computed,
                    "strata": strata,
                    "provenance": {
                        "path": str(e.path),
                        # no date: when a cell ran is in its timings.json, the one file a
                        # rerun may change; the page is the same bytes for the same results
                        "checksum": e.checksum,
                        "versions": prov.get("versions"),
                        "git": prov.get("git"),
                        "config": e.doc.get("config"),
                    },
                }
            )
    # the metrics most cells hold first (the RARE four before the standard metrics a single
    # cell was scored with); among equals, the order they were met in
    held = {m: sum(m in cell["computed"] for cell in cells) for m in metrics}
    metrics.sort(key=lambda m: -held[m])
    clusters = {
        c: {str(k["id"]): k["label"] for k in (board.strata.get(c) or {}).get("clusters", [])}
        for c in corpora
    }
    return {
        "corpora": corpora,
        "metrics": metrics,
        # per metric: shown in percent (answer_rank is not), and whether higher is better
        "percent": {m: in_percent(m) for m in metrics},
        "higher": {m: higher_is_better(m) for m in metrics},
        "cells": cells,
        "clusters": clusters,
    }


# Inside <script> the HTML tokenizer still reacts to "</script" and "<!--" (an unclosed
# "<!--<script" makes it swallow the next script): with <, > and & escaped as JSON \u escapes
# no markup can appear; U+2028/U+2029 are escaped for the JavaScript parsers that reject them.
_SCRIPT_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def script_json(data) -> str:
    """`data` as JSON that is inert inside <script type="application/json"> and parses back
    (JSON.parse, json.loads) to the same value; these characters only occur inside strings."""
    return json.dumps(data, allow_nan=False, default=str).translate(_SCRIPT_SAFE)


def _summary(s) -> dict:
    if not isinstance(s, dict):
        return {"n": None, "mean": {}, "ci": {}}
    return {"n": s.get("n"), "mean": s.get("mean") or {}, "ci": s.get("ci") or {}}


def _cell(v: Value) -> str:
    if v.text is not None and not (v.best or v.mark or v.stale):
        cls = {"OK": "ok", "OK (ties)": "ok", "FAIL": "fail"}.get(v.text, "")
        return f'<td class="{cls}">{html.escape(v.text)}</td>'
    # a number written as text (an AUROC to 3 decimals) keeps its marks, as in Markdown
    s = html.escape(number(v))
    s += ("*" if v.mark else "") + ("†" if v.stale else "")
    s = "<b>" + s + "</b>" if v.best else s
    if v.ci is not None:
        s += f' <span class="ci">{interval(v)}</span>'
    return f'<td class="num">{s}</td>'


def table_html(t: Table) -> str:
    """A static rendering of a paper table (grouped headers, best bold, notes below); a table
    without a row is its title and notes."""
    out = [f"<h3>{html.escape(t.title)}</h3>"]
    if t.rows or t.published:
        out += [_table_body(t)]
    if t.notes:
        out.append('<p class="legend">' + "<br>".join(html.escape(n) for n in t.notes) + "</p>")
    return "\n".join(out)


def _table_body(t: Table) -> str:
    out = ['<div class="scroll"><table class="paper">', "<thead>"]
    spans = [span for _, span in t.groups]
    for attrs, heads in (("", [g for g, _ in t.groups]), (' class="note"', t.group_notes)):
        if t.groups and heads:  # the column groups, then their notes
            cells = "".join(
                f'<th colspan="{s}">{html.escape(h)}</th>' for h, s in zip(heads, spans)
            )
            out.append(f"<tr{attrs}><th></th>{cells}</tr>")
    out.append(
        "<tr>"
        + "".join(f"<th>{html.escape(c)}</th>" for c in [t.stub, *t.columns])
        + "</tr></thead><tbody>"
    )
    for attrs, rows in (("", t.rows), (' class="published"', t.published)):
        for label, vals in rows:
            cells = "".join(_cell(v) for v in vals)
            out.append(f"<tr{attrs}><th>{html.escape(label)}</th>{cells}</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    alt = html.escape(path.stem.replace("_", " "))
    return (
        f'<figure><img alt="{alt}" src="data:image/png;base64,{data}"><figcaption>{alt}'
        f"</figcaption></figure>"
    )


# The page's style and script live beside this module as plain CSS and JS files.
_STYLE = "\n" + Path(__file__).with_name("page.css").read_text(encoding="utf-8")
_SCRIPT = "\n" + Path(__file__).with_name("page.js").read_text(encoding="utf-8")


def _generated() -> str:
    """' · generated <date>' from SOURCE_DATE_EPOCH (the reproducible-builds convention) when
    it is set, else nothing: the same results give the same page."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if not epoch.isdigit():
        return ""
    when = datetime.fromtimestamp(int(epoch), timezone.utc).isoformat(timespec="seconds")
    return f" · generated {when}"


def page(board: Board, corpora: list[str], tables: list[Table], plots: list[Path]) -> str:
    """The whole leaderboard as one HTML document."""
    data = _data(board, corpora)
    payload = script_json(data)
    plain = [m for m, percent in data["percent"].items() if not percent]
    stamp = _generated()
    n_cells = sum(len(board.cells[c]) for c in corpora)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Retrieval leaderboard</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Retrieval leaderboard</h1>",
        f'<p class="meta">{n_cells} cell{"s" * (n_cells != 1)} on {len(corpora)} '
        f"corp{'us' if len(corpora) == 1 else 'ora'}, read from "
        f"{html.escape(str(board.results_dir))}/{stamp} · numbers in %"
        + (f" ({html.escape(', '.join(plain))}: as they are, not in %)" if plain else "")
        + "</p>",
    ]
    if board.problems:
        parts.append(
            '<div class="problems"><b>Problems found while reading results/</b><ul>'
            + "".join(f"<li>{html.escape(p)}</li>" for p in board.problems)
            + "</ul></div>"
        )
    parts += [
        "<h2>All cells</h2>",
        '<p><label>corpus <select id="corpus"></select></label>'
        '<label>stratum <select id="stratum"></select></label>'
        '<span id="count" class="meta"></span></p>',
        '<div class="scroll"><table id="board"><thead><tr></tr></thead><tbody></tbody>'
        "</table></div>",
        '<p class="legend">Click a column header to sort (again to reverse). Bold: best of its '
        "column. [low, high]: 95 % bootstrap interval of the mean. <i>not computed</i>: the cell "
        "was not scored with that metric (hover for how to add it); <i>no strata</i>: the cell "
        "was scored before those strata were built; -: no query of the cell in that stratum. "
        "Provenance: the cell's config, package versions, git commit and data checksum "
        "(when it ran is in its timings.json).</p>",
        "<h2>Paper tables</h2>",
        *(table_html(t) for t in tables),
    ]
    pngs = [p for p in plots if p.suffix == ".png"]
    if pngs:
        parts += ["<h2>Plots</h2>", *(_img(p) for p in pngs)]
    parts += [
        f'<script type="application/json" id="board-data">{payload}</script>',
        f"<script>{_SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
