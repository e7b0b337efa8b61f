"""Query strata that are properties of the benchmark (never of a retriever)."""

from __future__ import annotations

from harness.types import Benchmark, Query


def hop_label(query: Query) -> str:
    """Hop stratum: the number of gold groups, '5+' beyond four, '0' for a query without gold."""
    return str(query.hop) if query.hop < 5 else "5+"


def stratify(benchmark: Benchmark) -> dict[str, list[str]]:
    """Stratification name -> label of each query, in benchmark query order."""
    return {"hop": [hop_label(q) for q in benchmark.queries]}


_ORDERED = ("low", "mid", "high")  # tertile strata


def label_order(labels: list[str]) -> list[str]:
    """Distinct labels in reading order: numbers ascending, then low / mid / high, then the
    rest alphabetically (so `n/a` comes last)."""

    def key(label: str) -> tuple[int, float, str]:
        head = label.rstrip("+")
        if head.isdigit():
            return (0, float(head), label)
        if label in _ORDERED:
            return (1, float(_ORDERED.index(label)), label)
        return (2, 0.0, label)

    return sorted(set(labels), key=key)
