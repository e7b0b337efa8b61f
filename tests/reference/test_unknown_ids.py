"""trec_eval parity for ids the corpus lacks (issue 16): a run's chunk ids the corpus does not hold
stay at their rank, scored as the qrels judge them (`run.unknown_ids=keep`, the default), or are
removed with later ranks moving up (`drop`); judged or gold chunk ids the corpus lacks stay
relevant. Checked against pytrec_eval on the raw run (keep) and on the run without those ids
(drop), and group metrics against brute force; through the metrics, the Python API and the CLI."""

from __future__ import annotations

import csv
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness
from harness.core.errors import ConfigError
from harness.core.run import Run
from harness.core.run.files import apply_unknown_ids
from harness.core.types import Benchmark, Chunk, Query
from metrics.evaluate import per_query
from metrics.registry import metrics_for, parse_metric, trec_eval_name
from tests.helpers.cli import harness as cli

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 2, 3, 5, 10)
CORPUS_IDS = [f"d{i}" for i in range(10)]
ABSENT_JUDGED = ["x0", "x1"]  # judged (or gold) but not in the corpus
UNKNOWN = ["u0", "u1", "u2"]  # only ever in runs
STANDARD = ("recall", "P", "ndcg_cut", "map_cut", "success", "recip_rank")
TREC = "ndcg_cut recall P map_cut success".split()
_FAMILIES = ("recall", "P", "ndcg", "map", "success", "recip_rank", "Rprec")


def _bench(qrels: dict[str, dict[str, int]]) -> Benchmark:
    """A BEIR-like benchmark: every judged chunk with grade > 0 is its own gold group."""
    corpus = {c: Chunk(c, c) for c in CORPUS_IDS}
    queries = tuple(
        Query(q, q, tuple(frozenset([d]) for d, g in j.items() if g > 0), qrels=j)
        for q, j in qrels.items()
    )
    return Benchmark("parity", corpus, queries, "sha256:0", "memory")


def _trec_eval(qrels, run):
    cuts = ",".join(map(str, KS))
    measures = {f"{m}.{cuts}" for m in TREC} | {"map", "Rprec", "recip_rank", "ndcg_cut.100"}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(
        {q: r for q, r in run.items() if r}
    )


def _ranked(docs: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, ties by docno descending."""
    return [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]


def _expected(ref, qrels_q, run_q, name):
    """The reference value of one harness metric name for one query."""
    n_rel = sum(g >= 1 for g in qrels_q.values())
    n_pos = sum(g > 0 for g in qrels_q.values())
    metric = parse_metric(name)
    family, k = metric.family.name, metric.k
    if family == "coverage":  # brute force over singleton groups, matched by id
        gold = {d for d, g in qrels_q.items() if g > 0}
        return len(gold & set(_ranked(run_q)[:k])) / len(gold) if gold else math.nan
    if not (n_pos if family == "ndcg" else n_rel):
        return math.nan
    if not run_q:
        return 0.0  # trec_eval -c: a query without results scores 0
    if family == "recip_rank" and k is not None:
        rr = ref["recip_rank"]
        return rr if rr >= 1.0 / k - 1e-12 else 0.0
    # trec_eval's ndcg is ndcg_cut at a cut past every list (test_trec_eval_parity)
    return ref["ndcg_cut_100" if name == "nDCG" else trec_eval_name(metric)]


@st.composite
def cases(draw):
    qrels, run = {}, {}
    for i in range(draw(st.integers(1, 5))):
        q = f"q{i}"
        judged = draw(
            st.lists(
                st.sampled_from(CORPUS_IDS + ABSENT_JUDGED), min_size=1, max_size=6, unique=True
            )
        )
        qrels[q] = {d: draw(st.integers(0, 3)) for d in judged}
        if draw(st.booleans()) or i == 0:
            pool = CORPUS_IDS + ABSENT_JUDGED + UNKNOWN
            docs = draw(st.lists(st.sampled_from(pool), max_size=12, unique=True))
            run[q] = {d: draw(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0])) for d in docs}
    return qrels, run, draw(st.sampled_from(["keep", "drop"])), draw(st.booleans())


@settings(max_examples=250, deadline=None)
@given(cases())
def test_unknown_and_absent_ids_score_as_trec_eval(case):
    """keep: trec_eval on the run as written; drop: trec_eval on the run without the ids the
    corpus lacks. Runs with corpus codes (run files, fusion) and without (Python dicts) alike."""
    qrels, run, mode, coded = case
    bench = _bench(qrels)
    vocab = bench.vocab
    built = Run.from_scores("sys", run, 100, vocab) if coded else Run.from_dict(run, name="sys")
    built, found = apply_unknown_ids(built, vocab, list(qrels), mode)
    wanted = metrics_for([*STANDARD, "RR@3", "RR@10", "coverage"], list(KS), 100)
    wanted += metrics_for(["map", "Rprec", "nDCG"], [1], 100)
    ours = per_query(bench, built, wanted)

    scored = (
        run
        if mode == "keep"
        else {q: {d: s for d, s in r.items() if d in vocab} for q, r in run.items()}
    )
    ref = _trec_eval(qrels, scored)
    for i, q in enumerate(qrels):
        for m in wanted:
            want = _expected(ref.get(q, {}), qrels[q], scored.get(q, {}), m.name)
            got = ours[m.name][i]
            if math.isnan(want):
                assert math.isnan(got), (q, m.name)
            else:
                assert got == pytest.approx(want, abs=1e-9), (q, m.name, mode, run.get(q))
    lacking = [d for q in qrels for d in _ranked(run.get(q, {})) if d not in vocab]
    assert found["entries"] == len(lacking) and found["mode"] == mode
    if mode == "drop":
        assert all(d in vocab for q in qrels for d in built[q].ids)
    else:
        assert all(built[q].ids == tuple(_ranked(run.get(q, {}))) for q in qrels)


# the issue's example: an unknown id at rank 3 of q9, seven relevant chunks, one at rank 11
Q9_QRELS = {"q9": {f"r{i}": 1 for i in range(1, 8)}}
Q9_RUN = {"q9": {"r1": 12.0, "n1": 11.0, "ghost": 10.0, **{f"n{i}": 11.0 - i for i in range(2, 9)}}}
Q9_RUN["q9"]["r2"] = 1.0  # rank 11


def _q9_bench() -> Benchmark:
    ids = [f"r{i}" for i in range(1, 8)] + [f"n{i}" for i in range(1, 9)]
    q = Query("q9", "q", tuple(frozenset([d]) for d in Q9_QRELS["q9"]), qrels=Q9_QRELS["q9"])
    return Benchmark("q9", {c: Chunk(c, c) for c in ids}, (q,), "sha256:9", "memory")


@pytest.mark.parametrize("mode, recall", [("keep", 1 / 7), ("drop", 2 / 7)])
def test_issue_example_recall_at_10(mode, recall):
    names = ["R@10", "P@10", "nDCG@10", "AP", "RR@10", "Success@10", "RR"]
    ev = harness.evaluate(_q9_bench(), Q9_RUN, names, bootstrap=0, unknown_ids=mode)
    assert ev.values["R@10"][0] == pytest.approx(recall)
    run = (
        Q9_RUN
        if mode == "keep"
        else {"q9": {d: s for d, s in Q9_RUN["q9"].items() if d != "ghost"}}
    )
    ref = _trec_eval(Q9_QRELS, run)["q9"]
    assert ref["recall_10"] == pytest.approx(recall)
    for name in names:
        assert ev.values[name][0] == pytest.approx(_expected(ref, Q9_QRELS["q9"], run["q9"], name))
    assert ev.notes == [
        "1 ranked chunk id in 1 query is not in the corpus (e.g. 'ghost'); "
        + (
            "kept at their rank and scored as the qrels judge them (unknown_ids=keep, as "
            "trec_eval does)"
            if mode == "keep"
            else "dropped, later ranks moved up (unknown_ids=drop)"
        )
    ]


@pytest.mark.parametrize("rank", [1, 3, 10, 11])
@pytest.mark.parametrize("mode", ["keep", "drop"])
def test_unknown_id_at_each_rank_through_run_objects_and_trec_files(tmp_path, rank, mode):
    """A Run object and a TREC file give the numbers a dict gives, wherever the unknown id sits."""
    docs = [f"n{i}" for i in range(1, 9)] + ["r1", "r2", "r3"]
    docs.insert(rank - 1, "ghost")
    run = {"q9": {d: float(len(docs) - i) for i, d in enumerate(docs)}}
    path = tmp_path / "sys.trec"
    path.write_text(
        "".join(f"q9 Q0 {d} {i} {s} sys\n" for i, (d, s) in enumerate(run["q9"].items(), 1))
    )
    names = ["R@10", "P@10", "nDCG@10", "AP", "RR@10", "Success@10", "RR"]
    scored = run if mode == "keep" else {"q9": {d: s for d, s in run["q9"].items() if d != "ghost"}}
    ref = _trec_eval(Q9_QRELS, scored)["q9"]
    for system in (run, Run.from_dict(run, name="sys"), path):
        ev = harness.evaluate(_q9_bench(), system, names, bootstrap=0, unknown_ids=mode)
        for name in names:
            want = _expected(ref, Q9_QRELS["q9"], scored["q9"], name)
            assert ev.values[name][0] == pytest.approx(want), (system, name)
        kept = "ghost" in ev.run["q9"].ids
        assert kept == (mode == "keep")
        if kept:
            assert ev.run["q9"].ids.index("ghost") == rank - 1


def test_bad_api_value_is_one_config_error():
    with pytest.raises(ConfigError, match="unknown_ids is 'ignore'; valid: keep"):
        harness.evaluate(_q9_bench(), Q9_RUN, ["R@10"], bootstrap=0, unknown_ids="ignore")


# ---------------------------------------------------------------- RedQA gold absent


def _redqa(tmp_path):
    data = {
        "metadata": {},
        "queries": [
            # group 2 has one member in the corpus, group 3 none: it can never be covered
            {
                "query_id": "q1",
                "question": "alpha beta",
                "gold_chunk_groups": [["c1"], ["c2", "x9"], ["x8"]],
            },
            {"query_id": "q2", "question": "gamma", "gold_chunk_groups": [["c3"]]},
        ],
        "corpus": {
            "c1": {"content": "alpha text"},
            "c2": {"content": "beta text"},
            "c3": {"content": "gamma text"},
            "c4": {"content": "other words"},
        },
    }
    path = tmp_path / "absent.json"
    path.write_text(json.dumps(data))
    return path


def test_redqa_gold_absent_from_corpus_stays_gold(tmp_path, caplog):
    caplog.set_level("INFO", logger="harness")
    bench = harness.load_benchmark(_redqa(tmp_path))
    assert bench.queries[0].groups == (
        frozenset({"c1"}),
        frozenset({"c2", "x9"}),
        frozenset({"x8"}),
    )
    assert bench.metadata["judged_not_in_corpus"] == {
        "gold_members": 2,
        "chunks": 2,
        "groups_without_corpus_member": 1,
        "examples": ["x9", "x8"],
    }
    assert "2 gold chunk id(s) are not in the corpus (e.g. 'x9', 'x8')" in caplog.text
    assert "1 group(s) have no member in it and are never covered" in caplog.text
    # a retriever over the corpus never covers the group without a corpus member
    bm25 = harness.evaluate(bench, "bm25", ["coverage", "perfrecall"], [4], bootstrap=0)
    assert bm25.values["coverage@4"][0] == pytest.approx(2 / 3)
    assert bm25.values["perfrecall@4"][0] == 0.0


@pytest.mark.parametrize("mode", ["keep", "drop"])
def test_group_metrics_with_unknown_ids_and_absent_gold(tmp_path, mode):
    bench = harness.load_benchmark(_redqa(tmp_path))
    run = {"q1": {"u1": 3.0, "c2": 2.0, "c1": 1.0}, "q2": {"c4": 2.0, "c3": 1.0}}
    names = ["coverage", "perfrecall", "group_ndcg", "group_mrr", "recall"]
    ev = harness.evaluate(bench, run, names, [2, 3], bootstrap=0, unknown_ids=mode)
    v = {n: a[0] for n, a in ev.values.items()}  # q1
    d = 1 / math.log2(3)  # the discount of rank 2
    ideal = 1 + d + 0.5  # three groups
    if mode == "keep":  # u1 rank 1, c2 rank 2 (group 2), c1 rank 3 (group 1)
        want = {"coverage@2": 1 / 3, "coverage@3": 2 / 3, "group_mrr@3": (1 / 3 + 1 / 2) / 3}
        want |= {"group_ndcg@3": (d + 0.5) / ideal, "R@2": 1 / 4, "R@3": 2 / 4}
    else:  # c2 rank 1, c1 rank 2
        want = {"coverage@2": 2 / 3, "coverage@3": 2 / 3, "group_mrr@3": (1 + 1 / 2) / 3}
        want |= {"group_ndcg@3": (1 + d) / ideal, "R@2": 2 / 4, "R@3": 2 / 4}
    want |= {"perfrecall@2": 0.0, "perfrecall@3": 0.0}  # group 3 is never covered
    for name, value in want.items():
        assert v[name] == pytest.approx(value), name
    assert ev.values["R@2"][1] == 1.0  # q2: c3 at rank 2 in both modes


def test_an_id_the_corpus_lacks_matches_when_the_gold_names_it(tmp_path):
    """As in trec_eval, ids match by id: a run naming a gold chunk the corpus lacks finds it."""
    bench = harness.load_benchmark(_redqa(tmp_path))
    run = {"q1": {"x8": 3.0, "c1": 2.0, "c2": 1.0}}
    ev = harness.evaluate(bench, run, ["coverage", "perfrecall", "recall"], [3], bootstrap=0)
    assert ev.values["coverage@3"][0] == 1.0 and ev.values["perfrecall@3"][0] == 1.0
    ref = _trec_eval({"q1": {"c1": 1, "c2": 1, "x9": 1, "x8": 1}}, run)["q1"]
    assert ev.values["R@3"][0] == pytest.approx(ref["recall_3"]) == 0.75


# ---------------------------------------------------------------- the CLI, end to end


def _beir(tmp_path):
    """A small BEIR folder whose qrels judge d9 and x9, which corpus.jsonl lacks."""
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    words = ["salt", "marsh", "mill", "river", "coast", "birds", "wheel", "pans"]
    docs = {f"d{i}": f"{words[i % 8]} {words[(i + 3) % 8]}" for i in range(8)}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in docs.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": f"q{i}", "text": words[i]}) + "\n" for i in range(4))
    )
    qrels = {
        "q0": {"d0": 2, "d3": 1, "x9": 1},
        "q1": {"d1": 1, "d9": 2, "d4": 0},
        "q2": {"d2": 1, "d5": 1},
        "q3": {"x9": 1},  # nothing it judges is in the corpus
    }
    lines = ["query-id\tcorpus-id\tscore"]
    lines += [f"{q}\t{d}\t{g}" for q, j in qrels.items() for d, g in j.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return folder, qrels


RUN = {  # ids the corpus lacks at ranks 1, 3 and 10; x9 is judged, ghost and u* are not
    "q0": ["ghost", "d0", "d1", "d3", "d2", "d4", "d5", "d6", "d7", "x9", "u1"],
    "q1": ["d4", "d6", "u2", "d1", "d0"],
    "q2": ["d7", "d5", "d2"],
    "q3": ["u3", "d0"],
}


def _read(path, qrels):
    out: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        out.setdefault(f[0], {})[f[2]] = int(f[3]) if qrels else float(f[4])
    return out


def _check_cell(cell, qrels, run):
    ref = _trec_eval(qrels, run)
    checked = 0
    for row in csv.DictReader((cell / "per_query.csv").open()):
        q = row["query_id"]
        for name in row:
            try:
                metric = parse_metric(name)
            except ConfigError:
                continue  # query_id, hop, n_groups
            if metric.family.kind not in ("standard", "group") or metric.family.name not in (
                "coverage",
                *_FAMILIES,
            ):
                continue
            want = _expected(ref.get(q, {}), qrels[q], run.get(q, {}), name)
            got = float(row[name])
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want), (q, name)
            checked += 1
    return checked


def test_cli_run_file_keep_then_drop(tmp_path):
    folder, qrels = _beir(tmp_path)
    trec = tmp_path / "sys.trec"
    trec.write_text(
        "".join(
            f"{q} Q0 {d} {i} {20 - i} sys\n" for q, ids in RUN.items() for i, d in enumerate(ids, 1)
        )
    )
    run = {q: {d: float(20 - i) for i, d in enumerate(ids, 1)} for q, ids in RUN.items()}
    args = [
        "corpus=beir",
        f"corpus.path={folder}",
        "retriever=run_file",
        f"retriever.path={trec}",
        "metrics.names=[recall,P,ndcg_cut,map_cut,success,recip_rank,coverage,map,Rprec]",
        "metrics.k=[1,3,10]",
        "stats.bootstrap=0",
    ]
    cell = tmp_path / "results/tiny/sys"

    res = cli(*args, cwd=tmp_path)  # keep, the default
    assert "judgment(s) (3 with grade > 0) name 2 chunk(s) not in corpus.jsonl" in res.stderr
    assert "5 ranked chunk ids in 3 queries are not in the corpus" in res.stderr
    assert _read(cell / "run.trec", qrels=False) == run  # every id, in place
    assert {d for j in _read(cell / "qrels.trec", qrels=True).values() for d in j} >= {"x9", "d9"}
    assert _check_cell(cell, qrels, run) > 60
    doc = json.loads((cell / "metrics.json").read_text())
    assert doc["run"]["unknown_ids"] == {
        "mode": "keep",
        "entries": 5,
        "queries": 3,
        "examples": ["ghost", "x9", "u1", "u2", "u3"],
    }
    assert doc["config"]["run"] == {"unknown_ids": "keep"}
    assert doc["benchmark"]["metadata"]["judged_not_in_corpus"]["chunks"] == 2
    assert cli(*args, cwd=tmp_path).stderr.count("is up to date") == 1
    res = cli(*args[:-2], "metrics.k=[1,3,5,10]", "stats.bootstrap=0", cwd=tmp_path)
    # the cell holds nothing the run does not ask for: the columns in the order asked for
    added = "added R@5, P@5, nDCG@5, AP@5, Success@5, coverage@5"
    assert f"scored its stored ranked list (no retrieval); {added}" in res.stderr
    assert _read(cell / "run.trec", qrels=False) == run  # rescored from run.trec: still in place
    assert _check_cell(cell, qrels, run) > 80

    res = cli(*args, "run.unknown_ids=drop", cwd=tmp_path)  # another setting: recomputed
    assert "was computed with run.unknown_ids=keep; recomputed with run.unknown_ids=drop" in (
        res.stderr
    )
    dropped = {q: {d: s for d, s in r.items() if d.startswith("d")} for q, r in run.items()}
    assert _read(cell / "run.trec", qrels=False) == {q: r for q, r in dropped.items() if r}
    assert _check_cell(cell, qrels, dropped) > 60
    doc = json.loads((cell / "metrics.json").read_text())
    assert doc["run"]["unknown_ids"]["mode"] == "drop" and doc["run"]["unknown_ids"]["entries"] == 5
    assert "is up to date" in cli(*args, "run.unknown_ids=drop", cwd=tmp_path).stderr
