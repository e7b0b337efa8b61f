"""Render leaderboard Tables as Markdown, LaTeX (booktabs, ready to paste) and CSV."""

from __future__ import annotations

import csv
import io

from harness.core import tables
from harness.report.leaderboard.tables import Table, Value


def number(v: Value) -> str:
    """A table value as text: its own text, else 2 decimals, '-' for none."""
    if v.text is not None:
        return v.text
    return "-" if v.value is None else tables.fixed(v.value)


CI_NOTE = "[low, high]: 95 % bootstrap interval of the mean over queries"
CI_NOTE_TEX = "low–high under a value: its 95 % bootstrap interval over queries"


def interval(v: Value, between: str = ", ") -> str:
    """A value's bootstrap interval to 1 decimal, '[low, high]' (with another `between`,
    'low<between>high'); '' without one."""
    if v.ci is None:
        return ""
    low, high = (tables.fixed(x, 1) for x in v.ci)
    return f"[{low}, {high}]" if between == ", " else f"{low}{between}{high}"


def _md_cell(v: Value, ci: bool = False) -> str:
    s = number(v) + ("*" if v.mark else "") + ("†" if v.stale else "")
    s = f"**{s}**" if v.best else s
    return f"{s} {interval(v)}" if ci and v.ci is not None else s


def _has_ci(t: Table) -> bool:
    return any(v.ci is not None for _, vals in t.rows for v in vals)


def _flat_columns(t: Table) -> list[str]:
    """Column names with their group as a prefix ("finance Cov@10"), for one-line headers."""
    if not t.groups:
        return list(t.columns)
    names, i = [], 0
    for g, span in t.groups:
        names += [f"{g} {c}" for c in t.columns[i : i + span]]
        i += span
    return names


def markdown(t: Table, ci: bool = False) -> str:
    """A GitHub Markdown table; column groups become name prefixes, their notes a first row;
    with `ci` each mean is followed by its 95 % interval."""
    ci = ci and _has_ci(t)
    cols = _flat_columns(t)
    first = t.rows[0][1] if t.rows else [Value() for _ in cols]
    align = ["left", *("right" if _numeric(v) else "left" for v in first)]
    body = []
    if t.group_notes:
        cells = []
        for note, (_, span) in zip(t.group_notes, t.groups):
            cells += [f"*{note}*"] + [""] * (span - 1)
        body.append(["*corpus*", *cells])
    body += [[label, *(_md_cell(v, ci) for v in vals)] for label, vals in t.rows]
    body += [[f"*{label}*", *(number(v) for v in vals)] for label, vals in t.published]
    lines = [f"### {t.title}"]
    if t.rows or t.published:  # a table without a row is its title and notes
        lines += ["", *tables.markdown([t.stub, *cols], body, align=align)]
    notes = [*t.notes, *([CI_NOTE] if ci else [])]
    if notes:
        lines += [""] + [f"{n}  " for n in notes]
    return "\n".join(lines) + "\n"


def _numeric(v: Value) -> bool:
    return v.text is None or v.text[:1] in "+-0123456789"


_TEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$",
    "±": r"$\pm$",
    "α": r"$\alpha$",
    "†": r"$^\dagger$",
    "·": r"\textperiodcentered{}",
    "…": r"\ldots{}",
    "–": "--",
}


def tex_escape(s: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in s)


def _tex_cell(v: Value) -> str:
    s = tex_escape(number(v))
    sup = ("*" if v.mark else "") + (r"\dagger" if v.stale else "")
    if sup:
        s += f"$^{{{sup}}}$"
    return rf"\textbf{{{s}}}" if v.best else s


ONE_COLUMN_CHARS = 46  # about what one column of a two-column page holds at 9 pt


def latex(t: Table, ci: bool = False) -> str:
    """booktabs tables ready to paste: \\toprule, grouped \\multicolumn headers with
    \\cmidrule, \\midrule before the published rows, notes as a footnote-size tail. Never
    shrunk below 7 pt: a wide table spans both columns (table*) at footnote size (8 pt; 7 pt
    with intervals), and a table with `parts` is printed as one table per part. With `ci`, a
    row of 95 % intervals in script size (7 pt) follows each row of means."""
    ci = ci and _has_ci(t)
    if not t.parts:
        return _latex_one(t, ci)
    parts = t.parts
    if ci:  # intervals double a column's width: one table per metric
        width = len(t.columns) // max(len(t.groups), 1)
        parts = [(_bare(t.columns[p]), [p]) for p in range(width)]
    return "\n".join(_latex_one(p, ci) for p in _split(t, parts))


def _bare(column: str) -> str:
    return column.split("@")[0]


def _split(t: Table, parts: list[tuple[str, list[int]]]) -> list[Table]:
    """One Table per part: the part's column positions within every group. Headers drop
    their '@K' (the title carries it), which keeps the columns narrow."""
    out = []
    width = len(t.columns) // max(len(t.groups), 1)
    for i, (suffix, positions) in enumerate(parts):
        keep = [g * width + p for g in range(len(t.groups) or 1) for p in positions]
        out.append(
            Table(
                key=f"{t.key}-{'abcdefgh'[i]}",
                title=f"{t.title}: {suffix}",
                stub=t.stub,
                columns=[_bare(t.columns[j]) for j in keep],
                rows=[(label, [vals[j] for j in keep]) for label, vals in t.rows],
                groups=[(g, len(positions)) for g, _ in t.groups],
                group_notes=list(t.group_notes),
                published=[(label, [vals[j] for j in keep]) for label, vals in t.published],
                notes=list(t.notes),
            )
        )
    return out


def _width(t: Table, ci: bool) -> int:
    """The table's width in characters, estimated from its widest entries (a column is as
    wide as its header, its values, its interval and its share of the group header)."""
    rows = [*t.rows, *t.published]
    stub = max([len(t.stub), *(len(label) for label, _ in rows)])
    widths = []
    for j, head in enumerate(t.columns):
        cells = [len(number(vals[j])) + 1 for _, vals in rows if j < len(vals)]
        if ci:
            cells += [len(interval(vals[j])) * 4 // 5 for _, vals in t.rows if j < len(vals)]
        widths.append(max([len(head), *cells]))
    col = 0
    for i, (g, span) in enumerate(t.groups):
        note = t.group_notes[i] if i < len(t.group_notes) else ""
        need = max(len(g), len(note) * 4 // 5)  # notes are set smaller
        have = sum(widths[col : col + span]) + 2 * (span - 1)
        if need > have:
            for j in range(col, col + span):
                widths[j] += -(-(need - have) // span)
        col += span
    return stub + sum(widths) + 2 * len(widths)


def _latex_one(t: Table, ci: bool) -> str:
    first = t.rows[0][1] if t.rows else [Value() for _ in t.columns]
    kinds = ["r" if _numeric(v) else "l" for v in first]
    align = "l" + "".join(kinds)
    key = t.key.replace("_", "-")
    wide = _width(t, ci) > ONE_COLUMN_CHARS
    env = "table*" if wide else "table"
    out = [
        r"% \usepackage{booktabs}"
        + (" -- spans both columns of a two-column page" if wide else ""),
        rf"\begin{{{env}}}[t]",
        r"\centering",
        (r"\scriptsize" if ci else r"\footnotesize") if wide else r"\small",  # >= 7 pt
        r"\setlength{\tabcolsep}{3pt}" if wide else "",
        rf"\caption{{{tex_escape(t.title)}}}",
        rf"\label{{tab:{key}}}",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
    ]
    out = [line for line in out if line]
    if t.groups:
        heads, rules, col = [], [], 2
        for g, span in t.groups:
            heads.append(rf"\multicolumn{{{span}}}{{c}}{{{tex_escape(g)}}}")
            rules.append(rf"\cmidrule(lr){{{col}-{col + span - 1}}}")
            col += span
        out.append(" & " + " & ".join(heads) + r" \\")
        if t.group_notes:
            notes = [
                rf"\multicolumn{{{span}}}{{c}}{{\scriptsize {tex_escape(note)}}}"
                for note, (_, span) in zip(t.group_notes, t.groups)
            ]
            out.append(" & " + " & ".join(notes) + r" \\")
        out.append(" ".join(rules))
    out.append(" & ".join(tex_escape(c) for c in [t.stub, *t.columns]) + r" \\")
    out.append(r"\midrule")
    for label, vals in t.rows:
        out.append(" & ".join([tex_escape(label), *(_tex_cell(v) for v in vals)]) + r" \\")
        if ci:
            cells = [rf"{{\scriptsize {interval(v, '--')}}}" if v.ci else "" for v in vals]
            out.append(" & ".join(["", *cells]) + r" \\[2pt]")
    if t.published:
        out.append(r"\midrule")
        for label, vals in t.published:
            cells = [rf"\textit{{{tex_escape(label)}}}", *(tex_escape(number(v)) for v in vals)]
            out.append(" & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    notes = [*t.notes, *([CI_NOTE_TEX] if ci else [])]
    if notes:
        out.append(
            rf"\par\smallskip\parbox{{\linewidth}}{{\footnotesize {tex_escape('; '.join(notes))}.}}"
        )
    out.append(rf"\end{{{env}}}")
    return "\n".join(out) + "\n"


def csv_text(t: Table) -> str:
    """The table as CSV: one header line (group and column joined), full-precision numbers,
    best / significance / staleness as separate flag columns would clutter it, so they are
    left to leaderboard.csv (the long format)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = _flat_columns(t)
    w.writerow([t.stub.lower(), *cols])
    for label, vals in [*t.rows, *t.published]:
        w.writerow([label, *(_csv(v) for v in vals)])
    return buf.getvalue()


def _csv(v: Value) -> str:
    if v.text is not None:
        return v.text
    return "" if v.value is None else repr(round(v.value, 6))
