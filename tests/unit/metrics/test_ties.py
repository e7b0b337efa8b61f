"""Tie-aware ranges against brute force: every order of every tie group is enumerated and
scored with the project's own metric functions (metrics.group, metrics.standard)."""

import itertools
import math
import random

import numpy as np
import pytest

from harness.core.run import Ranking, Run, canonical
from harness.core.types import Benchmark, Chunk, Query
from metrics import standard, ties
from metrics.evaluate import aggregate, per_query
from metrics.registry import metrics_for, parse_metric

GROUP = ("coverage", "perfrecall", "group_ndcg", "group_mrr")
STANDARD = ("ndcg_cut", "recall", "P", "success", "recip_rank", "map_cut")
KS = (1, 2, 3, 5, 8)


def _orders(ranking: Ranking):
    """Every ranking reachable by reordering tied scores (ids only)."""
    ids = list(ranking.ids)
    spans = ties.tie_groups(ranking.scores)
    for perms in itertools.product(*(itertools.permutations(ids[a:b]) for a, b in spans)):
        out = list(ids)
        for (a, b), p in zip(spans, perms):
            out[a:b] = p
        yield tuple(out)


def _brute(query: Query, ranking: Ranking, metrics):
    """metric name -> (min, max, mean) over every order of the tie groups."""
    orders = list(_orders(ranking))
    out = {}
    std = [m for m in metrics if m.family.kind == "standard"]
    for m in metrics:
        if m.family.kind == "group":
            vals = np.array([m(query, o) for o in orders])
            out[m.name] = (vals.min(), vals.max(), vals.mean())
    for level in {m.level for m in std}:
        at = [m for m in std if m.level == level]
        got = standard.evaluate(
            orders, [query.judgments] * len(orders), [(m.family.name, m.k) for m in at], level=level
        )
        for m in at:
            vals = got[(m.family.name, m.k)]
            out[m.name] = (vals.min(), vals.max(), vals.mean())
    return out


def _random_case(rng: random.Random, graded: bool):
    pool = [f"c{i:02d}" for i in range(14)]
    n = rng.randint(3, 10)
    ranked = rng.sample(pool, n)
    distinct = rng.randint(1, 4)
    scores = {c: float(rng.randint(0, distinct)) for c in ranked}
    ranking = canonical(scores, depth=n)
    groups = []
    for _ in range(rng.randint(1, 4)):
        # members drawn mostly from the ranked chunks; shared chunks make groups overlap
        size = rng.randint(1, 3)
        members = frozenset(rng.choice(ranked if rng.random() < 0.8 else pool) for _ in range(size))
        if members not in groups:
            groups.append(members)
    qrels = None
    if graded:
        judged = rng.sample(pool, rng.randint(1, 8))
        qrels = {c: rng.choice([0, 1, 1, 2, 3]) for c in judged}
    return Query("q", "x", tuple(groups), qrels), ranking


def _count(ranking: Ranking) -> int:
    return math.prod(math.factorial(b - a) for a, b in ties.tie_groups(ranking.scores))


def _check(query: Query, ranking: Ranking, metrics) -> int:
    """Compare tie_bounds with brute force for one query; returns how many metrics depend
    on ties."""
    corpus = {c: Chunk(c, c) for c in [f"c{i:02d}" for i in range(14)]}
    bench = Benchmark("t", corpus, (query,), "sha256:0", "mem")
    run = Run("r", {"q": ranking}, depth=len(ranking.ids))
    values = per_query(bench, run, metrics)
    got = ties.tie_bounds(bench, run, metrics, values)
    want = _brute(query, ranking, metrics)
    dependent = 0
    for m in metrics:
        lo, hi, mean = want[m.name]
        t = got[m.name]
        where = f"{m.name} groups={query.groups} ids={ranking.ids} scores={ranking.scores}"
        if math.isnan(lo):
            assert math.isnan(t.low[0]) and math.isnan(t.high[0]), where
            continue
        assert t.exact[0], where
        assert t.low[0] == pytest.approx(lo, abs=1e-12), where
        assert t.high[0] == pytest.approx(hi, abs=1e-12), where
        assert t.known[0], where
        assert t.expected[0] == pytest.approx(mean, abs=1e-12), where
        assert bool(t.dependent[0]) == (hi - lo > 1e-12), where
        dependent += bool(t.dependent[0])
    return dependent


@pytest.mark.parametrize("seed", range(8))
def test_random_rankings_match_brute_force(seed):
    rng = random.Random(seed)
    metrics = [
        *metrics_for(GROUP + STANDARD, list(KS), depth=10),
        *metrics_for(["recall", "P", "success", "map_cut"], [2, 5], depth=10, level=2),
        parse_metric("map"),
        parse_metric("Rprec"),
        parse_metric("map(rel=2)"),
        parse_metric("Rprec(rel=2)"),
    ]
    checked = dependent = 0
    while checked < 60:
        query, ranking = _random_case(rng, graded=rng.random() < 0.5)
        if _count(ranking) > 3000:
            continue
        dependent += _check(query, ranking, metrics)
        checked += 1
    assert dependent > 100  # the cases do exercise ties


def test_overlapping_groups_in_one_tie_group():
    """Chunks in several gold groups, all tied: group NDCG's matched set after the tie group
    depends on its order, and coverage on which subset makes the cut."""
    q = Query(
        "q",
        "x",
        (
            frozenset({"c01", "c02"}),
            frozenset({"c01", "c03"}),
            frozenset({"c02", "c04"}),
            frozenset({"c05"}),
        ),
    )
    scores = {"c00": 3.0, "c01": 2.0, "c02": 2.0, "c03": 2.0, "c04": 2.0, "c06": 2.0}
    scores |= {"c05": 1.0, "c07": 1.0, "c08": 1.0}
    ranking = canonical(scores, depth=9)
    metrics = metrics_for(GROUP + STANDARD, [1, 2, 3, 4, 5, 6, 7, 8], depth=9)
    assert _check(q, ranking, metrics) > 10


def test_query_069_like_tie_across_rank_10():
    """General-Wiki query_069 under BM25: its second gold chunk (Christopher_Pyne) ties with
    Christopher_Amott across ranks 10 and 11; the id order keeps Pyne at rank 10."""
    ids = ["Ava"] + [f"x{i}" for i in range(8)] + ["Christopher_Pyne", "Christopher_Amott", "y"]
    scores = [18.5] + [12.0 - i for i in range(8)] + [3.25, 3.25, 3.0]
    ranking = canonical(dict(zip(ids, scores)), depth=12)
    assert ranking.ids[9:11] == ("Christopher_Pyne", "Christopher_Amott")
    q = Query("query_069", "x", (frozenset({"Ava"}), frozenset({"Christopher_Pyne"})))
    metrics = metrics_for(GROUP, [10], depth=12)
    values = {m.name: m(q, ranking.ids) for m in metrics}
    got = {m.name: ties.query_range(q, ranking, m, values[m.name]) for m in metrics}
    idcg = 1 + 1 / math.log2(3)
    assert (got["coverage@10"].low, got["coverage@10"].high) == (0.5, 1.0)
    assert got["coverage@10"].expected == 0.75
    assert (got["perfrecall@10"].low, got["perfrecall@10"].high) == (0.0, 1.0)
    assert got["perfrecall@10"].expected == 0.5
    assert got["group_ndcg@10"].low == pytest.approx(1 / idcg)
    assert (
        got["group_ndcg@10"].high
        == values["group_ndcg@10"]
        == pytest.approx((1 + 1 / math.log2(11)) / idcg)
    )
    assert got["group_ndcg@10"].expected == pytest.approx((1 + 0.5 / math.log2(11)) / idcg)
    assert (got["group_mrr@10"].low, got["group_mrr@10"].high) == (0.5, pytest.approx(0.55))
    assert got["group_mrr@10"].expected == pytest.approx(0.525)
    # at K = 5 the tie is far below the cut: nothing depends on it
    five = metrics_for(GROUP, [5], depth=12)
    for m in five:
        v = m(q, ranking.ids)
        assert ties.query_range(q, ranking, m, v) == ties.Range(v, v, v)


def _subsets_brute(query, ranking, metric, a, b):
    """For a set metric whose only tie group straddling K is [a, b): enumerate which
    members make the top K (every subset of the right size is equally likely)."""
    ids = list(ranking.ids)
    s = metric.k - a
    vals = []
    for chosen in itertools.combinations(ids[a:b], s):
        rest = [c for c in ids[a:b] if c not in chosen]
        order = ids[:a] + list(chosen) + rest + ids[b:]
        if metric.family.kind == "group":
            vals.append(metric(query, order))
        else:
            got = standard.evaluate(
                [order], [query.judgments], [(metric.family.name, metric.k)], level=metric.level
            )
            vals.append(got[(metric.family.name, metric.k)][0])
    return min(vals), max(vals), sum(vals) / len(vals)


def test_large_zero_tail_is_exact_without_enumerating_orders():
    """A BM25-like run: 6 scored chunks, then 30 at score 0 (some gold, overlapping groups):
    30! orders, but the set metrics at K = 10 only see which 4 of the 30 make the cut; they
    come out exact against every such subset."""
    ids = [f"d{i:02d}" for i in range(36)]
    scores = {c: (10.0 - i if i < 6 else 0.0) for i, c in enumerate(ids)}
    ranking = canonical(scores, depth=36)
    tail = list(ranking.ids[6:])
    groups = (
        frozenset({ranking.ids[0], tail[3]}),
        frozenset({tail[3], tail[7], tail[11]}),
        frozenset({tail[20], tail[21]}),
        frozenset({tail[25]}),
        frozenset({tail[7], tail[29]}),
    )
    q = Query("q", "x", groups)
    k = 10
    for name in ("coverage", "perfrecall", "recall", "P", "success"):
        m = parse_metric(f"{name}@{k}")
        value = per_query(
            Benchmark("t", {c: Chunk(c, c) for c in ids}, (q,), "s", "m"),
            Run("r", {"q": ranking}, 36),
            [m],
        )[m.name][0]
        got = ties.query_range(q, ranking, m, value)
        lo, hi, mean = _subsets_brute(q, ranking, m, 6, 36)
        assert (got.low, got.high) == (pytest.approx(lo), pytest.approx(hi)), name
        assert got.expected == pytest.approx(mean), name
        assert got.exact


def test_outer_bounds_when_a_component_is_too_large(monkeypatch):
    """Past the exact limits the bounds still hold (outer bounds, marked not exact)."""
    monkeypatch.setattr(ties, "LIMIT_BITS", 1)
    q = Query("q", "x", (frozenset({"a", "b"}), frozenset({"b", "c"}), frozenset({"c"})))
    ranking = canonical({"z": 2.0, "a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}, depth=5)
    for name in ("coverage@3", "group_mrr@5"):
        m = parse_metric(name)
        v = m(q, ranking.ids)
        got = ties.query_range(q, ranking, m, v)
        lo, hi, _ = _brute(q, ranking, [m])[name]
        assert got.low <= lo + 1e-12 and got.high >= hi - 1e-12
        assert not got.exact


def test_summaries_carry_tie_ranges_over_the_same_queries_as_the_mean():
    corpus = {c: Chunk(c, c) for c in "abcdef"}
    queries = (
        Query("q1", "x", (frozenset("a"), frozenset("b"))),  # b ties with c across K = 2
        Query("q2", "x", (frozenset("d"),)),  # no tie
        Query("q3", "x", ()),  # no gold: NaN, left out of both
    )
    bench = Benchmark("t", corpus, queries, "sha256:0", "mem")
    run = Run.from_scores(
        "r",
        {
            "q1": {"a": 3.0, "b": 1.0, "c": 1.0},
            "q2": {"d": 2.0, "e": 1.0, "f": 1.0},
            "q3": {"a": 1.0, "b": 1.0},
        },
        depth=3,
    )
    metrics = metrics_for(["coverage", "group_mrr"], [2], depth=3)
    values = per_query(bench, run, metrics)
    tied = ties.tie_bounds(bench, run, metrics, values)
    agg = aggregate(values, {"hop": ["2", "1", "0"]}, ties=tied)
    overall = agg["overall"]
    assert overall["mean"]["coverage@2"] == (0.5 + 1.0) / 2  # canonical: c before b
    assert overall["ties"]["coverage@2"] == [(0.5 + 1.0) / 2, (1.0 + 1.0) / 2]
    assert overall["ties_expected"]["coverage@2"] == (0.75 + 1.0) / 2
    assert overall["tie_queries"] == {"coverage@2": 1, "group_mrr@2": 1}
    assert agg["hop"]["1"]["tie_queries"]["coverage@2"] == 0
    assert agg["hop"]["0"]["ties"]["coverage@2"] is None
    assert agg["hop"]["0"]["ties_expected"]["coverage@2"] is None
    # without tie bounds the summary is as before
    assert "ties" not in aggregate(values, {})["overall"]


def test_only_queries_with_ties_that_can_matter_are_visited():
    corpus = {c: Chunk(c, c) for c in "abcdefg"}
    queries = tuple(Query(f"q{i}", "x", (frozenset("a"), frozenset("g"))) for i in range(4))
    bench = Benchmark("t", corpus, queries, "sha256:0", "mem")
    rankings = [
        Ranking(tuple("abcd"), (5.0, 4.0, 3.0, 3.0)),  # tie at ranks 3-4, no gold in it
        Ranking(tuple("gbcd"), (5.0, 5.0, 1.0, 0.0)),  # gold g tied with b at ranks 1-2
        Ranking(tuple("abgd"), (9.0, 8.0, 7.0, 7.0)),  # gold g tied with d at ranks 3-4
        Ranking(tuple("agcd"), (9.0, 8.0, 7.0, 6.0)),  # no tie
    ]
    names = ["coverage@1", "coverage@2", "coverage@3", "group_mrr@2", "group_mrr@4", "R@3", "map"]
    rows = ties.screen(bench, rankings, [parse_metric(n) for n in names])
    assert {n: r.tolist() for n, r in zip(names, rows)} == {
        "coverage@1": [1],  # only row 1's tie straddles K = 1
        "coverage@2": [],  # row 1's tie lies inside the top 2: the set is the same
        "coverage@3": [2],
        "group_mrr@2": [1],
        "group_mrr@4": [1, 2],
        "R@3": [2],
        "map": [1, 2],
    }
    assert ties.tie_groups((3.0, 3.0, 2.0, 1.0, 1.0, 1.0)) == [(0, 2), (3, 6)]
