"""Tie-aware metric values: for each query, the lowest and highest value a metric can take over
every order of its tied scores, and the expected value when each tie group is shuffled
uniformly (McSherry and Najork, ECIR 2008). Definitions and what is exact: docs/metrics.md#ties.

A tie group is a maximal run of exactly equal scores in a query's canonical ranking (those run
next to each other there). Only ties inside the ranked list are known: a chunk below the run's
depth may share the last score, but the run does not say so, and it is not counted.

Where a group sits decides what it can change: for a set metric at K (coverage, perfrecall,
recall, P, success, Rprec) only the group that straddles K matters (which of its members make
the top K); for a rank metric (nDCG, MRR, RR, AP) every group above K that mixes relevant and
other chunks. A query without such a group needs no work: `screen` finds the candidates with
array operations over all scores (reading relevance for tied chunks only), and the per-query
work is done for them alone. The corpus families (metrics.answers) are their standard twins
with "holds an answer" / "outdated" as relevance, read per query for the candidates only:
answer_recall@K as success@K, outdated@K as P@K, answer_rank as the first relevant's rank.
"""

from __future__ import annotations

import functools
import logging
import math
import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from harness.core.run import Ranking, Run
from harness.core.types import Benchmark, Query
from metrics import answers
from metrics.registry import Metric

log = logging.getLogger("harness.metrics")

EPS = 1e-12  # a value depends on ties when its range is wider than this
LIMIT_BITS = 16  # exact set-cover tables up to 2**16 gold-group subsets per linked component
MAX_STATES = 200_000  # states of the in-group search for overlapping gold groups

# the families _QueryView.range has a rule for (utility values come from a generator)
SUPPORTED = frozenset(
    "coverage perfrecall group_ndcg group_mrr ndcg recall P success Rprec recip_rank map "
    "answer_recall answer_rank outdated".split()
)


@dataclass(frozen=True)
class Range:
    """One query's value of one metric over the orders of its tied scores."""

    low: float
    high: float
    expected: float | None  # None: not tractable (docs/metrics.md#ties)
    exact: bool = True  # False: low / high are outer bounds (a search too large to finish)


@dataclass(frozen=True)
class Tied:
    """A metric's tie-aware values per query, in benchmark query order (NaN where the metric
    is undefined; `expected` also NaN where `known` is False)."""

    low: np.ndarray
    high: np.ndarray
    expected: np.ndarray
    known: np.ndarray  # bool: the expected value was computed
    exact: np.ndarray  # bool: low and high are exact

    @property
    def dependent(self) -> np.ndarray:
        """True where the query's value depends on the order of tied scores."""
        with np.errstate(invalid="ignore"):
            return (self.high - self.low) > EPS


def supported(metric: Metric) -> bool:
    """Whether `metric`'s family has tie-aware values here."""
    return metric.family.name in SUPPORTED


def tie_bounds(
    benchmark: Benchmark,
    run: Run,
    metrics: Sequence[Metric],
    values: Mapping[str, np.ndarray],
) -> dict[str, Tied]:
    """Metric name -> tie-aware values per query, for every supported metric; `values` are
    the canonical per-query values (metrics.evaluate.per_query), which every range holds."""
    queries = benchmark.queries
    rankings = [run[q.query_id] for q in queries]
    todo = [m for m in metrics if supported(m)]
    out = {m.name: _unchanged(values[m.name]) for m in todo}
    work: dict[int, list[Metric]] = {}
    for m, rows in zip(todo, screen(benchmark, rankings, todo)):
        if m.family.name == "answer_rank":  # only a tie at the first answer can move it
            rows = [i for i in rows.tolist() if _tied_at(rankings[i].scores, values[m.name][i])]
        for i in np.asarray(rows, np.int64).tolist():
            work.setdefault(i, []).append(m)
    texts = answers.Texts(benchmark)  # normalised text, for the chunks the ranges read
    for i in sorted(work):
        ranking = rankings[i]
        view = _QueryView(queries[i], ranking, tie_groups(ranking.scores), benchmark, texts)
        for m in work[i]:
            v = float(values[m.name][i])
            if v != v:
                continue
            r = view.range(m)
            if r is not None:
                _store(out[m.name], i, r, v)
    rough = sorted(name for name, t in out.items() if not t.exact.all())
    if rough:
        log.info(
            f"tie ranges of {', '.join(rough)} are outer bounds for some queries (gold groups "
            "too entangled for the exact search; docs/metrics.md#ties)"
        )
    return out


def query_range(
    query: Query,
    ranking: Ranking,
    metric: Metric,
    value: float,
    benchmark: Benchmark | None = None,
) -> Range:
    """One query's range of `metric`; `value` is its canonical value (metrics.registry or
    metrics.standard), returned as the whole range when no order of ties changes it. The
    corpus families (metrics.answers) need the `benchmark` whose chunks they read."""
    if metric.family.kind == "corpus" and benchmark is None:
        raise ValueError(f"the tie range of {metric.name} needs the benchmark")
    texts = None if benchmark is None else answers.Texts(benchmark)
    blocks = tie_groups(ranking.scores)
    r = _QueryView(query, ranking, blocks, benchmark, texts).range(metric)
    if r is None or value != value:
        return Range(value, value, value)
    t = _unchanged(np.array([value]))
    _store(t, 0, r, value)
    exp = float(t.expected[0]) if t.known[0] else None
    return Range(float(t.low[0]), float(t.high[0]), exp, bool(t.exact[0]))


_SET = {"coverage", "perfrecall", "recall", "P", "success", "Rprec", "answer_recall", "outdated"}
_GROUP = {"coverage", "perfrecall", "group_ndcg", "group_mrr"}


def _tied_at(scores: Sequence[float], rank: float) -> bool:
    """Whether the chunk at 1-based `rank` (NaN: none) shares its score with a neighbour."""
    if rank != rank:
        return False
    p = int(rank) - 1
    return (p > 0 and scores[p - 1] == scores[p]) or (
        p + 1 < len(scores) and scores[p + 1] == scores[p]
    )


def screen(
    benchmark: Benchmark, rankings: Sequence[Ranking], metrics: Sequence[Metric]
) -> list[np.ndarray]:
    """Per metric, the rows (queries) whose value may depend on tied scores, found with
    array operations over all rankings at once: a tie group that straddles the cut (set
    metrics) or starts above it (rank metrics) and holds a gold chunk (group metrics), a
    relevant and a non-relevant chunk (binary metrics) or two different gains (nDCG)."""
    empty = np.zeros(0, np.int64)
    n = len(rankings)
    lengths = np.fromiter((len(r.scores) for r in rankings), np.int64, n)
    total = int(lengths.sum())
    if total == 0:
        return [empty for _ in metrics]
    flat = np.fromiter(chain.from_iterable(r.scores for r in rankings), np.float64, total)
    row = np.repeat(np.arange(n), lengths)
    pos = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    new = np.ones(total, bool)
    new[1:] = (flat[1:] != flat[:-1]) | (pos[1:] == 0)
    first = np.flatnonzero(new)
    size = np.diff(np.append(first, total))
    tied = size > 1
    if not tied.any():
        return [empty for _ in metrics]
    g_row, g_start, g_size = row[first][tied], pos[first][tied], size[tied]
    g_end = g_start + g_size

    judged_metrics = [m for m in metrics if m.family.kind != "corpus"]
    stats = {}
    if judged_metrics:
        stats = _group_stats(benchmark, rankings, judged_metrics, g_row, g_start, g_end)
    out = []
    for m in metrics:
        fam, k = m.family.name, m.k
        if m.family.kind == "corpus":
            varies = np.ones(len(g_row), bool)  # what a chunk holds is read per query
        elif fam in _GROUP:
            varies = stats["gold"] > 0  # any gold chunk can matter: several groups, overlaps
        elif fam == "ndcg":
            varies = stats["gain_max"] != stats["gain_min"]
        else:
            rel = stats[m.level]
            varies = (rel > 0) & (rel < g_size)
        if fam == "Rprec":
            judged = (q.judgments.values() for q in benchmark.queries)
            r = [sum(1 for g in j if g >= m.level) for j in judged]  # Rprec's cut: R
            cut = np.asarray(r, np.int64)[g_row]
        else:
            cut = np.full(len(g_row), _FAR if k is None else k)
        where = (g_start < cut) & (cut < g_end) if fam in _SET else g_start < cut
        out.append(np.unique(g_row[varies & where]))
    return out


_FAR = np.iinfo(np.int64).max


def _group_stats(benchmark, rankings, metrics, g_row, g_start, g_end) -> dict:
    """Per tie group: how many of its chunks are gold ("gold"), relevant at each level used,
    and its lowest and highest gain; only for groups that start above the deepest cut."""
    reach = max((_FAR if m.k is None else m.k) for m in metrics)
    gold_needed = any(m.family.name in _GROUP for m in metrics)
    levels = sorted({m.level for m in metrics if m.family.kind == "standard"})
    size = len(g_row)
    out: dict[object, np.ndarray] = {"gold": np.zeros(size, np.int64)}
    out |= {"gain_min": np.zeros(size, np.int64), "gain_max": np.zeros(size, np.int64)}
    out |= {level: np.zeros(size, np.int64) for level in levels}
    gold: dict[int, frozenset[str]] = {}
    judged: dict[int, Mapping[str, int]] = {}
    queries = benchmark.queries
    for gi in np.flatnonzero(g_start < reach).tolist():
        r, a, b = int(g_row[gi]), int(g_start[gi]), int(g_end[gi])
        ids = rankings[r].ids[a:b]
        if gold_needed:
            if r not in gold:
                gold[r] = frozenset().union(*queries[r].groups)
            out["gold"][gi] = sum(c in gold[r] for c in ids)
        if levels:
            if r not in judged:
                judged[r] = queries[r].judgments
            grades = [judged[r].get(c, 0) for c in ids]
            gains = [max(g, 0) for g in grades]
            out["gain_min"][gi], out["gain_max"][gi] = min(gains), max(gains)
            for level in levels:
                out[level][gi] = sum(g >= level for g in grades)
    return out


def tie_groups(scores: Sequence[float]) -> list[tuple[int, int]]:
    """Maximal runs [a, b) of exactly equal scores with at least two members."""
    out, a = [], 0
    for p in range(1, len(scores) + 1):
        if p == len(scores) or scores[p] != scores[a]:
            if p - a > 1:
                out.append((a, p))
            a = p
    return out


def _unchanged(values: np.ndarray) -> Tied:
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    return Tied(v.copy(), v.copy(), v.copy(), np.ones(n, bool), np.ones(n, bool))


def _store(t: Tied, i: int, r: Range, v: float) -> None:
    """Write one query's range, snapped to the canonical value where float noise is all that
    separates them, and widened to hold it."""
    lo, hi = (v if abs(x - v) <= EPS else x for x in (r.low, r.high))
    lo, hi = min(lo, v), max(hi, v)
    t.low[i], t.high[i], t.exact[i] = lo, hi, r.exact
    if r.expected is None:
        t.expected[i], t.known[i] = math.nan, False
    else:
        e = v if abs(r.expected - v) <= EPS else r.expected
        t.expected[i] = min(max(e, lo), hi)


# ---------------------------------------------------------------- one query


class _TooBig(Exception):
    """An exact search would exceed its limits; the caller falls back to outer bounds."""


class _QueryView:
    """One query's ranking with its tie groups, gold masks and grades, built on demand."""

    def __init__(
        self,
        query: Query,
        ranking: Ranking,
        blocks: list[tuple[int, int]],
        benchmark: Benchmark | None = None,
        texts: answers.Texts | None = None,
    ):
        self.query, self.ids, self.blocks = query, ranking.ids, blocks
        self.benchmark, self.texts = benchmark, texts
        self.start = {a: b for a, b in blocks}
        self._cache: dict[object, object] = {}

    # what each position holds
    @functools.cached_property
    def masks(self) -> list[int]:
        """Per position, the gold groups (bit i = the query's i-th group) the chunk is in."""
        member: dict[str, int] = {}
        for i, g in enumerate(self.query.groups):
            for c in g:
                member[c] = member.get(c, 0) | (1 << i)
        return [member.get(c, 0) for c in self.ids]

    @functools.cached_property
    def grades(self) -> list[int]:
        return [self.query.judgments.get(c, 0) for c in self.ids]

    def straddling(self, k: int) -> tuple[int, int] | None:
        return next(((a, b) for a, b in self.blocks if a < k < b), None)

    def range(self, m: Metric) -> Range | None:
        """The metric's range for this query; None when no order of ties changes it."""
        fam, k = m.family.name, m.k
        try:
            if fam == "coverage":
                return self._cover(k, perfect=False)
            if fam == "perfrecall":
                return self._cover(k, perfect=True)
            if fam == "group_mrr":
                return self._group_mrr(k)
            if fam == "group_ndcg":
                return self._group_ndcg(k)
            if fam == "ndcg":
                return self._ndcg(k)
            if m.family.kind == "corpus":
                return self._corpus(fam, k)
            return self._binary(fam, k, m.level)
        except _TooBig:
            return Range(0.0, 1.0, None, exact=False)

    # ------------------------------------------------------------ group metrics

    def _cover(self, k: int, perfect: bool) -> Range | None:
        """Coverage@K / PerfRecall@K: only the group straddling K matters, through which of
        its members make the top K (s of its n)."""
        block = self.straddling(k)
        groups = len(self.query.groups)
        if block is None or not groups:
            return None
        a, b = block
        masks = self.masks
        covered = _or(masks[:a])
        types = Counter(m & ~covered for m in masks[a:b])
        fillers = types.pop(0, 0)
        if not types:
            return None
        n, s = b - a, k - a
        base = covered.bit_count()
        union = _or(types)
        lo_new, hi_new, ways, exact = _cover_range(types, fillers, s, want_ways=perfect)
        total = math.comb(n, s)
        if not perfect:
            hits: Counter[int] = Counter()
            for m, c in types.items():
                for g in _bits(m):
                    hits[g] += c
            expected = sum((total - math.comb(n - hits[g], s)) / total for g in _bits(union))
            lo, hi, ex = base + lo_new, base + hi_new, base + expected
            return Range(lo / groups, hi / groups, ex / groups, exact)
        if base + union.bit_count() < groups:
            return Range(0.0, 0.0, 0.0)
        lo, hi = float(base + lo_new == groups), float(base + hi_new == groups)
        return Range(lo, hi, None if ways is None else ways / total, exact)

    def _segments(self, k: int):
        """(start, end) of each position or tie group that starts above K, in rank order."""
        p, end = 0, min(k, len(self.ids))
        while p < end:
            b = self.start.get(p, p + 1)
            yield p, b
            p = b

    def _first_relevant(self, rel: Sequence[bool], end: int, value) -> Range | None:
        """A metric that is `value(position of the first relevant chunk)`, searched above
        `end`: only the first position or tie group holding a relevant chunk matters; its
        relevant chunks first or last give the two ends of the range."""
        for p, b in self._segments(end):
            r, n = sum(rel[p:b]), b - p
            if r:
                if r == n:
                    return None
                lo, hi = sorted((value(p), value(p + n - r)))
                return Range(lo, hi, _expected_at(n, r, 0, value, p))
        return None

    def _group_mrr(self, k: int) -> Range | None:
        """Group MRR@K: each group's reciprocal rank of its first member. Which groups are
        covered before a tie group does not depend on any order, so groups add up."""
        groups = len(self.query.groups)
        if not groups or not any(a < k for a, _ in self.blocks):
            return None

        def disc(p: int) -> float:
            return 1.0 / (p + 1) if p < k else 0.0

        masks = self.masks
        covered, lo, hi, ex, exact, changed = 0, 0.0, 0.0, 0.0, True, False
        for a, b in self._segments(k):
            types = Counter(m & ~covered for m in masks[a:b])
            fillers = types.pop(0, 0)
            if b - a == 1:
                gain = sum(m.bit_count() for m in types) * disc(a)
                lo, hi, ex = lo + gain, hi + gain, ex + gain
            elif types:
                changed = True
                blo, bhi, bex, bexact = _first_hits(types, fillers, a, b - a, disc)
                lo, hi, ex, exact = lo + blo, hi + bhi, ex + bex, exact and bexact
            covered |= _or(masks[a:b])
        if not changed:
            return None
        return Range(lo / groups, hi / groups, ex / groups, exact)

    def _group_ndcg(self, k: int) -> Range | None:
        """Group NDCG@K (RARE): a chunk earns once, for the first unmatched group it is in.
        With a chunk in two unmatched groups, which groups are matched after a tie group
        depends on its order, so the search carries every reachable matched set."""
        groups = self.query.groups
        if not groups or not any(a < k for a, _ in self.blocks):
            return None
        idcg = sum(1.0 / math.log2(j + 1) for j in range(1, min(len(groups), k) + 1))

        def disc(p: int) -> float:
            return 1.0 / math.log2(p + 2) if p < k else 0.0

        masks = self.masks
        # matched set -> [lowest, highest, probability, E[gain so far; this set]]
        states: dict[int, list[float]] = {0: [0.0, 0.0, 1.0, 0.0]}
        changed = False
        for a, b in self._segments(k):
            nxt: dict[int, list[float]] = {}
            for matched, (lo, hi, p, ex) in states.items():
                if b - a == 1:
                    free = masks[a] & ~matched
                    gain = disc(a) if free else 0.0
                    outcomes = {matched | (free & -free): (gain, gain, 1.0, gain)}
                else:
                    outcomes = _ndcg_block(masks[a:b], matched, a, disc)
                    changed = (
                        changed
                        or len(outcomes) > 1
                        or any(hi - lo > EPS for lo, hi, _, _ in outcomes.values())
                    )
                for after, (glo, ghi, gp, gex) in outcomes.items():
                    cur = nxt.get(after)
                    add = [lo + glo, hi + ghi, p * gp, ex * gp + p * gex]
                    if cur is None:
                        nxt[after] = add
                    else:
                        cur[0], cur[1] = min(cur[0], add[0]), max(cur[1], add[1])
                        cur[2], cur[3] = cur[2] + add[2], cur[3] + add[3]
            states = nxt
            if len(states) > MAX_STATES:
                raise _TooBig
        if not changed:
            return None
        lo = min(s[0] for s in states.values())
        hi = max(s[1] for s in states.values())
        ex = math.fsum(s[3] for s in states.values())
        return Range(lo / idcg, hi / idcg, ex / idcg)

    # --------------------------------------------------------- standard metrics

    @functools.cached_property
    def layout(self) -> tuple[np.ndarray, np.ndarray]:
        """Per position: the start and size of its tie group (itself alone when untied)."""
        n = len(self.ids)
        start, size = np.arange(n), np.ones(n, np.int64)
        for a, b in self.blocks:
            start[a:b], size[a:b] = a, b - a
        return start, size

    def _ndcg(self, k: int | None) -> Range | None:
        """trec_eval nDCG@K (uncut: nDCG, the ideal from every judged chunk) with grades as
        gains: within a tie group, best gains first gives the highest DCG, worst first the
        lowest, and each position's expected gain is the group's mean gain (positions past K
        earn nothing). Cumulative sums per query serve every K."""
        if "ndcg" not in self._cache:
            gains = np.maximum(np.asarray(self.grades, np.int64), 0)
            best, worst = gains.astype(np.float64), gains.astype(np.float64)
            mean = gains.astype(np.float64)
            varied = []
            for a, b in self.blocks:
                g = np.sort(gains[a:b])
                if g[0] != g[-1]:
                    varied.append(a)
                    best[a:b], worst[a:b], mean[a:b] = g[::-1], g, g.mean()
            disc = np.log2(np.arange(2, len(gains) + 2, dtype=np.float64))
            positive = sorted((g for g in self.query.judgments.values() if g > 0), reverse=True)
            ideal = np.asarray(positive, np.float64)
            ideal = np.cumsum(ideal / np.log2(np.arange(2, len(ideal) + 2)))
            sums = [np.cumsum(x / disc) for x in (worst, best, mean)]
            self._cache["ndcg"] = (varied, ideal, sums)
        varied, ideal, sums = self._cache["ndcg"]
        if k is None:  # trec_eval's ndcg: the whole list against the whole ideal
            k = max(len(self.ids), len(ideal))
        if not varied or varied[0] >= k or not len(ideal):
            return None
        cut, idcg = min(k, len(self.ids)) - 1, float(ideal[min(k, len(ideal)) - 1])
        lo, hi, ex = (float(x[cut]) / idcg for x in sums)
        return Range(lo, hi, ex)

    def _average_precision(self, cut: int, level: int, n_rel: int) -> Range | None:
        """AP over the top `cut`: relevant chunks first in every tie group gives the highest,
        last the lowest; the expectation is McSherry and Najork's closed form (each position
        of a group is relevant with the group's share, pairs within it drawn without
        replacement). Cumulative sums per query and level serve every cut."""
        key = ("ap", level)
        if key not in self._cache:
            rel = np.asarray(self.grades, np.int64) >= level
            start, size = self.layout
            before = np.concatenate([[0], np.cumsum(rel)])
            r = before[start + size] - before[start]  # relevant in the position's group
            off = np.arange(len(rel)) - start
            rank = np.arange(1, len(rel) + 1, dtype=np.float64)

            def ap_terms(flags):
                return np.cumsum(flags * np.cumsum(flags) / rank)

            share = r / size
            within = off * (r - 1) / np.maximum(size - 1, 1)
            expected = np.cumsum(share * (1 + before[start] + within) / rank)
            mixed = np.flatnonzero((r > 0) & (r < size))
            first = int(mixed[0]) if len(mixed) else len(rel)
            sums = (ap_terms(off >= size - r), ap_terms(off < r), expected)
            self._cache[key] = (first, sums)
        first, sums = self._cache[key]
        if first >= cut:
            return None
        at = min(cut, len(self.ids)) - 1
        lo, hi, ex = (float(x[at]) / n_rel for x in sums)
        return Range(lo, hi, ex)

    def _binary(self, fam: str, k: int | None, level: int) -> Range | None:
        """The binary standard metrics at relevance `level`."""
        n_rel = sum(1 for g in self.query.judgments.values() if g >= level)
        if n_rel == 0:
            return None
        if fam == "map":
            return self._average_precision(len(self.ids) if k is None else k, level, n_rel)
        rel = [g >= level for g in self.grades]
        if fam == "recip_rank":
            k = len(self.ids) if k is None else k
            return self._first_relevant(rel, k, lambda p: 1.0 / (p + 1) if p < k else 0.0)
        cut = n_rel if fam == "Rprec" else k
        denom = k if fam == "P" else n_rel  # recall and Rprec divide by R
        return _set_range(rel, self.straddling(cut), cut, denom, hit=fam == "success")

    def _corpus(self, fam: str, k: int | None) -> Range | None:
        """The corpus families (metrics.answers) as their standard twins, with the chunks
        that hold an answer (or are outdated) as the relevant ones: answer_recall@K as
        success@K, outdated@K as P@K, answer_rank as the rank of the first relevant. Only
        the chunks down to the tie group that matters are read."""
        if self.benchmark is None or self.texts is None:
            raise ValueError(f"the tie range of {fam} needs the benchmark")
        q, ids = self.query, self.ids
        if fam == "outdated":
            block = self.straddling(k)
            end = 0 if block is None else block[1]
            rel = [answers.is_outdated(self.benchmark, q, c) for c in ids[:end]]
            return _set_range(rel, block, k, k, hit=False)
        forms = answers.answer_forms(q)
        if fam == "answer_recall":
            block = self.straddling(k)
            end = 0 if block is None else block[1]
            rel = [self.texts.holds(c, forms) for c in ids[:end]]
            return _set_range(rel, block, k, 1, hit=True)
        first = answers.first_answer(self.texts, ids, forms, len(ids))
        block = next(((a, b) for a, b in self.blocks if first is not None and a <= first < b), None)
        if block is None:
            return None
        a, b = block  # nothing above `a` holds an answer
        rel = [False] * a + [self.texts.holds(c, forms) for c in ids[a:b]]
        return self._first_relevant(rel, b, lambda p: float(p + 1))


# ------------------------------------------------------------------ helpers


def _bits(x: int) -> list[int]:
    return [i for i in range(x.bit_length()) if x >> i & 1]


def _or(masks) -> int:
    return functools.reduce(operator.or_, masks, 0)


def _expected_at(n: int, r: int, i: int, value: Callable[[int], float], a: int) -> float:
    """E value(a + J), J the (i+1)-th smallest of r offsets drawn without replacement from
    0..n-1."""
    total = math.comb(n, r)
    probs = (math.comb(j, i) * math.comb(n - 1 - j, r - 1 - i) / total for j in range(n))
    return sum(p * value(a + j) for j, p in enumerate(probs) if p)


def _first_hits(
    types: Mapping[int, int], fillers: int, a: int, n: int, disc: Callable[[int], float]
) -> tuple[float, float, float, bool]:
    """A tie group at [a, a+n) under coverage semantics (each group earns disc(rank of its
    first member); a chunk earns for every new group it is in). `types`: group mask -> how
    many of the group's chunks carry it; `fillers`: chunks that earn nothing.
    Returns (lowest, highest, expected, exact) of the group's total."""
    union = _or(types)
    expected = 0.0
    for g in _bits(union):
        members = sum(c for m, c in types.items() if m >> g & 1)
        expected += _expected_at(n, members, 0, disc, a)
    if all(m.bit_count() == 1 for m in types):
        # one group per chunk: the highest puts one chunk of each group first; the lowest
        # puts the fillers first and the groups with most chunks before the others (each
        # group's first chunk earns, its other chunks push the next group down)
        hi = sum(disc(a + i) for i in range(len(types)))
        lo, pos = 0.0, a + fillers
        for c in sorted(types.values(), reverse=True):
            lo, pos = lo + disc(pos), pos + c
        return lo, hi, expected, True
    local, width = _localise(types)
    if width > LIMIT_BITS:  # bounds that always hold: every group first at the last / first rank
        groups = union.bit_count()
        return groups * disc(a + n - 1), groups * disc(a), expected, False
    masks = list(local)
    counts = [local[m] for m in masks]
    # highest: earning chunks first, so the i-th earning chunk sits at a + i
    best, frontier = 0.0, {0: 0.0}
    for step in range(width):
        nxt: dict[int, float] = {}
        for have, val in frontier.items():
            for m in masks:
                new = m & ~have
                if new:
                    v = val + new.bit_count() * disc(a + step)
                    if v > nxt.get(have | m, -1.0):
                        nxt[have | m] = v
        if not nxt:
            break
        best = max(best, max(nxt.values()))
        frontier = nxt
    # lowest: chunks that earn nothing go first, so the next earning chunk sits after every
    # chunk whose groups are all covered
    full = (1 << width) - 1
    worst = {}
    for have in range(full, -1, -1):
        placed = fillers + sum(c for m, c in zip(masks, counts) if m & ~have == 0)
        options = [
            (m & ~have).bit_count() * disc(a + placed) + worst[have | m] for m in masks if m & ~have
        ]
        worst[have] = min(options) if options else 0.0
    return worst[0], best, expected, True


def _localise(types: Mapping[int, int]) -> tuple[dict[int, int], int]:
    """The masks renumbered onto the bits they use (0..width-1), with their counts."""
    bits = _bits(_or(types))
    where = {g: i for i, g in enumerate(bits)}
    out: dict[int, int] = {}
    for m, c in types.items():
        local = sum(1 << where[g] for g in _bits(m))
        out[local] = out.get(local, 0) + c
    return out, len(bits)


def _ndcg_block(
    block_masks: Sequence[int], matched: int, a: int, disc: Callable[[int], float]
) -> dict[int, tuple[float, float, float, float]]:
    """A tie group at [a, a+n) under group-NDCG semantics, entered with `matched` groups:
    matched set after it -> (lowest gain, highest gain, probability, E[gain; that set])."""
    n = len(block_masks)
    types = Counter(m & ~matched for m in block_masks)
    fillers = types.pop(0, 0)
    if not types:
        return {matched: (0.0, 0.0, 1.0, 0.0)}
    if all(m.bit_count() == 1 for m in types):
        # one unmatched group per chunk: NDCG earns as coverage does, and the matched set
        # after the group is fixed
        lo, hi, ex, _ = _first_hits(types, fillers, a, n, disc)
        return {matched | _or(types): (lo, hi, 1.0, ex)}
    masks = list(types)
    counts = tuple(types[m] for m in masks)
    r = sum(counts)

    def earn(have: int, used: tuple[int, ...]):
        """(type index, the group it matches) for each chunk type that would earn now."""
        for t, m in enumerate(masks):
            free = m & ~have
            if free and used[t] < counts[t]:
                yield t, free & -free

    def bump(used: tuple[int, ...], t: int) -> tuple[int, ...]:
        return used[:t] + (used[t] + 1,) + used[t + 1 :]

    start = (matched, (0,) * len(masks))
    hi_out: dict[int, float] = {}
    lo_out: dict[int, float] = {}
    for highest, out in ((True, hi_out), (False, lo_out)):
        # highest: earning chunks first (the i-th at a + i); lowest: every chunk that earns
        # nothing now goes first (fillers, and chunks whose groups are all matched)
        frontier = {start: 0.0}
        seen = 0
        while frontier:
            nxt: dict[tuple[int, tuple[int, ...]], float] = {}
            for (have, used), val in frontier.items():
                if highest:
                    pos = a + have.bit_count() - matched.bit_count()
                else:
                    pos = a + fillers
                    pos += sum(c if m & ~have == 0 else u for m, c, u in zip(masks, counts, used))
                moves = list(earn(have, used))
                if not moves:
                    prev = out.get(have)
                    if prev is None or (val > prev if highest else val < prev):
                        out[have] = val
                    continue
                for t, g in moves:
                    key = (have | g, bump(used, t))
                    v = val + disc(pos)
                    prev = nxt.get(key)
                    if prev is None or (v > prev if highest else v < prev):
                        nxt[key] = v
            seen += len(nxt)
            if seen > MAX_STATES:
                raise _TooBig
            frontier = nxt
    # expected: the relevant chunks' relative order is a uniform random sequence of their
    # types (a Markov chain on what is used), and the i-th of them sits at the i-th smallest
    # of r uniformly drawn offsets, independently of that order
    ed = [_expected_at(n, r, i, disc, a) for i in range(r)]
    layer = {start: (1.0, 0.0)}
    for i in range(r):
        nxt2: dict[tuple[int, tuple[int, ...]], tuple[float, float]] = {}
        for (have, used), (p, ex) in layer.items():
            for t, m in enumerate(masks):
                left = counts[t] - used[t]
                if not left:
                    continue
                q = p * left / (r - i)
                free = m & ~have
                gain = ed[i] if free else 0.0
                key = (have | (free & -free), bump(used, t))
                cp, cex = nxt2.get(key, (0.0, 0.0))
                nxt2[key] = (cp + q, cex + ex * left / (r - i) + q * gain)
        if len(nxt2) > MAX_STATES:
            raise _TooBig
        layer = nxt2
    chance: dict[int, tuple[float, float]] = {}
    for (have, _), (p, ex) in layer.items():
        cp, cex = chance.get(have, (0.0, 0.0))
        chance[have] = (cp + p, cex + ex)
    return {have: (lo_out[have], hi_out[have], p, ex) for have, (p, ex) in chance.items()}


def _cover_range(
    types: Mapping[int, int], fillers: int, s: int, want_ways: bool
) -> tuple[int, int, int | None, bool]:
    """s chunks are drawn from a tie group whose chunks carry `types` (mask of still-uncovered
    groups -> count) plus `fillers` that carry none: the fewest and most groups they can
    cover, the number of draws that cover every group of the masks (`want_ways`), and
    whether the first two are exact. Groups linked by a shared chunk form a component; each
    component gets exact tables over its subsets, and components combine by knapsack."""
    comps: list[tuple[int, dict[int, int]]] = []
    for m, c in types.items():
        bits, members, keep = m, {m: c}, []
        for cb, cm in comps:
            if cb & bits:
                bits |= cb
                members.update(cm)
            else:
                keep.append((cb, cm))
        comps = [*keep, (bits, members)]
    exact = True
    tables = []
    for _, members in comps:
        local, width = _localise(members)
        if width > LIMIT_BITS:
            exact = False
            tables.append(_outer_table(local, width))
        else:
            tables.append(_component_table(local, width, want_ways))
    neg = -(10**9)
    most = [0] + [neg] * s  # most groups with exactly t chunks from the components so far
    fewest = [0] + [10**9] * s
    ways: list[int] | None = [1] + [0] * s if want_ways else None
    for maxc, minc, wc in tables:
        m2, f2 = [neg] * (s + 1), [10**9] * (s + 1)
        w2 = [0] * (s + 1) if ways is not None and wc is not None else None
        for t in range(s + 1):
            if most[t] == neg and fewest[t] == 10**9 and not (ways and ways[t]):
                continue
            for u in range(min(len(maxc) - 1, s - t) + 1):
                if most[t] != neg:
                    m2[t + u] = max(m2[t + u], most[t] + maxc[u])
                if fewest[t] != 10**9:
                    f2[t + u] = min(f2[t + u], fewest[t] + minc[u])
                if w2 is not None and ways[t]:
                    w2[t + u] += ways[t] * wc[u]
        most, fewest, ways = m2, f2, w2
    hi = max(most[t] for t in range(s + 1) if most[t] != neg)
    lo = fewest[max(0, s - fillers)]  # fewest is nondecreasing; s - fillers <= relevant
    total_ways = None
    if ways is not None:
        total_ways = sum(ways[t] * math.comb(fillers, s - t) for t in range(s + 1))
    return lo, hi, total_ways, exact


def _component_table(local: Mapping[int, int], width: int, want_ways: bool):
    """For chunks of one linked component (local masks -> counts): most and fewest groups
    covered by exactly t of them, and the number of t-subsets that cover all its groups
    (inclusion-exclusion over the groups left out), t = 0..count."""
    size = 1 << width
    every = np.arange(size)
    pop = np.zeros(size, np.int64)
    for b in range(width):
        pop += (every >> b) & 1
    count = sum(local.values())
    need = np.full(size, 1 << 30, np.int64)  # fewest chunks whose union is exactly the set
    need[0] = 0
    for m in local:
        np.minimum.at(need, every | m, need + 1)
    inside = np.zeros(size, np.int64)  # chunks whose groups all lie in the set
    for m, c in local.items():
        inside[m] += c
    for b in range(width):
        with_b = every[(every >> b) & 1 == 1]
        inside[with_b] += inside[with_b ^ (1 << b)]
    maxc = [int(pop[need <= t].max()) for t in range(count + 1)]
    minc = [int(pop[inside >= t].min()) for t in range(count + 1)]
    if not want_ways:
        return maxc, minc, None
    # t-subsets covering all groups = sum over sets S of (-1)^(width - |S|) C(inside(S), t)
    sign = np.where((width - pop) % 2 == 0, 1, -1)
    coef = np.bincount(inside, weights=sign, minlength=count + 1).astype(np.int64)
    wc = [
        sum(int(coef[v]) * math.comb(v, t) for v in range(t, count + 1) if coef[v])
        for t in range(count + 1)
    ]
    return maxc, minc, wc


def _outer_table(local: Mapping[int, int], width: int):
    """Bounds that always hold for a component too large for exact tables."""
    count = sum(local.values())
    sizes = sorted((m.bit_count() for m, c in local.items() for _ in range(c)), reverse=True)
    maxc = [min(width, sum(sizes[:t])) for t in range(count + 1)]
    minc = [0] + [min(sizes)] * count
    return maxc, minc, None


def _set_range(
    rel: Sequence[bool], block: tuple[int, int] | None, cut: int, denom: int, hit: bool
) -> Range | None:
    """A set metric over the top `cut` with `block` the tie group straddling it (None: no
    order changes it): relevant chunks in the top cut / `denom`, or with `hit` 1 when there
    is one (success@K). `rel` covers at least the positions down to the block's end."""
    if block is None:
        return None
    a, b = block
    n, s, r = b - a, cut - a, sum(rel[a:b])
    if r in (0, n):
        return None
    fixed = sum(rel[:a])
    lo, hi, ex = fixed + max(0, s - (n - r)), fixed + min(s, r), fixed + s * r / n
    if hit:
        miss = math.comb(n - r, s) / math.comb(n, s)
        return Range(float(lo > 0), float(hi > 0), 1.0 if fixed else 1.0 - miss)
    return Range(lo / denom, hi / denom, ex / denom)
