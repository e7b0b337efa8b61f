"""Render aggregated results as a plain-text table for the terminal (shares in percent, other
metrics such as answer_rank as they are; 2 decimals; counts such as NumRet whole)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.tables import fixed, text
from harness.strata.semantic import NA  # the label of a query a stratification cannot place
from metrics.registry import FAMILIES, MODEL_KINDS, aggregate_of, in_percent

_MODEL_FAMILIES = {name for name, f in FAMILIES.items() if f.kind in MODEL_KINDS}


def scale(metric: str) -> float:
    """The display factor of `metric`'s values: 100 for a share shown in percent, 1 for a
    metric shown as it is (answer_rank, a mean rank)."""
    return 100.0 if in_percent(metric) else 1.0


def queries(n: int) -> str:
    return f"{n} query" if n == 1 else f"{n} queries"


def display(metric: str, value: float | None, signed: bool = False) -> str:
    """`metric`'s value for display with 2 decimals: in percent for a share, as it is
    otherwise, a count (a total of NumRet, NumQ, ...) whole; '-' for None or NaN."""
    if value is None or value != value:
        return "-"
    if aggregate_of(metric) == "sum":  # a total of counts (or its interval): whole
        return f"{value:{'+' if signed else ''}.0f}"
    return fixed(scale(metric) * value, signed=signed)


WIDTH = 120  # wider tables are printed transposed: one row per metric


def table(
    aggregated: Mapping[str, Any],
    metric_names: Sequence[str],
    skip: Sequence[str] = (),
    undefined: bool = False,
) -> str:
    """One row per stratum (overall, then each stratification's labels except those in
    `skip`), one column per metric; transposed (a row per metric) when that would be wider
    than a terminal. The `n/a` rows (queries a stratification cannot label, often one or
    two) are counted in a line below unless `undefined` asks for them."""
    rows: list[tuple[str, Mapping[str, Any]]] = [("overall", aggregated["overall"])]
    unlabelled: list[str] = []
    for strat, by_label in aggregated.items():
        if strat == "overall" or strat in skip:
            continue
        for label, summary in by_label.items():
            if label == NA and not undefined:
                n = summary["n"]
                unlabelled.append(f"{strat}: {n} quer{'y' if n == 1 else 'ies'}")
                continue
            rows.append((f"{strat}={label}", summary))
    header = ["stratum", "n", *metric_names]
    body = [
        [name, str(s["n"]), *(display(m, s["mean"][m]) for m in metric_names)] for name, s in rows
    ]
    lines = text(header, body)
    if len(lines[0]) > WIDTH:
        lines = _transposed(rows, metric_names)
        if len(lines[0]) > WIDTH:  # many strata (strata.fields): one table per stratification
            lines = []
            for block in _by_stratification(rows):
                lines += [*([""] if lines else []), *_transposed(block, metric_names)]
    counts = [aggregated["overall"]["excluded"].get(m, 0) for m in metric_names]
    excluded = max(counts, default=0)
    if excluded:
        noun, verb = ("query", "is") if excluded == 1 else ("queries", "are")
        some = "" if all(c == excluded for c in counts) else "up to "
        why = "without gold (or without a relevant chunk)"
        if any(m.split("@")[0] in _MODEL_FAMILIES for m in metric_names):
            why = "without a value (no gold, no reference answer, or no readable verdict)"
        elif any(m.split("@")[0] in ("answer_recall", "answer_rank") for m in metric_names):
            why = "without a value (no gold, or no answer a chunk can be searched for)"
        lines.append(
            f"({some}{excluded} {noun} {why} {verb} left out of the means; NaN in per_query.csv)"
        )
    if unlabelled:
        lines.append(
            f"(n/a, queries a stratification cannot label: {', '.join(unlabelled)}; their rows "
            "are in metrics.json, report=full prints them)"
        )
    tied = ties_line(aggregated["overall"], metric_names)
    if tied:
        lines.append(tied)
    return "\n".join(lines)


def _transposed(rows, metric_names: Sequence[str]) -> list[str]:
    """One row per metric, one column per stratum."""
    header = ["metric", *(name for name, _ in rows)]
    body = [["n", *(str(s["n"]) for _, s in rows)]]
    body += [[m, *(display(m, s["mean"][m]) for _, s in rows)] for m in metric_names]
    return text(header, body)


def _by_stratification(rows):
    """The rows split into overall + one stratification's strata, stratification by
    stratification (rows are named `<stratification>=<label>`)."""
    overall, rest = rows[0], rows[1:]
    blocks: dict[str, list] = {}
    for name, summary in rest:
        blocks.setdefault(name.split("=", 1)[0], []).append((name, summary))
    return [[overall, *block] for block in blocks.values()] or [[overall]]


def ties_line(overall: Mapping[str, Any], metric_names: Sequence[str], most: int = 4) -> str:
    """One line naming the overall means that depend on tied scores, with their ranges
    (metrics.json `ties`); empty when none does (or the cell predates tie ranges)."""
    counts = overall.get("tie_queries") or {}
    ranges = overall.get("ties") or {}
    shown = [m for m in metric_names if counts.get(m) and ranges.get(m)]
    if not shown:
        return ""
    n = max(counts[m] for m in shown)
    who = "1 query's value depends" if n == 1 else f"{n} queries' values depend"
    parts = [f"{m} {display(m, ranges[m][0])}–{display(m, ranges[m][1])}" for m in shown[:most]]
    if len(shown) > most:
        parts.append(f"+{len(shown) - most} more")
    return f"ties: {who} on tied scores; {', '.join(parts)} (metrics.json: ties)"
