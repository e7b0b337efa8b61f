"""Tie ranges in a stored cell: written beside the means, read back, absent in older cells,
refused when damaged, and the same when the cell is rescored from its run.trec."""

import json

import numpy as np
import pytest

import harness
from harness.cell.result import Evaluation
from harness.cell.store import read_metrics
from harness.core.errors import HarnessError
from harness.core.run import Run
from harness.core.types import Benchmark, Chunk, Query
from metrics.registry import parse_metric
from metrics.ties import tie_bounds

A, B = 8.424902785093723, 8.424902785093724  # one ulp apart: not a tie


def _bench():
    corpus = {c: Chunk(c, c) for c in "abcdefgh"}
    queries = (
        Query("q1", "x", (frozenset("a"), frozenset("b"))),
        Query("q2", "x", (frozenset("e"),)),
        Query("q3", "x", (frozenset("g"),)),
    )
    return Benchmark("t", corpus, queries, "sha256:0", "mem")


def _run():
    return Run.from_dict(
        {
            "q1": {"a": 9.0, "b": A, "c": A, "d": 1.0},  # gold b tied with c across K = 2
            "q2": {"e": A, "f": B, "g": 0.5},  # no tie: f is one ulp above e
            "q3": {"h": 2.0, "g": 0.25, "a": 0.25},  # gold g tied with a across K = 2
        },
        name="r",
    )


def test_saved_cell_records_ties_and_loads_with_and_without_them(tmp_path):
    ev = harness.evaluate(_bench(), _run(), ["coverage", "group_mrr"], k=[2], bootstrap=0)
    folder = ev.save(tmp_path / "cell")
    doc = read_metrics(folder)
    overall = doc["results"]["overall"]
    # q1: [0.5, 1] (b or c at rank 2), q2: 1 (not a tie), q3: [0, 1] (g or a at rank 2)
    assert overall["ties"]["coverage@2"] == [(0.5 + 1 + 0) / 3, (1 + 1 + 1) / 3]
    assert overall["ties_expected"]["coverage@2"] == pytest.approx((0.75 + 1 + 0.5) / 3)
    assert overall["tie_queries"] == {"coverage@2": 2, "group_mrr@2": 2}
    assert doc["results"]["hop"]["1"]["tie_queries"] == {"coverage@2": 1, "group_mrr@2": 1}
    assert ev.ties.loc[("overall", "coverage@2"), "queries"] == 2
    per = ev.per_query_ties  # each query's own range and expectation
    assert list(per.index) == ["q1", "q2", "q3"]
    assert list(per["coverage@2 low"]) == [0.5, 1.0, 0.0]
    assert list(per["coverage@2 high"]) == [1.0, 1.0, 1.0]
    assert list(per["coverage@2 expected"]) == pytest.approx([0.75, 1.0, 0.5])
    assert per.columns[3:].tolist() == [
        "group_mrr@2 low",
        "group_mrr@2 high",
        "group_mrr@2 expected",
    ]
    # a cell written by an earlier version without the fields still loads, saying so
    for summary in [overall, *doc["results"]["hop"].values()]:
        for key in ("ties", "ties_expected", "tie_queries"):
            summary.pop(key)
    (folder / "metrics.json").write_text(
        json.dumps(doc | {"schema": "retrieval-harness/metrics/1"})
    )
    old = Evaluation.from_disk(folder)
    assert "ties" not in old.doc["results"]["overall"] and "tie ranges" in old.earlier
    assert old.doc["schema"] == "retrieval-harness/metrics/3"
    # a damaged range is one error naming the field
    doc["results"]["overall"]["ties"] = {"coverage@2": [0.5]}
    (folder / "metrics.json").write_text(json.dumps(doc))
    with pytest.raises(HarnessError, match="results.overall.ties"):
        read_metrics(folder)


def test_rescoring_from_run_trec_gives_the_same_ties(tmp_path):
    bench, run = _bench(), _run()
    metrics = [parse_metric(n) for n in ("coverage@2", "group_ndcg@3", "group_mrr@2", "R@2", "map")]
    ev = harness.evaluate(bench, run, [m.name for m in metrics], bootstrap=0)
    folder = ev.save(tmp_path / "cell")
    again = Run.from_trec(folder / "run.trec")
    assert again["q2"].scores == (B, A, 0.5)  # full precision survives the file
    before = tie_bounds(bench, run, metrics, ev.values)
    after = tie_bounds(
        bench,
        again,
        metrics,
        harness.evaluate(bench, again, [m.name for m in metrics], bootstrap=0).values,
    )
    for m in metrics:
        for field in ("low", "high", "expected"):
            np.testing.assert_array_equal(
                getattr(before[m.name], field), getattr(after[m.name], field)
            )
