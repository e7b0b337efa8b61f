"""Statistics of a metric across strata (docs/stratification.md#variance-explained-vrr):
σ_overall, pooled σ_within, the variance ratio reduction (VRR) of a stratification, aggregates
across clusters, bootstrap win rates.

Per-query values that are NaN (a query the metric is undefined for) are left out, as in
the means everywhere else. Standard deviations are population ones (ddof = 0), so that
σ_within² + the between-strata variance = σ_overall² and VRR is the share of variance the
stratification explains.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

AGGREGATES = ("overall", "macro", "median", "worst")


@dataclass(frozen=True)
class StrataSpec:
    """How strata are reported (not how they are built): the smallest stratum VRR keeps
    apart and the worst cluster is taken among, the permutations of the chance level of VRR
    and their seed, and the fewest entities a cluster needs to count in the coverage
    figures."""

    min_queries: int = 5
    permutations: int = 1000
    seed: int = 0
    min_cluster_entities: int = 2

    def as_config(self) -> dict[str, int]:
        """The settings a stored cell must share to be shown as it is."""
        return {
            "min_queries": self.min_queries,
            "permutations": self.permutations,
            "min_cluster_entities": self.min_cluster_entities,
        }


def _defined(values: Sequence[float], labels: Sequence[Hashable]):
    v = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(v)
    return v[keep], [lab for lab, k in zip(labels, keep) if k]


def sigma_overall(values: Sequence[float]) -> float:
    """The standard deviation of the defined values; 0 when they differ by rounding only
    (ten 0.1s have a float std of 1e-17, which would make VRR a ratio of rounding errors)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if not len(v):
        return math.nan
    sigma = float(v.std())
    return 0.0 if sigma <= 1e-12 * (1.0 + float(np.abs(v).max())) else sigma


def sigma_within(values: Sequence[float], labels: Sequence[Hashable]) -> float:
    """sqrt(Σ_k n_k σ_k² / n): the pooled standard deviation inside the strata."""
    v, labs = _defined(values, labels)
    if not len(v):
        return math.nan
    # strata in label order, each in query order (a stable sort): float sums must not vary;
    # one sort instead of a pass over the queries per stratum (clusters can be thousands)
    codes, _ = _encode(labs)
    order = np.argsort(codes, kind="stable")
    cuts = np.flatnonzero(np.diff(codes[order])) + 1
    total = 0.0
    for part in np.split(v[order], cuts):
        total += len(part) * float(part.var())
    return math.sqrt(total / len(v))


def vrr(values: Sequence[float], labels: Sequence[Hashable]) -> float:
    """1 - σ_within² / σ_overall²; NaN when the metric does not vary at all."""
    overall = sigma_overall(values)
    if not overall > 0:
        return math.nan
    return 1.0 - sigma_within(values, labels) ** 2 / overall**2


@dataclass(frozen=True)
class ClusterAggregates:
    overall: float  # query-weighted mean over every query with a defined value
    macro: float  # mean of the cluster means, each cluster weighted equally
    median: float  # median of the cluster means
    worst: float  # lowest cluster mean among clusters with at least min_queries queries
    worst_cluster: Hashable | None


def _codes(clusters: Sequence[Hashable | None]) -> tuple[np.ndarray, list[Hashable]]:
    """Integer code per query (-1: no cluster) and the cluster labels, sorted by str()."""
    names = sorted({c for c in clusters if c is not None}, key=str)
    pos = {c: i for i, c in enumerate(names)}
    return np.asarray([-1 if c is None else pos[c] for c in clusters], dtype=np.int64), names


def _coded_aggregates(
    v: np.ndarray, codes: np.ndarray, n_codes: int, min_queries: int
) -> tuple[float, float, float, float, int]:
    """overall, macro, median, worst and the worst cluster's code (-1: none), NaNs left out."""
    keep = ~np.isnan(v)
    v, codes = v[keep], codes[keep]
    if not len(v):
        return math.nan, math.nan, math.nan, math.nan, -1
    has = codes >= 0
    sums = np.bincount(codes[has], weights=v[has], minlength=n_codes)
    counts = np.bincount(codes[has], minlength=n_codes)
    present = counts > 0
    means = np.divide(sums, counts, out=np.full(n_codes, np.nan), where=present)
    eligible = np.flatnonzero(counts >= min_queries)
    worst = int(eligible[np.argmin(means[eligible])]) if len(eligible) else -1
    return (
        float(v.mean()),
        float(means[present].mean()) if present.any() else math.nan,
        float(np.median(means[present])) if present.any() else math.nan,
        float(means[worst]) if worst >= 0 else math.nan,
        worst,
    )


def cluster_aggregates(
    values: Sequence[float], clusters: Sequence[Hashable | None], *, min_queries: int = 5
) -> ClusterAggregates:
    """The four aggregates of docs/stratification.md#aggregates-across-clusters. Queries
    without a cluster (None) count in `overall` only. Macro and median run over every
    cluster with a query; `worst` only over clusters with at least `min_queries` queries
    (NaN when none has that many), as defined there; a tie for worst goes to the cluster
    whose label sorts first."""
    codes, names = _codes(clusters)
    v = np.asarray(values, dtype=np.float64)
    overall, macro, median, worst, at = _coded_aggregates(v, codes, len(names), min_queries)
    return ClusterAggregates(overall, macro, median, worst, names[at] if at >= 0 else None)


def win_rates(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable | None],
    *,
    resamples: int = 1000,
    seed: int = 0,
    min_queries: int = 5,
) -> dict[str, tuple[float, int]]:
    """Bootstrap win rate of A over B for each aggregate: resample queries with replacement
    (paired: the same queries for A and B), compute the aggregate for both, and count A > B
    as 1 and a tie as 1/2. Resamples where an aggregate is undefined for A or B are left out;
    returns aggregate -> (win rate, resamples counted)."""
    a_arr, b_arr = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a_arr.shape != b_arr.shape or len(a_arr) != len(clusters):
        raise ValueError("win rates need A, B and the clusters for the same queries")
    codes, names = _codes(clusters)
    rng = np.random.default_rng(seed)
    wins = np.zeros(len(AGGREGATES))
    counted = np.zeros(len(AGGREGATES), dtype=np.int64)
    n = len(a_arr)
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        x = np.asarray(_coded_aggregates(a_arr[idx], codes[idx], len(names), min_queries)[:4])
        y = np.asarray(_coded_aggregates(b_arr[idx], codes[idx], len(names), min_queries)[:4])
        ok = ~(np.isnan(x) | np.isnan(y))
        counted += ok
        wins += np.where(ok, np.where(x > y, 1.0, np.where(x == y, 0.5, 0.0)), 0.0)
    return {
        k: (float(wins[i] / counted[i]) if counted[i] else math.nan, int(counted[i]))
        for i, k in enumerate(AGGREGATES)
    }


# --- VRR against chance (docs/stratification.md#vrr-against-chance) ---------------------------

SMALL = "small"  # the stratum that pools strata with fewer than min_queries queries
_BATCH = 4_000_000  # permuted labels held at once (values x permutations), about 32 MB


def pool_small(labels: Sequence[Hashable], min_queries: int) -> list[Hashable]:
    """Labels with every stratum of fewer than `min_queries` queries renamed `small`: a
    one-query stratum is always "explained" by its own mean, so small strata are pooled
    before VRR is taken (they still get their own means everywhere else)."""
    counts = Counter(labels)
    return [SMALL if counts[lab] < min_queries else lab for lab in labels]


def _between_share(v: np.ndarray, codes: np.ndarray, n_codes: int) -> np.ndarray:
    """VRR of each row of `codes` (permutations x queries) over the values `v`: the
    between-strata sum of squares over the total one (= 1 - σ_within² / σ_overall²)."""
    centred = v - v.mean()
    total = float(centred @ centred)
    rows = codes.shape[0]
    flat = (codes + n_codes * np.arange(rows)[:, None]).ravel()
    sums = np.bincount(flat, weights=np.tile(centred, rows), minlength=rows * n_codes)
    counts = np.bincount(codes[0], minlength=n_codes).astype(np.float64)
    sums = sums.reshape(rows, n_codes)
    with np.errstate(invalid="ignore", divide="ignore"):
        between = np.where(counts > 0, sums**2 / np.where(counts > 0, counts, 1), 0.0).sum(axis=1)
    return between / total


@dataclass(frozen=True)
class ChanceTest:
    """A VRR, or a VRR gain, set against the same statistic under random partitions."""

    observed: float
    null: float | None  # mean over the permutations (None: no permutations)
    adjusted: float | None  # (observed - null) / (1 - null), or for a gain see vrr_gain
    p_value: float | None  # (1 + #{permuted >= observed}) / (1 + permutations)
    permutations: int


class Shuffles:
    """The random permutations behind a chance level: `permutations` shuffles of positions
    0..n-1, each position moved only within its block (one block of every position: plain
    permutations). Generated in batches of bounded memory from `seed`, always in the same
    batches, so every statistic computed from them is the same whichever way it is asked;
    held in memory when small, so that every metric and stratification of a cell shares one
    draw (drawing costs more than using them)."""

    KEEP = 16_000_000  # positions kept in memory (128 MB); larger draws are regenerated

    def __init__(self, n: int, permutations: int, seed: int, groups: np.ndarray | None = None):
        """`groups`: a block id per position (None: one block)."""
        self.n, self.permutations, self.seed = n, permutations, seed
        self.groups = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups)
        self.blocks = [np.flatnonzero(self.groups == g) for g in np.unique(self.groups)]
        self._kept = list(self._draw()) if n * permutations <= self.KEEP else None

    def fits(self, n: int, permutations: int, seed: int, groups: np.ndarray | None) -> bool:
        """Whether these are the shuffles asked for (same size, count, seed and blocks)."""
        same = (self.n, self.permutations, self.seed) == (n, permutations, seed)
        if groups is None:
            return same and len(self.blocks) <= 1
        return same and np.array_equal(self.groups, groups)

    def _draw(self):
        rng = np.random.default_rng(self.seed)
        batch = max(1, _BATCH // max(1, self.n))
        for start in range(0, self.permutations, batch):
            rows = min(batch, self.permutations - start)
            out = np.empty((rows, self.n), dtype=np.int64)
            for block in self.blocks:
                out[:, block] = rng.permuted(np.tile(block, (rows, 1)), axis=1)
            yield out

    def batches(self):
        return iter(self._kept) if self._kept is not None else self._draw()


def _null(v: np.ndarray, codes: np.ndarray, n_codes: int, shuffles: Shuffles, relabel=None):
    """VRR of `codes` shuffled by each permutation of `shuffles` (then mapped by `relabel`
    to the strata VRR is taken over)."""
    parts = []
    for index in shuffles.batches():
        shuffled = codes[index]
        parts.append(_between_share(v, shuffled if relabel is None else relabel(shuffled), n_codes))
    return np.concatenate(parts)


def _p_value(null: np.ndarray, observed: float) -> float:
    # the same arithmetic on a relabelled partition can differ in the last bits
    at_least = int((null >= observed - 1e-12 * max(1.0, abs(observed))).sum())
    return (1 + at_least) / (1 + len(null))


def label_codes(labels: Sequence[Hashable]) -> np.ndarray:
    """An integer per label (labels sorted by str()): the block ids vrr_gain shuffles within."""
    return _encode(labels)[0]


def _encode(labels: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    names = sorted(set(labels), key=str)
    pos = {lab: i for i, lab in enumerate(names)}
    return np.fromiter((pos[lab] for lab in labels), np.int64, len(labels)), len(names)


def vrr_test(
    values: Sequence[float],
    labels: Sequence[Hashable],
    *,
    permutations: int = 1000,
    seed: int = 0,
    shuffles: Shuffles | None = None,
) -> ChanceTest | None:
    """VRR of `labels` with its chance level: the mean VRR over `permutations` random
    reassignments of the queries to strata of the same sizes, the chance-corrected VRR and
    the permutation p-value. NaN values are left out first. None when VRR is undefined (no
    variance); with no permutations, only `observed`. `shuffles`: the permutations to use
    when the caller shares one draw across metrics (they must match the defined values)."""
    v, labs = _defined(values, labels)
    if len(v) < 2 or not sigma_overall(v) > 0:  # constant, up to rounding
        return None
    codes, n_codes = _encode(labs)
    observed = float(_between_share(v, codes[None, :], n_codes)[0])
    if permutations < 1:
        return ChanceTest(observed, None, None, None, 0)
    if shuffles is None or not shuffles.fits(len(v), permutations, seed, None):
        shuffles = Shuffles(len(v), permutations, seed)
    null = _null(v, codes, n_codes, shuffles)
    mean = float(null.mean())
    adjusted = (observed - mean) / (1.0 - mean) if mean < 1 else math.nan
    return ChanceTest(observed, mean, adjusted, _p_value(null, observed), permutations)


def vrr_gain(
    values: Sequence[float],
    base: Sequence[Hashable],
    extra: Sequence[Hashable],
    *,
    min_queries: int,
    permutations: int = 1000,
    seed: int = 0,
    shuffles: Shuffles | None = None,
) -> tuple[float, float, ChanceTest] | None:
    """How much variance `extra` explains beyond `base` (a stratification nested in it):
    VRR of the base x extra cells minus VRR of base alone, cells of fewer than `min_queries`
    queries pooled within their base stratum. The null shuffles `extra` within each base
    stratum, which keeps every cell's size, so it asks whether extra adds anything once base
    is known. Returns (VRR of base, VRR of the cells, the test of the gain; its `adjusted` is
    (gain - null gain) / (1 - VRR of base - null gain): the chance-corrected share of the
    variance base leaves). `shuffles`: as for vrr_test, blocked by base's codes."""
    v, pairs = _defined(values, list(zip(base, extra)))
    if len(v) < 2 or not sigma_overall(v) > 0:  # constant, up to rounding
        return None
    b_codes, n_b = _encode([p[0] for p in pairs])
    e_codes, n_e = _encode([p[1] for p in pairs])
    size = np.bincount(b_codes * n_e + e_codes, minlength=n_b * n_e)
    # a cell of fewer than min_queries queries joins its base stratum's `small` cell (extra
    # code n_e within that base), so the cells stay nested in the base strata
    every = np.arange(n_b * n_e)
    pooled = every // n_e * (n_e + 1) + np.where(size >= min_queries, every % n_e, n_e)
    n_cells = n_b * (n_e + 1)

    def cells(e: np.ndarray) -> np.ndarray:
        return pooled[b_codes * n_e + e]

    vrr_base = float(_between_share(v, b_codes[None, :], n_b)[0])
    vrr_cells = float(_between_share(v, cells(e_codes)[None, :], n_cells)[0])
    gain = vrr_cells - vrr_base
    if permutations < 1:
        return vrr_base, vrr_cells, ChanceTest(gain, None, None, None, 0)
    if shuffles is None or not shuffles.fits(len(v), permutations, seed, b_codes):
        shuffles = Shuffles(len(v), permutations, seed, b_codes)
    null = _null(v, e_codes, n_cells, shuffles, cells) - vrr_base
    mean = float(null.mean())
    rest = 1.0 - vrr_base - mean
    adjusted = (gain - mean) / rest if rest > 0 else math.nan
    return vrr_base, vrr_cells, ChanceTest(gain, mean, adjusted, _p_value(null, gain), permutations)


# --- population-weighted estimate (docs/stratification.md#population-weighted-estimate) -------


def population_estimate(
    values: Sequence[float],
    clusters: Sequence[Hashable | None],
    mass: Mapping[Hashable, float],
) -> dict[str, float | int | list[float] | None]:
    """The mixture estimate mu = Σ_k w_k mu_k of a metric in [0, 1], with w_k = `mass` of
    cluster k (shares summing to 1) and mu_k the mean of the queries whose cluster is k.

    Clusters with mass but no query leave their mu_k unknown: `uncovered` is their mass,
    `bounds` the estimate with them all at 0 and all at 1, `weighted` the estimate with
    them at the covered clusters' weighted mean (the covered weights renormalised). `plain`
    is the query mean (queries with a cluster); `bias` = plain - weighted estimates the
    naive mean's bias Σ_k (ŵ_k - w_k) mu_k, `bias_bounds` its range over the bounds.
    Queries without a cluster (None) or with a NaN value are left out."""
    v = np.asarray(values, dtype=np.float64)
    sums: dict[Hashable, float] = {}
    counts: dict[Hashable, int] = {}
    for x, c in zip(v, clusters):
        if c is not None and not math.isnan(x):
            sums[c] = sums.get(c, 0.0) + float(x)
            counts[c] = counts.get(c, 0) + 1
    n = sum(counts.values())
    covered = sorted((c for c in counts if mass.get(c, 0.0) > 0), key=str)
    known = math.fsum(mass[c] * sums[c] / counts[c] for c in covered)
    covered_mass = math.fsum(mass[c] for c in covered)
    uncovered = max(0.0, 1.0 - covered_mass)
    plain = math.fsum(sums.values()) / n if n else math.nan
    weighted = known / covered_mass if covered_mass > 0 else math.nan
    low, high = known, known + uncovered
    return {
        "n_queries": n,
        "n_clusters_covered": len(covered),
        "queries_in_massless_clusters": sum(counts[c] for c in counts if c not in covered),
        "plain": plain,
        "weighted": weighted,
        "uncovered": uncovered,
        "bounds": [low, high] if covered_mass > 0 else None,
        "bias": plain - weighted,
        "bias_bounds": [plain - high, plain - low] if covered_mass > 0 else None,
    }
