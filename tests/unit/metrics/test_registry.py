"""Metric names parse into metric objects; bad names and cut-offs are clear errors."""

import pytest

from harness.core.errors import ConfigError
from metrics.registry import FAMILIES, in_percent, metrics_for, parse_metric


def test_parse_metric():
    m = parse_metric("NDCG@10")
    assert m.name == "ndcg@10" and m.k == 10 and m.family is FAMILIES["ndcg"]


def test_unknown_metric_suggests_closest():
    with pytest.raises(ConfigError, match=r"unknown metric 'coverge'.*did you mean 'coverage'"):
        parse_metric("coverge@10")


@pytest.mark.parametrize("bad", ["coverage", "coverage@", "coverage@x", "@10"])
def test_malformed_metric_name(bad):
    with pytest.raises(ConfigError, match="name@k"):
        parse_metric(bad)


def test_metrics_for_orders_by_k_then_family():
    names = [m.name for m in metrics_for(["coverage", "mrr"], [10, 5], depth=10)]
    assert names == ["coverage@5", "mrr@5", "coverage@10", "mrr@10"]


@pytest.mark.parametrize("ks", [[0], [-1], [], [True]])
def test_nonpositive_k(ks):
    with pytest.raises(ConfigError, match="metrics.k"):
        metrics_for(["coverage"], ks, depth=10)


def test_depth_below_k():
    with pytest.raises(
        ConfigError, match=r"retrieval.depth=5 is smaller than the largest K \(10\)"
    ):
        metrics_for(["coverage"], [1, 10], depth=5)


@pytest.mark.parametrize(
    "text,name",
    [
        ("map", "map"),
        ("MAP@10", "map_cut@10"),
        ("ap@10", "map_cut@10"),
        ("p@5", "P@5"),
        ("rprec", "Rprec"),
        ("R-Precision", "Rprec"),
        ("rr@10", "recip_rank@10"),
        ("hit@3", "success@3"),
        ("ndcg_cut@10", "ndcg_cut@10"),
    ],
)
def test_standard_names_and_aliases(text, name):
    assert parse_metric(text).name == name


def test_uncut_metric_rejects_k_and_cut_metric_needs_k():
    with pytest.raises(ConfigError, match="reads the whole list; drop the @10"):
        parse_metric("rprec@10")
    with pytest.raises(ConfigError, match="needs a cut-off.*recall@10"):
        parse_metric("recall")


def test_standard_typo_suggests():
    with pytest.raises(ConfigError, match=r"did you mean 'ndcg_cut'"):
        parse_metric("ndgc_cut@10")


def test_metrics_for_mixes_cut_uncut_and_explicit_names():
    names = [
        m.name
        for m in metrics_for(["ndcg_cut", "map", "recall@100", "coverage"], [10, 5], depth=100)
    ]
    assert names == ["ndcg_cut@5", "coverage@5", "ndcg_cut@10", "coverage@10", "recall@100", "map"]


def test_explicit_k_above_depth():
    with pytest.raises(ConfigError, match="largest K \\(100\\)"):
        metrics_for(["recall@100"], [10], depth=50)


def test_binary_metrics_carry_a_relevance_level_other_than_1_in_their_name():
    names = [m.name for m in metrics_for(["P", "ndcg_cut", "coverage", "map"], [10], 100, 2)]
    assert names == ["P(rel=2)@10", "ndcg_cut@10", "coverage@10", "map(rel=2)"]
    assert [m.name for m in metrics_for(["P"], [10], 100, 1)] == ["P@10"]
    m = parse_metric("P(rel=3)@5")
    assert (m.name, m.level, m.k) == ("P(rel=3)@5", 3, 5)
    assert parse_metric(m.name) == m
    assert parse_metric("P@5", level=2).name == "P(rel=2)@5"


def test_a_level_on_a_graded_metric_is_refused():
    with pytest.raises(ConfigError, match="does not use a relevance level"):
        parse_metric("ndcg_cut(rel=2)@10")


def test_only_answer_rank_is_shown_as_it_is():
    assert [f.name for f in FAMILIES.values() if not f.percent] == ["answer_rank"]
    assert not in_percent("answer_rank") and not in_percent("Answer_Rank")
    # lower is better, yet a share; names the registry cannot parse count as shares
    assert in_percent("outdated@5") and in_percent("coverage@10") and in_percent("P(rel=2)@5")
    assert in_percent("no_such_metric@3") and in_percent("answer_rank@5")
