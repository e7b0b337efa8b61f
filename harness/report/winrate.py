"""Bootstrap win rates of retriever A over B across semantic clusters
(docs/stratification.md#win-rates), for `python -m harness.compare --winrate A B`: a Markdown
table and a bar plot."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.cell.result import Evaluation
from harness.core.errors import HarnessError
from harness.core.tables import markdown
from harness.report.terminal import queries
from harness.strata.semantic import NA
from metrics.strata_stats import AGGREGATES, win_rates

TITLES = {
    "overall": "overall mean",
    "macro": "macro mean",
    "median": "median cluster",
    "worst": "worst cluster",
}


def clusters_of(a: Evaluation, b: Evaluation) -> list[str | None]:
    """The cluster of every query of A, checked to be the same partition in B."""
    for cell in (a, b):
        if "cluster" not in cell.strata:
            raise HarnessError(
                f"{cell.path} has no cluster strata; build them with python -m harness.stratify "
                f"corpus={cell.corpus}, then rerun that cell"
            )
    order = {q: i for i, q in enumerate(b.query_ids)}
    for qid, lab in zip(a.query_ids, a.strata["cluster"]):
        if b.strata["cluster"][order[qid]] != lab:
            raise HarnessError(
                f"{a.path} and {b.path} were scored on different strata (query '{qid}' is in "
                f"cluster {lab} in one, {b.strata['cluster'][order[qid]]} in the other); rerun "
                f"both with the same strata file"
            )
    return [None if lab == NA else lab for lab in a.strata["cluster"]]


def compute(
    a: Evaluation, b: Evaluation, metrics: Sequence[str], *, resamples: int, seed: int
) -> dict[str, Any]:
    """metric -> aggregate -> {rate, counted}; plus the settings used."""
    clusters = clusters_of(a, b)
    semantic = a.scored.semantic or {}
    min_queries = int(semantic.get("min_queries", 5))
    order = {q: i for i, q in enumerate(b.query_ids)}
    align = [order[q] for q in a.query_ids]
    rates = {}
    for m in metrics:
        got = win_rates(
            a.values[m],
            b.values[m][align],
            clusters,
            resamples=resamples,
            seed=seed,
            min_queries=min_queries,
        )
        rates[m] = {k: {"rate": r, "counted": n} for k, (r, n) in got.items()}
    return {"resamples": resamples, "seed": seed, "min_queries": min_queries, "rates": rates}


def render(a: Evaluation, b: Evaluation, names: tuple[str, str], result: dict[str, Any]) -> str:
    lines = [
        f"# Win rate of {names[0]} over {names[1]}: {a.corpus}",
        "",
        f"Share of {result['resamples']:,} bootstrap resamples of the queries (seed "
        f"{result['seed']}) in which {names[0]} beats {names[1]} on each aggregate across "
        f"semantic clusters; ties count half. The worst cluster is taken among clusters with "
        f"at least {queries(result['min_queries'])} in the resample. 50% = no difference.",
        "",
    ]
    body = [[m, *(_rate(by[k]["rate"]) for k in AGGREGATES)] for m, by in result["rates"].items()]
    lines += markdown(["metric", *(TITLES[k] for k in AGGREGATES)], body)
    return "\n".join(lines) + "\n"


def _rate(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f}%"


def plot(result: dict[str, Any], names: tuple[str, str], corpus: str, path: Path) -> list[Path]:
    """Grouped bars (one group per metric, one bar per aggregate) with the 50% line; PNG and
    SVG. Returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    metrics = list(result["rates"])
    width = 0.8 / len(AGGREGATES)
    x = np.arange(len(metrics))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(metrics) + 2), 4.2))
    for i, agg in enumerate(AGGREGATES):
        heights = [100 * result["rates"][m][agg]["rate"] for m in metrics]
        bars = ax.bar(
            x + (i - (len(AGGREGATES) - 1) / 2) * width, heights, width, label=TITLES[agg]
        )
        ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
    ax.axhline(50, color="0.3", linestyle="--", linewidth=1)
    ax.set_xticks(x, metrics)
    ax.set_ylim(0, 112)  # room above 100 % for a full bar and its label: nothing is clipped
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel(f"win rate of {names[0]} (%)")
    ax.set_title(f"{names[0]} vs {names[1]} on {corpus}: bootstrap win rate across clusters")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=len(AGGREGATES), frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        out = path.with_suffix(suffix)
        fig.savefig(out, dpi=150, bbox_inches="tight")
        written.append(out)
    plt.close(fig)
    return written
