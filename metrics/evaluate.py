"""Score a run against a benchmark's gold, per query, and aggregate overall and per stratum."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.core.errors import HarnessError
from harness.core.labels import label_order
from harness.core.run import Run
from harness.core.types import Benchmark
from metrics import answers, group, standard, stats
from metrics.registry import MODEL_KINDS, Metric, aggregate_of

if TYPE_CHECKING:  # metrics.ties is imported when tie ranges are asked for
    from metrics.ties import Tied


@dataclass(frozen=True)
class BootstrapSpec:
    """How to bootstrap the CI of each mean: resamples, confidence level, seed."""

    samples: int = 1000
    confidence: float = 0.95
    seed: int = 0


def per_query(
    benchmark: Benchmark,
    run: Run,
    metrics: Sequence[Metric],
    given: Mapping[str, np.ndarray] | None = None,
    *,
    no_relevant: str = "skip",
) -> dict[str, np.ndarray]:
    """Metric name -> values in benchmark query order.

    A query the run has no ranking for scores as an empty list (0, as `trec_eval -c`);
    a query without gold is NaN for every metric that needs gold. Each binary standard
    metric counts as relevant the grades >= its own level (`Metric.level`); the corpus
    families read the chunks' text and dates (metrics.answers). Model metrics (ΔSePer, end-to-end
    RAG) come computed in `given` (their model section), one per query.
    A judged query without a relevant document (without a positive grade, for nDCG) is NaN
    for the standard metrics, or 0 with no_relevant="zero" (trec_eval's and ir_measures'
    rule); a query nobody judged stays NaN either way.
    """
    queries = benchmark.queries
    grouped = [m for m in metrics if m.family.kind == "group"]
    values: dict[str, np.ndarray] = {}
    if grouped:
        computed = group.evaluate(
            [q.groups for q in queries],
            [run[q.query_id].ids for q in queries],
            [(m.family.name, m.k) for m in grouped],
        )
        values.update({m.name: np.asarray(computed[(m.family.name, m.k)]) for m in grouped})
    batch = [m for m in metrics if m.family.kind == "standard"]
    if any(m.family.name == "err" for m in batch):
        _check_err_grades(benchmark)
    if batch:
        rankings = [run[q.query_id] for q in queries]
        _check_codes(benchmark, rankings)
        judged = benchmark.derived.get("standard.judged")
        if judged is None:  # encoded once per benchmark: every run scored on it reuses it
            judged = standard.prepare([q.judgments for q in queries], benchmark.vocab)
            benchmark.derived["standard.judged"] = judged
        for level in sorted({m.level for m in batch}):
            at_level = [m for m in batch if m.level == level]
            computed = standard.evaluate(
                rankings, judged, [(m.family.name, m.at) for m in at_level], level=level
            )
            values.update({m.name: computed[(m.family.name, m.at)] for m in at_level})
        if no_relevant == "zero":
            judged_queries = np.fromiter((bool(q.judgments) for q in queries), bool, len(queries))
            for m in batch:
                v = values[m.name]
                v[np.isnan(v) & judged_queries] = 0.0
    corpus = [m for m in metrics if m.family.kind == "corpus"]
    if corpus:  # answers in the chunks' text, outdated chunks (metrics.answers)
        values.update(answers.evaluate(benchmark, [run[q.query_id] for q in queries], corpus))
    for m in metrics:
        if m.family.kind in MODEL_KINDS:
            found = (given or {}).get(m.name)
            if found is None or len(found) != len(queries):
                raise ValueError(f"{m.name} needs its values from its model section, one per query")
            values[m.name] = np.asarray(found, dtype=np.float64)
    return {m.name: values[m.name] for m in metrics}


def _check_err_grades(benchmark: Benchmark) -> None:
    """ERR's grades run 0-4 (metrics.standard.ERR_TOP_GRADE): name the first judgment past it."""
    top = standard.ERR_TOP_GRADE
    for q in benchmark.queries:
        for cid, grade in q.judgments.items():
            if grade > top:
                raise HarnessError(
                    f"{benchmark.source}: query '{q.query_id}' grades chunk '{cid}' {grade}, "
                    f"but ERR reads grades 0-{top} (gdeval's scale, as ir_measures does); map "
                    f"the grades onto 0-{top} or drop ERR"
                )


def _check_codes(benchmark: Benchmark, rankings) -> None:
    """Codes must be positions in this benchmark's corpus (-1 for an id it lacks), or matches
    would be wrong: check each ranking's first and last chunk (cheap; catches a retriever with
    another order). A lazy ranking (read from a run file) got its codes from this very
    lookup (harness.core.run.files.apply_unknown_ids), so its ids are not decoded to check them."""
    vocab = benchmark.vocab
    for r in rankings:
        if r.codes is None or getattr(r, "place", None) is not None or not len(r.ids):
            continue
        for at in (0, -1):
            if vocab.get(r.ids[at], -1) != r.codes[at]:
                raise ValueError(
                    f"ranking codes do not follow the corpus order of '{benchmark.name}' "
                    f"(id '{r.ids[at]}' has code {r.codes[at]}, its corpus position is "
                    f"{vocab.get(r.ids[at], -1)})"
                )


def summarize(
    values: Mapping[str, np.ndarray],
    mask: np.ndarray | None = None,
    ci: BootstrapSpec | None = None,
    ties: Mapping[str, Tied] | None = None,
) -> dict[str, Any]:
    """n queries, mean per metric over defined values (the total for a count, the geometric
    mean for gm_map: its family's aggregate), how many were NaN (excluded), with `ci` a
    percentile bootstrap interval of each, and with `ties` (metrics.ties) the tie-aware
    range of each mean over the same queries (docs/metrics.md#ties)."""
    n = len(next(iter(values.values()))) if mask is None else int(mask.sum())
    mean: dict[str, float | None] = {}
    excluded: dict[str, int] = {}
    interval: dict[str, list[float] | None] = {}
    for name, vals in values.items():
        v = vals if mask is None else vals[mask]
        defined = v[~np.isnan(v)]
        excluded[name] = int(len(v) - len(defined))
        kind = aggregate_of(name)
        mean[name] = stats.aggregate(defined, kind)
        if ci is not None:
            bounds = stats.bootstrap_ci(
                defined, samples=ci.samples, confidence=ci.confidence, seed=ci.seed, kind=kind
            )
            interval[name] = None if bounds is None else list(bounds)
    out: dict[str, Any] = {"n": n, "mean": mean, "excluded": excluded}
    if ci is not None:
        out["ci"] = interval
    if ties is not None:
        out.update(_tie_summary(values, mask, ties))
    return out


def _tie_summary(
    values: Mapping[str, np.ndarray], mask: np.ndarray | None, ties: Mapping[str, Tied]
) -> dict[str, Any]:
    """`ties` (mean of the per-query lowest and highest values), `ties_expected` (mean of the
    expected values; null where one is not tractable) and `tie_queries` (queries whose value
    depends on tied scores), over the queries the mean uses."""
    bounds: dict[str, list[float] | None] = {}
    expected: dict[str, float | None] = {}
    count: dict[str, int] = {}
    for name, vals in values.items():
        t = ties.get(name)
        if t is None:
            continue
        keep = ~np.isnan(vals) if mask is None else mask & ~np.isnan(vals)
        n = int(keep.sum())
        lo, hi = (math.fsum(x[keep].tolist()) / n if n else None for x in (t.low, t.high))
        bounds[name] = None if lo is None else [lo, hi]
        known = n and bool(t.known[keep].all())
        expected[name] = math.fsum(t.expected[keep].tolist()) / n if known else None
        count[name] = int(t.dependent[keep].sum())
    return {"ties": bounds, "ties_expected": expected, "tie_queries": count}


def aggregate(
    values: Mapping[str, np.ndarray],
    strata: Mapping[str, Sequence[str]],
    ci: BootstrapSpec | None = None,
    ties: Mapping[str, Tied] | None = None,
) -> dict[str, Any]:
    """Overall summary plus one summary per label of every stratification; with `ties`
    (metrics.ties.tie_bounds) each summary carries the tie-aware ranges too."""
    out: dict[str, Any] = {"overall": summarize(values, ci=ci, ties=ties)}
    for strat, labels in strata.items():
        arr = np.asarray(labels, dtype=object)
        out[strat] = {
            lab: summarize(values, arr == lab, ci, ties) for lab in label_order(list(labels))
        }
    return out


def with_ties(
    summaries: Mapping[str, Any],
    values: Mapping[str, np.ndarray],
    strata: Mapping[str, Sequence[str]],
    ties: Mapping[str, Tied],
) -> dict[str, Any]:
    """`aggregate`'s summaries with the tie-aware ranges added to each (as `aggregate(...,
    ties=ties)` gives them), so intervals computed before are not computed again."""
    out: dict[str, Any] = {"overall": {**summaries["overall"], **_tie_summary(values, None, ties)}}
    for strat, labels in strata.items():
        arr = np.asarray(labels, dtype=object)
        out[strat] = {
            lab: {**s, **_tie_summary(values, arr == lab, ties)}
            for lab, s in summaries[strat].items()
        }
    return out
