"""Strata from the benchmark's own data (harness/strata/fields.py and stratify): answerable,
GaRAGe's grounding bins of pass_r, and query fields (categorical, numeric tertiles), on
hand-built benchmarks with hand-computed expectations."""

import math

import pytest

from harness.core.errors import ConfigError, HarnessError
from harness.core.labels import label_order
from harness.core.types import Benchmark, Chunk, Query
from harness.strata.fields import field_cuts, field_strata, grounding_label
from harness.strata.hop import stratify

G = (frozenset({"a"}),)


def _bench(*queries: Query) -> Benchmark:
    corpus = {c: Chunk(c, c) for c in "abcdef"}
    return Benchmark("tiny", corpus, tuple(queries), "sha256:0", "mem")


def _with(name: str, values: list) -> Benchmark:
    """One query per value; a value of ... leaves the field out of that query."""
    return _bench(
        *(
            Query(f"q{i}", "x", G, fields={} if v is ... else {name: v})
            for i, v in enumerate(values)
        )
    )


def _labelled(passing: int, failing: int, *, unlabelled_relevant: int = 0) -> Query:
    """A judged query with `passing` labelled chunks of grade > 0 and `failing` of grade 0."""
    labels = {f"p{i}": "RELATED" for i in range(passing)}
    labels |= {f"f{i}": "IRRELEVANT" for i in range(failing)}
    graded = {f"p{i}": 1 + i % 2 for i in range(passing)} | {f"f{i}": 0 for i in range(failing)}
    qrels = graded | {f"u{i}": 2 for i in range(unlabelled_relevant)}
    return Query(f"q{passing}-{failing}", "x", G, qrels=qrels, labels=labels, label_grades=graded)


# ---- without fields, answerable, grounding


def test_ordinary_benchmark_is_unchanged():
    bench = _bench(
        Query("q1", "x", G),
        Query("q2", "x", (frozenset("a"), frozenset("bc"))),
        Query("q3", "x", ()),
        Query("q4", "x", tuple(frozenset({c}) for c in "abcdef")),
    )
    assert stratify(bench) == {"hop": ["1", "2", "0", "5+"]}
    assert stratify(bench, fields=()) == {"hop": ["1", "2", "0", "5+"]}
    assert field_cuts(bench, ()) == {}


def test_answerable_stratum_only_when_some_query_is_not_answerable():
    yes = Query("q1", "x", G)
    partial = Query("q2", "x", G, absent=(frozenset({"z"}),), answerable="partial")
    no = Query("q3", "x", (), absent=(frozenset({"z"}),), answerable="no")
    strata = stratify(_bench(yes, partial, no))
    assert list(strata) == ["hop", "answerable"]
    assert strata["answerable"] == ["yes", "partial", "no"]
    assert strata["hop"] == ["1", "2", "1"]  # absent pieces count as hops
    assert "answerable" not in stratify(_bench(yes, yes))


@pytest.mark.parametrize(
    ("passing", "failing", "expected"),
    [
        (0, 4, "<33%"),
        (32, 68, "<33%"),  # 32 %
        (33, 67, "33-66%"),  # exactly 33 %: medium (33 % <= pass_r)
        (1, 2, "33-66%"),  # 33.3 %
        (65, 35, "33-66%"),
        (33, 17, ">66%"),  # exactly 66 %: high (our choice where the paper leaves a gap)
        (2, 1, ">66%"),  # 66.7 %
        (5, 0, ">66%"),
    ],
)
def test_grounding_bins(passing, failing, expected):
    assert grounding_label(_labelled(passing, failing)) == expected


def test_grounding_counts_labelled_chunks_only():
    # 1 of 4 labelled chunks passes (25 %); the unlabelled qrels entries do not count
    assert grounding_label(_labelled(1, 3, unlabelled_relevant=5)) == "<33%"
    # the label's own grade counts, not the dated one: an OUTDATED passage of a fast
    # question (qrels grade 0) is still relevant grounding
    q = Query(
        "q",
        "x",
        G,
        qrels={"a": 1, "b": 0},
        labels={"a": "RELATED", "b": "OUTDATED"},
        label_grades={"a": 1, "b": 1},
    )
    assert grounding_label(q) == ">66%"
    # an unanswerable query has empty qrels, but its labels still grade its grounding
    q = Query(
        "q", "x", (), qrels={}, labels={"a": "RELATED"}, answerable="no", label_grades={"a": 1}
    )
    assert grounding_label(q) == ">66%"


def test_grounding_stratum_when_some_query_has_labels():
    plain = Query("q0", "x", G)
    strata = stratify(_bench(plain, _labelled(3, 0), _labelled(1, 1)))
    assert list(strata) == ["hop", "grounding"]
    assert strata["grounding"] == ["n/a", ">66%", "33-66%"]
    assert "grounding" not in stratify(_bench(plain, Query("q1", "x", G, labels={})))


def test_grounding_needs_judged_queries():
    q = Query("q", "x", G, labels={"a": "RELATED"})  # labels, never judged
    with pytest.raises(HarnessError, match="judge the benchmark first"):
        stratify(_bench(q))


# ---- categorical fields


def test_categorical_fields():
    bench = _bench(
        Query("q1", "x", G, fields={"dynamism": "fast", "private": True, "n": 1}),
        Query("q2", "x", G, fields={"dynamism": "static", "private": False, "n": "many"}),
        Query("q3", "x", G, fields={"dynamism": None, "n": 2.0}),
        Query("q4", "x", G, fields={"dynamism": "", "n": 2.5}),
        Query("q5", "x", G),
    )
    strata = field_strata(bench, ["dynamism", "private", "n"])
    assert strata.labels == {
        "dynamism": ["fast", "static", "n/a", "n/a", "n/a"],
        "private": ["true", "false", "n/a", "n/a", "n/a"],
        # numbers mixed with a string: categorical, each number its own label
        "n": ["1", "many", "2", "2.5", "n/a"],
    }
    assert strata.cuts == {"dynamism": None, "private": None, "n": None}
    # booleans with numbers are categorical too (a bool is not a number here)
    assert field_strata(_with("f", [True, 2, 3, 4]), ["f"]).labels["f"] == ["true", "2", "3", "4"]


def test_fields_come_after_the_built_in_strata_in_the_order_asked():
    bench = _bench(
        Query("q1", "x", G, fields={"a": "x", "b": "y"}),
        Query("q2", "x", (), absent=(frozenset("z"),), answerable="no", fields={"b": "z"}),
    )
    strata = stratify(bench, ["b", "a"])
    assert list(strata) == ["hop", "answerable", "b", "a"]
    assert strata["b"] == ["y", "z"] and strata["a"] == ["x", "n/a"]


# ---- numeric fields: tertiles at the 1/3 and 2/3 quantiles (linear interpolation)


def _quantile(values: list[float], p: float) -> float:
    """Reference: the linear-interpolation quantile, h = p (n - 1) over the sorted values."""
    v = sorted(values)
    h = p * (len(v) - 1)
    lo = math.floor(h)
    return v[lo] if lo + 1 >= len(v) else v[lo] + (h - lo) * (v[lo + 1] - v[lo])


def _reference(values: list[float]) -> list[str]:
    q1, q2 = _quantile(values, 1 / 3), _quantile(values, 2 / 3)
    return ["low" if v <= q1 else "mid" if v <= q2 else "high" for v in values]


@pytest.mark.parametrize(
    ("values", "expected", "cuts"),
    [
        # 1..9: cuts 3.667 / 6.333
        (
            [9, 1, 5, 2, 8, 3, 7, 4, 6],
            ["high", "low", "mid", "low", "high", "low", "high", "mid", "mid"],
            [11 / 3, 19 / 3],
        ),
        # exactly 3 distinct values: cuts 5/3 and 7/3
        ([3, 1, 2], ["high", "low", "mid"], [5 / 3, 7 / 3]),
        # ties on a cut: every 2 is low (closed on the right), never split
        ([1, 2, 2, 2, 3, 4, 5], ["low", "low", "low", "low", "mid", "high", "high"], [2, 3]),
        # ties fill more than a tertile: the 1s are all low, mid stays empty
        ([1, 1, 1, 1, 2, 3], ["low", "low", "low", "low", "high", "high"], [1, 4 / 3]),
        # a dominant maximum takes everything into low (documented degenerate case)
        ([1, 2, 3, 3, 3, 3, 3], ["low"] * 7, [3, 3]),
        # floats and ints mix; 2 and 2.0 are one value, both cuts fall on it
        ([0.5, 2, 2.0, 10.25], ["low", "low", "low", "high"], [2, 2]),
    ],
)
def test_numeric_tertiles(values, expected, cuts):
    strata = field_strata(_with("score", values), ["score"])
    assert strata.labels["score"] == expected == _reference([float(v) for v in values])
    assert strata.cuts["score"] == pytest.approx(cuts)


def test_numeric_equal_values_share_a_tertile_against_the_reference():
    values = [0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 5, 5, 8, 8, 8, 8, 13]
    labels = field_strata(_with("f", values), ["f"]).labels["f"]
    assert labels == _reference([float(v) for v in values])
    for v in set(values):
        assert len({lab for lab, w in zip(labels, values) if w == v}) == 1


def test_numeric_undefined_values_are_na_and_not_cut():
    values = [1, None, 2, ..., 3, math.nan, math.inf]
    strata = field_strata(_with("f", values), ["f"])
    assert strata.labels["f"] == ["low", "n/a", "mid", "n/a", "high", "n/a", "n/a"]
    assert strata.cuts["f"] == pytest.approx([5 / 3, 7 / 3])  # from 1, 2, 3 only


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0, 1, 1, None], ["0", "1", "1", "n/a"]),
        ([0.5, 2.0, 0.5, 2], ["0.5", "2", "0.5", "2"]),
        ([7, 7, 7], ["7", "7", "7"]),
        ([-1, 1e-05], ["-1", "1e-05"]),
    ],
)
def test_numeric_with_fewer_than_3_distinct_values_uses_the_values(values, expected):
    strata = field_strata(_with("f", values), ["f"])
    assert strata.labels["f"] == expected and strata.cuts["f"] is None


def test_field_with_no_defined_value_is_all_na():
    strata = field_strata(_with("f", [None, None, ...]), ["f"])
    assert strata.labels["f"] == ["n/a"] * 3 and strata.cuts["f"] is None


def test_field_cuts_match_field_strata():
    bench = _with("f", [1, 2, 3, 4, 5, 6, 7])
    assert field_cuts(bench, ["f"]) == field_strata(bench, ["f"]).cuts
    assert field_cuts(bench, ["f"])["f"] == pytest.approx([3.0, 5.0])


# ---- errors


def test_unknown_field_names_the_fields_and_a_suggestion():
    bench = _bench(
        Query("q1", "x", G, fields={"dynamism": "fast", "popularity": "tail"}),
        Query("q2", "x", G, fields={"complexity": None}),
    )
    with pytest.raises(ConfigError) as err:
        stratify(bench, ["dynamsim"])
    msg = str(err.value)
    assert "\n" not in msg and "'dynamsim'" in msg and "tiny" in msg
    assert "did you mean 'dynamism'?" in msg
    assert "complexity, dynamism, popularity" in msg  # a field whose values are all null counts
    with pytest.raises(ConfigError, match="its queries have no fields"):
        stratify(_bench(Query("q1", "x", G)), ["dynamism"])


@pytest.mark.parametrize("name", ["hop", "answerable", "grounding", "cluster", "dispersion",
                                  "alignment"])  # fmt: skip
def test_field_named_like_a_built_in_stratification(name):
    bench = _with(name, ["a", "b"])  # even when the data has such a field
    with pytest.raises(ConfigError, match=f"lists '{name}', the name of a built-in"):
        stratify(bench, [name])


def test_field_listed_twice_or_not_a_list():
    bench = _with("f", ["a", "b"])
    with pytest.raises(ConfigError, match="lists 'f' twice"):
        stratify(bench, ["f", "f"])
    with pytest.raises(ConfigError, match="must be a list of field names"):
        stratify(bench, "f")


# ---- reading order of the labels


def test_label_order_of_the_new_labels():
    assert label_order([">66%", "n/a", "33-66%", "<33%"]) == ["<33%", "33-66%", ">66%", "n/a"]
    assert label_order(["no", "yes", "partial"]) == ["yes", "partial", "no"]
    assert label_order(["high", "n/a", "low", "mid"]) == ["low", "mid", "high", "n/a"]
    assert label_order(["10.5", "n/a", "2", "-1", "1e-05", "0.5"]) == [
        "-1", "1e-05", "0.5", "2", "10.5", "n/a"
    ]  # fmt: skip
    assert label_order(["5+", "10", "2", "n/a", "fast", "b"]) == ["2", "5+", "10", "b", "fast",
                                                                 "n/a"]  # fmt: skip
