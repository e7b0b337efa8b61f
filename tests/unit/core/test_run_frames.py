"""Runs from and to pandas DataFrames: PyTerrier's columns and ir_measures', the same run as
the same data given as a dict, and one error line for what a run cannot hold."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import harness
from harness.core.errors import HarnessError
from harness.core.run import Run
from harness.core.types import Benchmark, Chunk, Query

SCORES = {"q1": {"a": 1.0, "b": 2.0, "c": 2.0}, "q2": {"a": 0.5}}
ROWS = [(q, d, s) for q, docs in SCORES.items() for d, s in docs.items()]


@pytest.mark.parametrize("columns", [("qid", "docno", "score"), ("query_id", "doc_id", "score")])
def test_either_layout_gives_the_run_the_dict_gives(columns):
    df = pd.DataFrame(ROWS, columns=columns).assign(rank=7)  # other columns are ignored
    run = Run.from_df(df, name="r")
    assert run.to_dict() == Run.from_dict(SCORES).to_dict()
    assert list(run["q1"].ids) == ["c", "b", "a"]  # ties by id descending, as everywhere
    assert run.name == "r"


def test_to_df_has_pyterrier_columns_and_round_trips():
    run = Run.from_dict(SCORES, name="r")
    df = run.to_df()
    assert list(df.columns) == ["qid", "docno", "score", "rank"]
    assert df["rank"].tolist() == [0, 1, 2, 0]  # PyTerrier counts ranks from 0
    assert df["docno"].tolist() == ["c", "b", "a", "a"]
    assert Run.from_df(df).to_dict() == run.to_dict()
    empty = Run.from_dict({}).to_df()
    assert list(empty.columns) == ["qid", "docno", "score", "rank"] and len(empty) == 0


def test_numeric_ids_are_text():
    df = pd.DataFrame({"qid": [1.0, 1.0], "docno": [7, 8], "score": [1, 2]})
    assert Run.from_df(df).to_dict() == {"1": {"8": 2.0, "7": 1.0}}


@pytest.mark.parametrize(
    "frame,message",
    [
        (
            pd.DataFrame({"q": ["q1"], "d": ["a"]}),
            r"needs the columns qid, docno, score .*has q, d",
        ),
        (pd.DataFrame({"qid": [None], "docno": ["a"], "score": [1]}), r"row 0: no qid"),
        (
            pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "a"], "score": [1, 2]}),
            r"row 1: query 'q' lists chunk 'a' twice",
        ),
        (  # two frames concatenated: index labels repeat, the row is named by position
            pd.concat([pd.DataFrame({"qid": ["q"], "docno": ["a"], "score": [1]})] * 2),
            r"row 1: query 'q' lists chunk 'a' twice",
        ),
        (
            pd.DataFrame({"qid": ["q"], "docno": ["a"], "score": [math.inf]}),
            r"^run DataFrame row 0: query 'q', chunk 'a': score inf is not finite; give finite",
        ),
        (
            pd.DataFrame({"qid": ["q"], "docno": ["a"], "score": ["high"]}),
            r"^run DataFrame row 0: query 'q', chunk 'a': score 'high' is text, not a number",
        ),
    ],
)
def test_what_a_run_cannot_hold_is_one_error(frame, message):
    with pytest.raises(HarnessError, match=message):
        Run.from_df(frame)


def test_evaluate_takes_a_dataframe_as_it_takes_the_dict():
    bench = Benchmark(
        "b",
        {c: Chunk(c, c) for c in "abc"},
        (Query("q1", "x", (frozenset({"a"}),)), Query("q2", "y", (frozenset({"a"}),))),
        "c",
        "s",
    )
    df = pd.DataFrame(ROWS, columns=["qid", "docno", "score"])
    by_frame = harness.evaluate(bench, df, k=[1, 3], name="r")
    by_dict = harness.evaluate(bench, SCORES, k=[1, 3], name="r")
    assert by_frame.means.equals(by_dict.means)
    assert by_frame.per_query.equals(by_dict.per_query)


def test_the_api_notes_run_queries_the_benchmark_lacks_as_a_run_file_does(tmp_path):
    bench = Benchmark(
        "b", {c: Chunk(c, c) for c in "abc"}, (Query("q1", "x", (frozenset({"a"}),)),), "c", "s"
    )
    scores = {"q1": {"a": 1.0}, "q9": {"a": 1.0}}
    path = Run.from_dict(scores).to_trec(tmp_path / "r.trec")
    from_file = harness.evaluate(bench, path, k=[1]).notes
    for given in (
        scores,
        pd.DataFrame([("q1", "a", 1), ("q9", "a", 1)], columns=["qid", "docno", "score"]),
    ):
        notes = harness.evaluate(bench, given, k=[1], name="r").notes
        assert notes == from_file
        assert notes == [
            "1 query id(s) in the run are not queries the benchmark scores (unknown, or without "
            "judgments) and were left out (e.g. 'q9')"
        ]
