"""Render aggregated results as a plain-text table for the terminal (percentages, 2 decimals)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


WIDTH = 120  # wider tables are printed transposed: one row per metric


def table(aggregated: Mapping[str, Any], metric_names: Sequence[str]) -> str:
    """One row per stratum (overall, then each stratification's labels), one column per
    metric; transposed (a row per metric) when that would be wider than a terminal."""
    rows: list[tuple[str, Mapping[str, Any]]] = [("overall", aggregated["overall"])]
    for strat, by_label in aggregated.items():
        if strat != "overall":
            rows += [(f"{strat}={label}", summary) for label, summary in by_label.items()]
    header = ["stratum", "n", *metric_names]
    body = [[name, str(s["n"]), *(_pct(s["mean"][m]) for m in metric_names)] for name, s in rows]
    lines = _grid(header, body)
    if len(lines[0]) > WIDTH:
        header = ["metric", *(name for name, _ in rows)]
        body = [["n", *(str(s["n"]) for _, s in rows)]]
        body += [[m, *(_pct(s["mean"][m]) for _, s in rows)] for m in metric_names]
        lines = _grid(header, body)
    excluded = max(aggregated["overall"]["excluded"].values(), default=0)
    if excluded:
        noun, verb = ("query", "is") if excluded == 1 else ("queries", "are")
        lines.append(
            f"({excluded} {noun} without gold {verb} left out of the means; NaN in per_query.csv)"
        )
    return "\n".join(lines)


def _grid(header: list[str], body: list[list[str]]) -> list[str]:
    """Aligned text rows: the first column left-aligned, the rest right-aligned."""
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:]))
        return "  ".join([first, *rest])

    return [fmt(header), "  ".join("-" * w for w in widths), *(fmt(r) for r in body)]
