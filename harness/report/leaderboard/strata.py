"""The leaderboard's strata table per corpus: how much of each retriever's per-query variance
the hop and cluster strata explain beyond chance, what Δ and J add once hop is known, and the
population-weighted estimate with its bounds (docs/stratification.md)."""

from __future__ import annotations

from typing import Any

from harness.cell.result import Evaluation
from harness.report.leaderboard.collect import Board
from harness.report.leaderboard.tables import Options, Table, Value, metric_name, order
from harness.report.terminal import display

METRICS = ("coverage", "perfrecall")
GROUPS = (
    ("hop", 3),
    ("cluster", 4),
    ("Δ beyond hop", 2),
    ("J beyond hop", 2),
    ("population-weighted (%)", 4),
)
COLUMNS = [
    "VRR",
    "adj.",
    "p",
    "VRR",
    "chance",
    "adj.",
    "p",
    "gain",
    "p",
    "gain",
    "p",
    "plain",
    "weighted",
    "bounds",
    "uncovered",
]


def _t(x: Any, digits: int = 3) -> Value:
    return Value(text="-" if x is None else f"{x:.{digits}f}")


def _mean(metric: str, x: Any) -> Value:
    """A mean in percent, or as it is for a metric not in percent (answer_rank)."""
    return Value(text=display(metric, x))


def _row(e: Evaluation, metric: str) -> list[Value]:
    var = (e.doc.get("variance") or {}).get(metric) or {}
    by = var.get("by") or {}
    hop, cluster = by.get("hop") or {}, by.get("cluster") or {}
    beyond = var.get("beyond_hop") or {}
    d, j = beyond.get("dispersion") or {}, beyond.get("alignment") or {}
    pop = (((e.doc.get("semantic") or {}).get("population") or {}).get("estimate") or {}).get(
        metric
    ) or {}
    bounds = pop.get("bounds")
    span = "-" if not bounds else "–".join(display(metric, b) for b in bounds)
    return (
        [_t(hop.get(k)) for k in ("vrr", "vrr_adjusted", "p_value")]
        + [_t(cluster.get(k)) for k in ("vrr", "vrr_null", "vrr_adjusted", "p_value")]
        + [_t(signal.get(k)) for signal in (d, j) for k in ("gain", "p_value")]
        + [_mean(metric, pop.get("plain")), _mean(metric, pop.get("weighted"))]
        + [Value(text=span)]
        + [Value(text="-" if pop.get("uncovered") is None else f"{100 * pop['uncovered']:.1f}")]
    )


def strata_table(board: Board, corpus: str, opts: Options) -> Table | None:
    """Rows = retriever × metric (Coverage and PerfRecall at K); None when no cell of the
    corpus has semantic strata."""
    cells = board.cells[corpus]
    if not any(e.doc.get("semantic") for e in cells.values()):
        return None
    metrics = [metric_name(f, opts.k) for f in METRICS]
    rows = []
    for name in order(board, [corpus], metrics[-1]):
        for m in metrics:
            if m in (cells[name].doc.get("metrics") or []):
                rows.append((f"{board.label(name)} · {m}", _row(cells[name], m)))
    table = Table(
        key=f"strata_{corpus}",
        title=f"{corpus}: variance the strata explain beyond chance, and the "
        f"population-weighted estimate, @{opts.k}",
        stub="Retriever · metric",
        columns=list(COLUMNS),
        rows=rows,
        groups=list(GROUPS),
    )
    table.notes = [
        "VRR = 1 - σ_within² / σ_overall², strata of fewer than strata.min_queries queries "
        "pooled; chance: mean VRR over random partitions of the same sizes; adj. = (VRR - "
        "chance) / (1 - chance); p: permutation p-value",
        "beyond hop: VRR of hop × tertile cells minus VRR of hop; p from tertiles shuffled "
        "within each hop",
        "population-weighted: cluster means weighted by each cluster's share of the corpus's "
        "chunks; bounds put the clusters no query reaches (uncovered, % of chunks) at 0 and 1",
        "-: not in the cell (no semantic strata, or a cell from before these statistics: "
        "running it again rescores its stored ranked list)",
    ]
    return table
