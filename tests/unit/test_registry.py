"""Metric names parse into metric objects; bad names and cut-offs are clear errors."""

import pytest

from harness.errors import ConfigError
from metrics.registry import FAMILIES, metrics_for, parse_metric


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
