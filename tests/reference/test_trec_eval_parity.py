"""Standard metrics agree with pytrec_eval (trec_eval) to 1e-6 on generated qrels and runs:
ties, duplicate scores, graded and negative labels, unjudged chunks, queries missing from
the run, queries with only zero judgments, empty runs, two relevance levels."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.run import canonical
from metrics import standard
from tests.helpers.cli import run_module

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 2, 3, 5, 10)
DOCS = [f"d{i}" for i in range(12)] + ["D1", "d1x", "ä"]  # byte order matters for ties
CUT = ("ndcg", "recall", "P", "map", "success")
# our family at a cut-off -> trec_eval's measure (uncut: the family's own name)
TREC_NAME = {
    "ndcg": "ndcg_cut",
    "recall": "recall",
    "P": "P",
    "map": "map_cut",
    "success": "success",
}


@st.composite
def cases(draw):
    n_queries = draw(st.integers(1, 6))
    qrels, run = {}, {}
    for i in range(n_queries):
        qid = f"q{i}"
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        qrels[qid] = {d: draw(st.integers(-1, 3)) for d in judged}
        if draw(st.booleans()) or i == 0:
            retrieved = draw(st.lists(st.sampled_from(DOCS), max_size=12, unique=True))
            # few distinct scores, so ties are frequent
            run[qid] = {d: draw(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0])) for d in retrieved}
    level = draw(st.sampled_from([1, 2]))
    return qrels, run, level


def _reference(qrels, run, level):
    cuts = ",".join(map(str, KS))
    measures = {f"{m}.{cuts}" for m in TREC_NAME.values()}
    # trec_eval's ndcg is ndcg_cut at a cut past every list and judgment (test_uncut_ndcg
    # checks the measure itself: pytrec_eval's `ndcg` stalls when evaluated again and again
    # in one process, as this test does)
    measures |= {"map", "Rprec", "recip_rank", "ndcg_cut.100", "bpref"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level)
    return evaluator.evaluate({q: r for q, r in run.items() if r})


@settings(max_examples=300, deadline=None)
@given(cases())
def test_agrees_with_pytrec_eval(case):
    qrels, run, level = case
    qids = sorted(qrels)
    rankings = [canonical(run.get(q, {}).items(), depth=100).ids for q in qids]
    wanted = [(f, k) for f in CUT for k in KS] + [("recip_rank", k) for k in KS]
    wanted += [("recip_rank", 100), ("recip_rank", None), ("map", None), ("Rprec", None)]
    wanted += [("ndcg", None), ("bpref", None)]
    ours = standard.evaluate(rankings, [qrels[q] for q in qids], wanted, level=level)
    ref = _reference(qrels, run, level)
    for i, q in enumerate(qids):
        n_rel = sum(g >= level for g in qrels[q].values())
        n_pos = sum(g > 0 for g in qrels[q].values())
        for (family, k), values in ours.items():
            got = values[i]
            defined = n_pos > 0 if family == "ndcg" else n_rel > 0
            if not defined:
                assert math.isnan(got), (q, family, k)
            elif not run.get(q):
                assert got == 0.0, (q, family, k)  # trec_eval -c: missing query scores 0
            else:
                want = _expected(ref[q], family, k)
                assert got == pytest.approx(want, abs=1e-6), (q, family, k, qrels[q], run[q])


def _expected(ref_q, family, k):
    if family == "recip_rank" and k is not None:
        # trec_eval's recip_rank has no cut-off; within K iff the first relevant rank <= K.
        rr = ref_q["recip_rank"]
        return rr if rr >= 1.0 / k - 1e-12 else 0.0
    if k is None:
        return ref_q["ndcg_cut_100" if family == "ndcg" else family]
    return ref_q[f"{TREC_NAME[family]}_{k}"]


def test_empty_run_scores_zero_for_every_judged_query():
    qrels = [{"a": 1}, {"b": 2, "c": 0}]
    out = standard.evaluate(
        [(), ()], qrels, [("recall", 5), ("ndcg", 5), ("map", None), ("ndcg", None)]
    )
    for values in out.values():
        assert values.tolist() == [0.0, 0.0]


def test_uncut_ndcg_is_trec_eval_ndcg(tmp_path):
    """trec_eval's `ndcg` (the whole list, the ideal from every judged chunk), in a fresh
    process: more positive judgments than retrieved chunks, ties, negative grades."""
    qrels = {
        "q0": {"a": 3, "b": 1, "c": 2, "d": 1, "e": -1, "f": 0},
        "q1": {"a": 1, "z": 2},
        "q2": {"x": -1},
    }
    run = {"q0": {"e": 2.0, "b": 2.0, "a": 1.0, "y": 0.5}, "q1": {"z": 1.0, "a": 1.0, "q": 3.0}}
    code = (
        "import json, pytrec_eval; print(json.dumps(pytrec_eval.RelevanceEvaluator("
        f"{qrels!r}, {{'ndcg'}}).evaluate({run!r})))"
    )
    ref = json.loads(run_module("tests.helpers.exec_code", code, cwd=tmp_path).stdout)
    qids = sorted(qrels)
    rankings = [canonical(run.get(q, {}).items(), depth=100).ids for q in qids]
    ours = standard.evaluate(rankings, [qrels[q] for q in qids], [("ndcg", None)])
    got = dict(zip(qids, ours[("ndcg", None)].tolist()))
    assert got["q0"] == pytest.approx(ref["q0"]["ndcg"], abs=1e-12)
    assert got["q1"] == pytest.approx(ref["q1"]["ndcg"], abs=1e-12)
    assert 0 < got["q0"] < 1 and math.isnan(got["q2"])  # no positive grade: undefined


# trec_eval's measures beyond the common ones: family -> trec_eval's measure
TREC_ONLY = {"infap": "infAP", "num_ret": "num_ret", "num_rel": "num_rel"}
TREC_ONLY |= {"num_rel_ret": "num_rel_ret", "gm_map": "gm_map"}


@settings(max_examples=200, deadline=None)
@given(cases())
def test_trec_eval_s_own_measures_agree_with_pytrec_eval(case):
    """infAP (pooled-but-unjudged grades below 0), gm_map's per-query AP, the counts and the
    interpolated precision at every recall level, per query."""
    qrels, run, level = case
    qids = sorted(qrels)
    rankings = [canonical(run.get(q, {}).items(), depth=100).ids for q in qids]
    points = [i / 10 for i in range(11)]
    wanted = [(f, None) for f in TREC_ONLY] + [("num_q", None)]
    wanted += [("iprec", p) for p in points]
    ours = standard.evaluate(rankings, [qrels[q] for q in qids], wanted, level=level)
    measures = {*TREC_ONLY.values(), "iprec_at_recall"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level)
    ref = evaluator.evaluate({q: r for q, r in run.items() if r})
    for i, q in enumerate(qids):
        has_rel = any(g >= level for g in qrels[q].values())
        assert ours[("num_q", None)][i] == 1.0
        for (family, k), values in ours.items():
            got = values[i]
            counted = family.startswith("num_")
            if family == "num_q":
                continue
            if not counted and not has_rel:
                assert math.isnan(got), (q, family)
                continue
            if q not in ref:  # not in the run: trec_eval -c scores it 0 (num_rel: its R)
                want = sum(g >= level for g in qrels[q].values()) if family == "num_rel" else 0
            elif family == "iprec":
                want = ref[q][f"iprec_at_recall_{k:.2f}"]
            elif family == "gm_map":  # pytrec_eval gives log(max(AP, 1e-5)) per query
                want = ref[q]["gm_map"]
                got = math.log(max(got, 1e-5))
            else:
                want = ref[q][TREC_ONLY.get(family, family)]
            assert got == pytest.approx(want, abs=1e-9), (q, family, k, qrels[q], run[q])
