"""`python -m harness.trec_eval` against pytrec_eval (trec_eval 9.0.8): every measure it
computes, per query and over all queries, on generated qrels and runs (ties, negative and
graded labels, unjudged documents, queries in only one of the files, queries without a
relevant document), and trec_eval's output format, flags and file reading."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import ConfigError
from harness.core.run import Run
from metrics import trec_eval
from tests.helpers.cli import assert_one_line_error, run_module

pytrec_eval = pytest.importorskip("pytrec_eval")

DOCS = [f"d{i}" for i in range(10)] + ["D1", "d1x"]
CUTS = (1, 2, 3, 5, 10)
# every measure with small cut-offs, as -m arguments; ndcg is checked as ndcg_cut at a cut
# past every list (pytrec_eval's own `ndcg` stalls when evaluated again and again in one
# process; test_trec_eval_parity checks that the two are the same measure)
SPECS = [
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P.1,2,3,5,10",
    "recall.1,2,3,5,10",
    "infAP",
    "ndcg_cut.1,2,3,5,10,100",
    "map_cut.1,2,3,5,10",
    "success.1,2,3,5,10",
]
REFERENCE = set(SPECS) - {"num_q"}  # pytrec_eval's per-query values


@st.composite
def cases(draw):
    qrels, run = {}, {}
    for i in range(draw(st.integers(1, 5))):
        q = f"q{i}"
        if i == 0 or draw(st.booleans()):
            judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=7, unique=True))
            qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
        if i == 0 or draw(st.booleans()):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
            run[q] = {d: draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])) for d in docs}
    return qrels, run, draw(st.sampled_from([1, 2]))


def _reference(qrels, run, level):
    both = {q: r for q, r in run.items() if q in qrels}
    return pytrec_eval.RelevanceEvaluator(qrels, REFERENCE, relevance_level=level).evaluate(both)


@settings(max_examples=250, deadline=None)
@given(cases())
def test_every_measure_per_query_and_over_all_is_trec_eval(case):
    qrels, run, level = case
    if not any(q in qrels for q in run):
        with pytest.raises(Exception, match="no query has both results and judgments"):
            trec_eval.evaluate(qrels, Run.from_dict(run), trec_eval.requested(SPECS))
        return
    ref = _reference(qrels, run, level)
    report = trec_eval.evaluate(
        qrels, Run.from_dict(run, name="r"), trec_eval.requested(SPECS), level=level
    )
    per_query = {(m, q): v for m, q, v, _ in report.per_query}
    assert {q for _, q in per_query} == set(ref)
    for q, values in ref.items():
        for name, want in values.items():
            if name == "gm_map":  # not printed per query; pytrec_eval gives log(max(AP, 1e-5))
                want = math.exp(want)
                got = max(per_query.get(("map", q)), trec_eval.MIN_GEO_MEAN)
            else:
                got = per_query[(name, q)]
            assert got == pytest.approx(want, abs=1e-9), (name, q, qrels[q], run[q])
    summary = {m: v for m, v, _ in report.summary}
    n = len(ref)
    assert summary["num_q"] == n
    for name in ("num_ret", "num_rel", "num_rel_ret"):
        assert summary[name] == sum(v[name] for v in ref.values())
    for name in ("map", "bpref", "infAP", "P_5", "ndcg_cut_100", "iprec_at_recall_0.30"):
        mean = math.fsum(v[name] for v in ref.values()) / n
        assert summary[name] == pytest.approx(mean, abs=1e-12), name
    gm = math.exp(math.fsum(v["gm_map"] for v in ref.values()) / n)
    assert summary["gm_map"] == pytest.approx(gm, rel=1e-12)


def test_complete_counts_every_judged_query():
    """-c: every query of the qrels is averaged over, the ones the run lacks as 0; num_rel
    then counts every judgment above 0 (trec_eval's own rule), gm_map floors them at 1e-5."""
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 0}}
    run = Run.from_dict({"q1": {"a": 1.0, "x": 0.5}}, name="r")
    asked = trec_eval.requested(["num_q", "num_rel", "map", "gm_map", "P.1"])
    plain = {m: v for m, v, _ in trec_eval.evaluate(qrels, run, asked).summary}
    full = {m: v for m, v, _ in trec_eval.evaluate(qrels, run, asked, complete=True).summary}
    assert (plain["num_q"], full["num_q"]) == (1, 3)
    assert (plain["num_rel"], full["num_rel"]) == (2, 3)
    assert plain["map"] == 0.5 and full["map"] == pytest.approx(0.5 / 3)
    assert plain["P_1"] == 1.0 and full["P_1"] == pytest.approx(1 / 3)
    assert full["gm_map"] == pytest.approx(math.exp((math.log(0.5) + 2 * math.log(1e-5)) / 3))


def test_max_docs_cuts_each_ranking_after_ordering():
    qrels = {"q1": {"a": 1, "b": 1}}
    run = Run.from_dict({"q1": {"x": 3.0, "a": 2.0, "b": 1.0}}, name="r")
    asked = trec_eval.requested(["num_ret", "num_rel_ret", "map"])
    summary = {m: v for m, v, _ in trec_eval.evaluate(qrels, run, asked, max_ret=2).summary}
    assert summary == {"num_ret": 2, "num_rel_ret": 1, "map": pytest.approx(0.25)}


def test_measure_arguments_as_trec_eval_takes_them():
    asked = trec_eval.requested(["P.10,5,5", "map", "ndcg_cut.3", "iprec_at_recall.0.5,0.25"])
    assert list(asked) == ["map", "iprec_at_recall", "P", "ndcg_cut"]  # trec_eval's order
    assert asked["P"] == (5, 10) and asked["iprec_at_recall"] == (0.25, 0.5)
    assert list(trec_eval.requested([])) == list(trec_eval.OFFICIAL)
    assert trec_eval.requested(["P"])["P"] == trec_eval.CUTS
    with pytest.raises(ConfigError, match="'gm_bpref' not computed here"):
        trec_eval.requested(["gm_bpref"])
    with pytest.raises(ConfigError, match="all_trec's relstring, unj"):
        trec_eval.requested(["all_trec"])
    with pytest.raises(ConfigError, match="'x' is not a positive whole number"):
        trec_eval.requested(["P.5,x"])
    with pytest.raises(ConfigError, match="'0' is not a positive whole number"):
        trec_eval.requested(["P.0"])
    with pytest.raises(ConfigError, match=r"'ndcg_cut_10' not computed here \(write ndcg_cut.10\)"):
        trec_eval.requested(["ndcg_cut_10"])
    with pytest.raises(ConfigError, match="map takes no parameters"):
        trec_eval.requested(["map.5"])


QRELS = """\
# a comment line, as trec_eval skips it
q2 0 d1 1
q1 0 d1 2
q1 0 d2 0
q1\t0\td3   1
q3 0 d9 1
"""
RUN = """\
q1 Q0 d2 1 2.5 sysA extra fields are ignored
q1 Q0 d1 2 2.5 sysA
q1 Q0 d7 3 1.0 sysA
q1 Q0 d3 4 0.5 sysA
q2 Q0 d4 1 3.0 sysA
q2 Q0 d1 2 1.0 sysB
q9 Q0 d1 1 1.0 sysB
"""


def test_the_command_prints_what_trec_eval_prints(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    out = run_module(
        "harness.trec_eval", "-q", "-m", "map", "-mP.1,2", "-m", "num_ret", "qrels.txt",
        "run.trec", cwd=tmp_path,
    ).stdout  # fmt: skip
    # q1: d2 and d1 tie at 2.5, docno descending puts d2 first; d1 (grade 2) at rank 2, d3 at 4
    ap1 = (1 / 2 + 2 / 4) / 2
    ap2 = 1 / 2  # q2: d1 at rank 2; q3 is not in the run, q9 not in the qrels
    assert out == (
        "num_ret               \tq1\t4\n"
        f"map                   \tq1\t{ap1:6.4f}\n"
        "P_1                   \tq1\t0.0000\n"
        "P_2                   \tq1\t0.5000\n"
        "num_ret               \tq2\t2\n"
        f"map                   \tq2\t{ap2:6.4f}\n"
        "P_1                   \tq2\t0.0000\n"
        "P_2                   \tq2\t0.5000\n"
        "num_ret               \tall\t6\n"
        f"map                   \tall\t{(ap1 + ap2) / 2:6.4f}\n"
        "P_1                   \tall\t0.0000\n"
        "P_2                   \tall\t0.5000\n"
    )
    official = run_module("harness.trec_eval", "-c", "qrels.txt", "run.trec", cwd=tmp_path)
    lines = official.stdout.splitlines()
    assert lines[0] == "runid                 \tall\tsysB"  # the last line's tag
    assert lines[1] == "num_q                 \tall\t3"
    assert [ln.split("\t")[0].strip() for ln in lines[2:8]] == [
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
    ]
    assert lines[3] == "num_rel               \tall\t4"
    assert lines[-1].startswith("P_1000                \tall\t")
    assert len(lines) == 10 + 11 + 9
    # a gzipped run: the same output, its runid included
    import gzip

    (tmp_path / "run.trec.gz").write_bytes(gzip.compress(RUN.encode()))
    packed = run_module("harness.trec_eval", "-c", "qrels.txt", "run.trec.gz", cwd=tmp_path)
    assert packed.stdout == official.stdout
    quiet = run_module("harness.trec_eval", "-n", "-q", "-m", "map", "qrels.txt", "run.trec",
                       cwd=tmp_path).stdout  # fmt: skip
    assert quiet.splitlines() == [
        f"map                   \tq1\t{ap1:6.4f}",
        f"map                   \tq2\t{ap2:6.4f}",
    ]
    same = run_module("harness", "trec_eval", "-q", "-m", "map", "-mP.1,2", "-m", "num_ret",
                      "qrels.txt", "run.trec", cwd=tmp_path).stdout  # fmt: skip
    assert same == out


@pytest.mark.parametrize(
    "args, message",
    [
        (["-m", "gm_bpref", "qrels.txt", "run.trec"], "-m gm_bpref: 'gm_bpref' not computed here"),
        (["-l", "0", "qrels.txt", "run.trec"], "-l must be a grade of 1 or more"),
        (["-M", "0", "qrels.txt", "run.trec"], "-M must be a positive number"),
        (["nope.txt", "run.trec"], "nope.txt"),
        (["qrels.txt", "nope.trec"], "run file not found"),
        (["dup.txt", "run.trec"], "dup.txt:3: q1 d1 is judged twice"),
        (["short.txt", "run.trec"], "short.txt:2: expected 'qid iter docid rel' (TREC qrels)"),
        (["three.txt", "run.trec"], "three.txt:1: 'q1 d1 1' has 3 fields apart by spaces; BEIR"),
        (["-x", "qrels.txt", "run.trec"], "unrecognized arguments: -x"),
        (["run.trec", "qrels.txt"], "run.trec reads like a run and qrels.txt like qrels: trec_"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, message):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "dup.txt").write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d1 0\n")
    (tmp_path / "short.txt").write_text("q1 0 d1 1\nq1 0 d2\n")
    (tmp_path / "three.txt").write_text("q1 d1 1\n")  # BEIR's three fields split by tabs only
    (tmp_path / "run.trec").write_text(RUN)
    res = run_module("harness.trec_eval", *args, cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, message)
