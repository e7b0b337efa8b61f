"""Render leaderboard Tables as Markdown, LaTeX (booktabs, ready to paste) and CSV."""

from __future__ import annotations

import csv
import io

from harness.report.leaderboard.tables import Table, Value


def _num(v: Value) -> str:
    if v.text is not None:
        return v.text
    return "-" if v.value is None else f"{v.value:.2f}"


def _md_cell(v: Value) -> str:
    s = _num(v) + ("*" if v.mark else "") + ("†" if v.stale else "")
    return f"**{s}**" if v.best else s


def _flat_columns(t: Table) -> list[str]:
    """Column names with their group as a prefix ("finance Cov@10"), for one-line headers."""
    if not t.groups:
        return list(t.columns)
    names, i = [], 0
    for g, span in t.groups:
        names += [f"{g} {c}" for c in t.columns[i : i + span]]
        i += span
    return names


def markdown(t: Table) -> str:
    """A GitHub Markdown table; column groups become name prefixes, their notes a first row."""
    cols = _flat_columns(t)
    lines = [f"### {t.title}", "", "| " + " | ".join([t.stub, *cols]) + " |"]
    first = t.rows[0][1] if t.rows else [Value() for _ in cols]
    lines.append("|---|" + "".join("---:|" if _numeric(v) else "---|" for v in first))
    if t.group_notes:
        cells = []
        for note, (_, span) in zip(t.group_notes, t.groups):
            cells += [f"*{note}*"] + [""] * (span - 1)
        lines.append("| *corpus* | " + " | ".join(cells) + " |")
    for label, vals in t.rows:
        lines.append("| " + " | ".join([_esc_md(label), *(_md_cell(v) for v in vals)]) + " |")
    for label, vals in t.published:
        lines.append("| " + " | ".join([f"*{_esc_md(label)}*", *(_num(v) for v in vals)]) + " |")
    if t.notes:
        lines += [""] + [f"{n}  " for n in t.notes]
    return "\n".join(lines) + "\n"


def _numeric(v: Value) -> bool:
    return v.text is None or v.text[:1] in "+-0123456789"


def _esc_md(s: str) -> str:
    return s.replace("|", "\\|")


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
}


def tex_escape(s: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in s)


def _tex_cell(v: Value) -> str:
    s = tex_escape(_num(v))
    sup = ("*" if v.mark else "") + (r"\dagger" if v.stale else "")
    if sup:
        s += f"$^{{{sup}}}$"
    return rf"\textbf{{{s}}}" if v.best else s


def latex(t: Table) -> str:
    """A booktabs table environment: \\toprule, grouped \\multicolumn headers with
    \\cmidrule, \\midrule before the published rows, notes as a footnote-size caption tail."""
    first = t.rows[0][1] if t.rows else [Value() for _ in t.columns]
    kinds = ["r" if _numeric(v) else "l" for v in first]
    align = "l" + "".join(kinds)
    key = t.key.replace("_", "-")
    wide = True  # shrink-only, so harmless for narrow tables; a group note can widen any table
    out = [
        r"% \usepackage{booktabs}" + (r", \usepackage{graphicx}" if wide else ""),
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\caption{{{tex_escape(t.title)}}}",
        rf"\label{{tab:{key}}}",
        # wide tables shrink to the line width (never grow): graphicx's \resizebox with \width
        *([r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%"] if wide else []),
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
    ]
    if t.groups:
        heads, rules, col = [], [], 2
        for g, span in t.groups:
            heads.append(rf"\multicolumn{{{span}}}{{c}}{{{tex_escape(g)}}}")
            rules.append(rf"\cmidrule(lr){{{col}-{col + span - 1}}}")
            col += span
        out.append(" & " + " & ".join(heads) + r" \\")
        if t.group_notes:
            notes = [
                rf"\multicolumn{{{span}}}{{c}}{{\footnotesize {tex_escape(note)}}}"
                for note, (_, span) in zip(t.group_notes, t.groups)
            ]
            out.append(" & " + " & ".join(notes) + r" \\")
        out.append(" ".join(rules))
    out.append(" & ".join(tex_escape(c) for c in [t.stub, *t.columns]) + r" \\")
    out.append(r"\midrule")
    for label, vals in t.rows:
        out.append(" & ".join([tex_escape(label), *(_tex_cell(v) for v in vals)]) + r" \\")
    if t.published:
        out.append(r"\midrule")
        for label, vals in t.published:
            cells = [rf"\textit{{{tex_escape(label)}}}", *(tex_escape(_num(v)) for v in vals)]
            out.append(" & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}" + ("}" if wide else "")]
    if t.notes:
        out.append(rf"\par\smallskip{{\footnotesize {tex_escape('; '.join(t.notes))}.}}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def csv_text(t: Table) -> str:
    """The table as CSV: one header line (group and column joined), full-precision numbers,
    best / significance / staleness as separate flag columns would clutter it, so they are
    left to leaderboard.csv (the long format)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = _flat_columns(t)
    w.writerow([t.stub.lower(), *cols])
    for label, vals in t.rows:
        w.writerow([label, *(_csv(v) for v in vals)])
    for label, vals in t.published:
        w.writerow([label, *(_csv(v) for v in vals)])
    return buf.getvalue()


def _csv(v: Value) -> str:
    if v.text is not None:
        return v.text
    return "" if v.value is None else repr(round(v.value, 6))
