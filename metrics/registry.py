"""Metric names such as "coverage@10" parsed into metric objects; the registry lists valid names."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.errors import ConfigError, did_you_mean
from harness.types import Query
from metrics import group

# A per-query metric: (query, ranked chunk ids, k) -> float (NaN when undefined).
MetricFn = Callable[[Query, Sequence[str], int], float]


@dataclass(frozen=True)
class Family:
    """A metric family: one function evaluated at any cut-off K."""

    name: str
    fn: MetricFn
    description: str
    higher_is_better: bool = True


@dataclass(frozen=True)
class Metric:
    """A family at a cut-off: hashable, printable as 'name@k'."""

    family: Family
    k: int

    @property
    def name(self) -> str:
        return f"{self.family.name}@{self.k}"

    def __call__(self, query: Query, ranked: Sequence[str]) -> float:
        return self.family.fn(query, ranked, self.k)

    def __str__(self) -> str:
        return self.name


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("coverage", lambda q, r, k: group.coverage(q.groups, r, k), "share of groups hit"),
        Family("perfrecall", lambda q, r, k: group.perfrecall(q.groups, r, k), "all groups hit"),
        Family("ndcg", lambda q, r, k: group.ndcg(q.groups, r, k), "group NDCG"),
        Family("mrr", lambda q, r, k: group.mrr(q.groups, r, k), "mean over groups of 1/rank"),
    )
}

_NAME = re.compile(r"^([a-z_]+)@(\d+)$")


def parse_metric(text: str) -> Metric:
    """Parse 'family@k' into a Metric, with a did-you-mean for unknown families."""
    m = _NAME.match(text.strip().lower())
    if not m:
        raise ConfigError(f"metric '{text}' is not of the form name@k (e.g. coverage@10)")
    family, k = m.group(1), int(m.group(2))
    if family not in FAMILIES:
        raise ConfigError(
            f"unknown metric '{family}'{did_you_mean(family, FAMILIES)}; "
            f"valid: {', '.join(FAMILIES)}"
        )
    if k <= 0:
        raise ConfigError(f"metric '{text}': K must be a positive integer")
    return Metric(FAMILIES[family], k)


def metrics_for(names: Sequence[str], ks: Sequence[int], depth: int) -> list[Metric]:
    """Every family in `names` at every K in `ks`, ordered by K then family; checks K and depth."""
    if not ks:
        raise ConfigError("metrics.k is empty; give at least one cut-off, e.g. metrics.k=[10]")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ConfigError(f"metrics.k must hold positive integers, got {k!r}")
    if depth < max(ks):
        raise ConfigError(
            f"retrieval.depth={depth} is smaller than the largest K ({max(ks)}); "
            f"raise retrieval.depth or drop that K"
        )
    if not names:
        raise ConfigError("metrics.names is empty; e.g. metrics.names=[coverage,ndcg]")
    return [parse_metric(f"{n}@{k}") for k in sorted(set(ks)) for n in names]
