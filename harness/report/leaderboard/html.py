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
    s = html.escape(v.text) if v.text is not None else "-" if v.value is None else f"{v.value:.2f}"
    s += ("*" if v.mark else "") + ("†" if v.stale else "")
    s = "<b>" + s + "</b>" if v.best else s
    if v.ci is not None:
        s += f' <span class="ci">[{v.ci[0]:.1f}, {v.ci[1]:.1f}]</span>'
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


_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
h3{font-size:15px} .meta{color:#666;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{padding:4px 8px;border-bottom:1px solid #eee;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
#board th.sortable{cursor:pointer;user-select:none;white-space:nowrap}
#board th.sortable:hover{background:#f2f5fa}
#board th[aria-sort=ascending]::after{content:" \\25B2"} #board th[aria-sort=descending]::after{content:" \\25BC"}
tr.published th,tr.published td{color:#666;font-style:italic}
tr.note th{font-weight:normal;color:#666;font-size:12px}
td.ok{color:#1a7f37;font-weight:bold} td.fail{color:#cf222e;font-weight:bold}
.problems{background:#fff8e1;border:1px solid #f0c36d;padding:8px 12px;font-size:13px}
.legend{color:#555;font-size:12px} label{margin-right:16px;font-size:14px}
figure{display:inline-block;margin:8px;vertical-align:top} img{max-width:100%;width:760px;border:1px solid #eee}
.scroll{overflow-x:auto;max-width:100%;border:1px solid #eee}
.ci{color:#777;font-size:11px;white-space:nowrap} .nc{color:#999;font-size:11px;font-style:italic}
td.num{white-space:nowrap} tbody th{white-space:nowrap}
figcaption{font-size:12px;color:#666} details pre{font-size:11px;max-height:320px;overflow:auto;background:#f7f7f7;padding:6px}
"""

_SCRIPT = r"""
(function () {
  const data = JSON.parse(document.getElementById('board-data').textContent);
  const corpusSel = document.getElementById('corpus');
  const stratumSel = document.getElementById('stratum');
  const table = document.getElementById('board');
  let sortKey = null, sortDir = -1;

  // own keys only: a stored name such as "constructor" must not find Object.prototype's
  function get(o, k) { return (o && Object.prototype.hasOwnProperty.call(o, k)) ? o[k] : undefined; }
  // a metric's value as shown: in percent for a share, as it is otherwise (answer_rank),
  // rounded as the Markdown and LaTeX tables round it. Both round the exact binary value;
  // on an exact tie (6.25 to one place) toFixed goes away from zero, Python's format to
  // even: the tie is read off the exact decimal expansion (toFixed(100) is exact)
  function shown(m, x, digits) {
    if (x === null || x === undefined) return '-';
    const v = (get(data.percent, m) === false ? 1 : 100) * x;
    const exact = v.toFixed(100), cut = exact.indexOf('.') + 1 + digits;
    if (/^50*$/.test(exact.slice(cut))) {
      const kept = exact.slice(0, digits ? cut : cut - 1);
      if (Number(kept.slice(-1)) % 2 === 0) return kept;
    }
    return v.toFixed(digits);
  }
  function hasKind(cell, stratum) {
    if (stratum === 'overall') return true;
    const kind = stratum.split('=')[0] + '=';
    return Object.keys(cell.strata).some(s => s.startsWith(kind));
  }
  function cellsOf(corpus) { return data.cells.filter(c => c.corpus === corpus); }
  function strataOf(corpus) {
    const seen = [];
    cellsOf(corpus).forEach(c => Object.keys(c.strata).forEach(s => {
      if (!seen.includes(s)) seen.push(s);
    }));
    return seen;
  }
  function option(value, text) {
    const o = document.createElement('option'); o.value = value; o.textContent = text; return o;
  }
  function fillStrata() {
    const keep = stratumSel.value;
    stratumSel.replaceChildren();
    const labels = get(data.clusters, corpusSel.value) || {};
    strataOf(corpusSel.value).forEach(s => {
      const id = s.startsWith('cluster=') ? s.slice(8) : null;
      const text = (id !== null && get(labels, id)) ? s + ' \u00b7 ' + get(labels, id) : s;
      stratumSel.appendChild(option(s, text));
    });
    if (strataOf(corpusSel.value).includes(keep)) stratumSel.value = keep;
  }
  function metricsOf(corpus) {
    return data.metrics.filter(m => cellsOf(corpus).some(c => get(c.strata.overall.mean, m) !== undefined));
  }
  function render() {
    const corpus = corpusSel.value, stratum = stratumSel.value;
    const metrics = metricsOf(corpus);
    const cols = ['retriever', 'n'].concat(metrics);
    const head = table.tHead.rows[0];
    head.replaceChildren();
    cols.forEach(k => {
      const th = document.createElement('th');
      th.textContent = k; th.className = 'sortable'; th.dataset.key = k;
      if (k === sortKey) th.setAttribute('aria-sort', sortDir > 0 ? 'ascending' : 'descending');
      th.addEventListener('click', () => {
        sortDir = (sortKey === k) ? -sortDir : (k === 'retriever' ? 1 : -1);
        sortKey = k; render();
      });
      head.appendChild(th);
    });
    const th2 = document.createElement('th'); th2.textContent = 'provenance'; head.appendChild(th2);
    let rows = cellsOf(corpus).map(c => ({cell: c, s: get(c.strata, stratum) || {n: null, mean: {}}}));
    const best = Object.create(null);  // a metric named __proto__ stays a plain key
    metrics.forEach(m => {
      const vals = rows.filter(r => !r.cell.stale).map(r => get(r.s.mean, m)).filter(v => v !== null && v !== undefined);
      const pick = get(data.higher, m) === false ? Math.min : Math.max;  // outdated@K, answer_rank
      best[m] = vals.length ? pick(...vals) : null;
    });
    if (sortKey) {
      const val = r => sortKey === 'retriever' ? r.cell.label.toLowerCase()
        : sortKey === 'n' ? r.s.n : get(r.s.mean, sortKey);
      rows.sort((a, b) => {
        const x = val(a), y = val(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * sortDir;
      });
    }
    const body = table.tBodies[0];
    body.replaceChildren();
    rows.forEach(r => {
      const tr = document.createElement('tr');
      tr.dataset.retriever = r.cell.retriever;
      const name = document.createElement('th');
      name.textContent = r.cell.label + (r.cell.stale ? ' \u2020' : '');
      tr.appendChild(name);
      const n = document.createElement('td'); n.className = 'num';
      n.textContent = (r.s.n === null || r.s.n === undefined) ? '-' : r.s.n; tr.appendChild(n);
      metrics.forEach(m => {
        const td = document.createElement('td'); td.className = 'num';
        const v = get(r.s.mean, m);
        if (!r.cell.computed.includes(m)) {
          td.textContent = 'not computed'; td.className = 'nc';
          td.title = 'this cell was not scored with ' + m + '; python -m harness with ' +
            'metrics.names=[' + m + '] scores its stored ranked list';
        } else if (!hasKind(r.cell, stratum)) {
          td.textContent = 'no strata'; td.className = 'nc';
          td.title = 'this cell has no ' + stratum.split('=')[0] + ' strata: it was scored ' +
            'before they were built; rerun it (its stored ranked list is rescored, no retrieval)';
        } else if (r.s.n === null || r.s.n === undefined) {
          td.textContent = '-'; td.title = 'no query of this cell is in stratum ' + stratum;
        } else if (v === null || v === undefined) {
          td.textContent = '-'; td.title = m + ' is undefined for every query of this stratum';
        } else {
          td.textContent = shown(m, v, 2);
          const ci = get(r.s.ci, m);
          if (ci && ci[0] !== null) {
            const span = document.createElement('span'); span.className = 'ci';
            span.textContent = ' [' + shown(m, ci[0], 1) + ', ' + shown(m, ci[1], 1) + ']';
            td.appendChild(span);
          }
        }
        if (v !== null && v !== undefined && best[m] !== null && Math.abs(v - best[m]) < 1e-12 && !r.cell.stale) {
          td.style.fontWeight = 'bold';
        }
        tr.appendChild(td);
      });
      const prov = document.createElement('td');
      const det = document.createElement('details');
      const sum = document.createElement('summary');
      const p = r.cell.provenance;
      sum.textContent = 'provenance' + (p.git && p.git.commit ? ' · ' + String(p.git.commit).slice(0, 8) : '');
      const pre = document.createElement('pre');
      pre.textContent = JSON.stringify(p, null, 2);
      det.appendChild(sum); det.appendChild(pre); prov.appendChild(det); tr.appendChild(prov);
      body.appendChild(tr);
    });
    document.getElementById('count').textContent =
      rows.length + ' retriever' + (rows.length === 1 ? '' : 's') + ' on ' + corpus + ', stratum ' + stratum;
  }
  data.corpora.forEach(c => corpusSel.appendChild(option(c, c)));
  corpusSel.addEventListener('change', () => { fillStrata(); render(); });
  stratumSel.addEventListener('change', render);
  fillStrata();
  render();
})();
"""


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
