"""Query strata that are properties of the benchmark (never of a retriever)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.types import Benchmark, Query
from harness.strata.fields import answerable_labels, field_strata, grounding_labels


def hop_label(query: Query) -> str:
    """Hop stratum: the number of gold groups, '5+' beyond four, '0' for a query without gold."""
    return str(query.hop) if query.hop < 5 else "5+"


def group_stratum(benchmark: Benchmark) -> str:
    """What the number of gold groups is called: `hop` (RedQA: a group per fact to find), or
    `relevant` where every relevant chunk is its own group (BEIR, ir_datasets, a Hub
    dataset in the BEIR layout)."""
    return "relevant" if benchmark.one_chunk_groups else "hop"


def stratify(benchmark: Benchmark, fields: Sequence[str] = ()) -> dict[str, list[str]]:
    """Stratification name -> label of each query, in benchmark query order: the number of
    gold groups always (`hop`, or `relevant` for BEIR-shaped data: group_stratum);
    `answerable` when some query is not fully answerable; `grounding` when some query has
    relevance labels; then one per query field in `fields` (harness.strata.fields; its
    tertile cuts come from field_cuts). ConfigError for a bad field name."""
    out = {group_stratum(benchmark): [hop_label(q) for q in benchmark.queries]}
    answerable = answerable_labels(benchmark)
    if answerable is not None:
        out["answerable"] = answerable
    grounding = grounding_labels(benchmark)
    if grounding is not None:
        out["grounding"] = grounding
    out.update(field_strata(benchmark, fields).labels)
    return out
