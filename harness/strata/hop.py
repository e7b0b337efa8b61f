"""Query strata that are properties of the benchmark (never of a retriever)."""

from __future__ import annotations

from harness.core.types import Benchmark, Query


def hop_label(query: Query) -> str:
    """Hop stratum: the number of gold groups, '5+' beyond four, '0' for a query without gold."""
    return str(query.hop) if query.hop < 5 else "5+"


def stratify(benchmark: Benchmark) -> dict[str, list[str]]:
    """Stratification name -> label of each query, in benchmark query order."""
    return {"hop": [hop_label(q) for q in benchmark.queries]}
