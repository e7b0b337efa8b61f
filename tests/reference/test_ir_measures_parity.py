"""The measures people name the ecosystem's way give what ir_measures gives for the same name,
per query, on RedQA General-Wiki's BM25 run (RedQA gold: every group member has grade 1) and,
for ir_measures' own Judged and ERR (gdeval), on generated graded qrels and runs."""

import math
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness
from harness.core.run import canonical
from metrics import standard

ir_measures = pytest.importorskip("ir_measures")

NAMES = ["nDCG@10", "AP", "R@100", "RR@10", "P@10", "Success@10", "Rprec", "nDCG", "AP@100", "RR"]
NAMES += ["Bpref", "infAP", "IPrec@0.5", "Judged@10", "NumQ", "NumRet", "NumRel", "NumRelRet"]


def _ir_measures_data(bench, run):
    """The benchmark's judgments and the run as ir_measures' Qrel and ScoredDoc rows."""
    qrels = [
        ir_measures.Qrel(q.query_id, doc, grade)
        for q in bench.queries
        for doc, grade in q.judgments.items()
    ]
    scored = [
        ir_measures.ScoredDoc(qid, doc, score)
        for qid in run.query_ids()
        for doc, score in zip(run[qid].ids, run[qid].scores)
    ]
    return qrels, scored


def test_ir_measures_names_give_ir_measures_values(general_wiki):
    bench = harness.load_benchmark(str(general_wiki))
    ev = harness.evaluate(bench, "bm25", metrics=NAMES, bootstrap=0)
    assert ev.metrics == [
        "nDCG@10",
        "RR@10",
        "P@10",
        "Success@10",
        "Judged@10",
        "AP@100",
        "R@100",
        "nDCG",
        "AP",
        "RR",
        "Rprec",
        "Bpref",
        "infAP",
        "IPrec@0.5",
        "NumQ",
        "NumRet",
        "NumRel",
        "NumRelRet",
    ]  # by K, families in order of first appearance; the whole-list ones last
    qrels, run = _ir_measures_data(bench, ev.run)
    ref: dict[tuple[str, str], float] = {}
    for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in NAMES], qrels, run):
        ref[(str(m.measure), m.query_id)] = m.value
    # ir_measures' Judged breaks ties by ascending id, trec_eval (and so the harness) by
    # descending id: Judged@10 is checked on the same order, the ranks as scores
    ranked = [ir_measures.ScoredDoc(d.query_id, d.doc_id, -i) for i, d in enumerate(run)]
    for m in ir_measures.iter_calc([ir_measures.parse_measure("Judged@10")], qrels, ranked):
        ref[("Judged@10", m.query_id)] = m.value
    checked = 0
    for name in NAMES:
        for qid, got in zip(ev.query_ids, ev.values[name].tolist()):
            want = ref[(str(ir_measures.parse_measure(name)), qid)]  # NumRelRet: NumRet(rel=1)
            assert not math.isnan(got) and got == pytest.approx(want, abs=1e-9), (name, qid)
            checked += 1
    assert checked == len(NAMES) * 688
    totals = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in NAMES], qrels, run)
    for name in ("NumQ", "NumRet", "NumRel", "NumRelRet"):  # totals, as ir_measures sums them
        assert ev.means.loc["overall", name] == totals[ir_measures.parse_measure(name)]
    # what the issue saw: the name nDCG@10 is trec_eval's nDCG@10, not RARE's group NDCG
    group = harness.evaluate(bench, ev.run, metrics=["group_ndcg@10"], bootstrap=0)
    assert round(ev.means.loc["overall", "nDCG@10"], 4) != round(
        group.means.loc["overall", "group_ndcg@10"], 4
    )


def test_a_level_above_every_grade_scores_zero_as_ir_measures_with_no_relevant_zero(general_wiki):
    """RedQA's grades are all 1: at rel=2 no query has a relevant chunk. ir_measures (and
    trec_eval) score such a query 0; the harness leaves it out unless no_relevant="zero"."""
    bench = harness.load_benchmark(str(general_wiki))
    names = ["P(rel=2)@10", "AP(rel=2)", "nDCG@10", "RR(rel=2)@10"]
    run = harness.evaluate(bench, "bm25", metrics=["coverage@10"], bootstrap=0).run
    skip = harness.evaluate(bench, run, metrics=names, bootstrap=0)
    zero = harness.evaluate(bench, run, metrics=names, bootstrap=0, no_relevant="zero")
    assert skip.means.loc["overall", "P(rel=2)@10"] != skip.means.loc["overall", "P(rel=2)@10"]
    qrels, scored = _ir_measures_data(bench, run)
    ref = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, scored)
    for name in names:
        assert zero.means.loc["overall", name] == pytest.approx(
            ref[ir_measures.parse_measure(name)]
        )
    assert zero.means.loc["overall", "nDCG@10"] == skip.means.loc["overall", "nDCG@10"]


DOCS = [f"d{i}" for i in range(10)]


@st.composite
def graded(draw, distinct_scores: bool):
    """Numeric query ids (gdeval's rule), grades -1..4, some queries without a ranking."""
    qrels, run = {}, {}
    for i in range(draw(st.integers(1, 5))):
        q = str(i + 1)
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=7, unique=True))
        qrels[q] = {d: draw(st.integers(-1, 4)) for d in judged}
        if i == 0 or draw(st.booleans()):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
            if distinct_scores:  # ir_measures' Judged breaks ties by id, not as trec_eval
                scores = draw(st.permutations(range(len(docs))))
            else:
                scores = [draw(st.sampled_from([0.0, 1.0, 2.0])) for _ in docs]
            run[q] = {d: float(s) for d, s in zip(docs, scores)}
    return qrels, run


def _ours(qrels, run, wanted):
    qids = sorted(qrels)
    rankings = [canonical(run.get(q, {}).items(), depth=100).ids for q in qids]
    return qids, standard.evaluate(rankings, [qrels[q] for q in qids], wanted)


def _theirs(qrels, run, names):
    rows = [ir_measures.Qrel(q, d, g) for q, j in qrels.items() for d, g in j.items()]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, r in run.items() for d, s in r.items()]
    measures = [ir_measures.parse_measure(n) for n in names]
    return {
        (str(m.measure), m.query_id): m.value for m in ir_measures.iter_calc(measures, rows, scored)
    }


@settings(max_examples=150, deadline=None)
@given(graded(distinct_scores=True))
def test_judged_is_ir_measures_judged(case):
    qrels, run = case
    qids, ours = _ours(qrels, run, [("judged", 1), ("judged", 3), ("judged", None)])
    ref = _theirs(qrels, run, ["Judged@1", "Judged@3", "Judged"])
    for (_, k), values in ours.items():
        name = "Judged" if k is None else f"Judged@{k}"
        for q, got in zip(qids, values.tolist()):
            # a query without a ranking: ir_measures has no value; here 0 (trec_eval -c)
            want = ref.get((name, q), 0.0)
            assert got == pytest.approx(want, abs=1e-12), (name, q, qrels[q], run.get(q))


@pytest.mark.skipif(shutil.which("perl") is None, reason="ir_measures' ERR runs gdeval.pl")
@settings(max_examples=40, deadline=None)
@given(graded(distinct_scores=False))
def test_err_is_ir_measures_err_ties_and_all(case):
    qrels, run = case
    qids, ours = _ours(qrels, run, [("err", 1), ("err", 3), ("err", 10)])
    ref = _theirs(qrels, run, ["ERR@1", "ERR@3", "ERR@10"])
    for (_, k), values in ours.items():
        for q, got in zip(qids, values.tolist()):
            if not any(g > 0 for g in qrels[q].values()):
                assert math.isnan(got)  # gdeval scores only queries with a positive grade
            elif q in run:
                want = ref[(f"ERR@{k}", q)]
                assert got == pytest.approx(want, abs=5e-6 + 1e-12), (k, q, qrels[q], run[q])
            else:
                assert got == 0.0


def test_err_refuses_grades_past_gdeval_s_scale():
    from harness.core.errors import HarnessError

    with pytest.raises(HarnessError, match="ERR reads grades 0-4.*grade 5"):
        standard.evaluate([["a"]], [{"a": 5}], [("err", 10)])
