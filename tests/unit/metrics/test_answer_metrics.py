"""answer_recall@K, answer_rank and outdated@K (metrics.answers): hand-computed values on a tiny
benchmark, the names, per_query's dispatch, and tie ranges against every order of the ties."""

import itertools
import math
import random
from datetime import date

import numpy as np
import pytest

from harness.core.errors import ConfigError
from harness.core.run import Ranking, Run, canonical
from harness.core.types import Benchmark, Chunk, Query
from metrics import answers, ties
from metrics.evaluate import per_query
from metrics.registry import FAMILIES, metrics_for, parse_metric
from tests.helpers import group_reference as reference

NAN = math.nan
CORPUS = {
    c.chunk_id: c
    for c in (
        Chunk("eiffel", "The tower, known as la Tour-Eiffel, stands in Paris.", "Eiffel Tower"),
        Chunk("walls", "Life within the walls of the old city.", date=date(2024, 4, 28)),
        Chunk("everest", "The highest mountain on Earth.", "Mount Everest", date(2024, 4, 20)),
        Chunk("usa", "He lived in the U.S.A. in 1990–2000.", date=date(2023, 1, 1)),
        Chunk("plain", "Nothing to see here."),
    )
}
ONE = (frozenset({"eiffel"}),)
QUERIES = (
    # article, punctuation and case in the answer; "ghost" is no chunk of the corpus
    Query("q1", "where?", ONE, answers=("The PARIS!",)),
    # several answers, the one that matches only in a title
    Query("q2", "which?", ONE, answers=("Mt. Everest", "everest")),
    # word boundaries: "within" does not hold "in"; an id the corpus lacks holds nothing
    Query("q3", "in?", ONE, answers=("in", "ghost")),
    # punctuation becomes a space: "1990–2000" holds "1990"
    Query("q4", "when?", ONE, answers=("1990",)),
    # unanswerable from the corpus: no answer metric, whatever its answers
    Query("q5", "x", (), answers=("Paris",), absent=ONE, answerable="no"),
    # no answers; outdated by label
    Query("q6", "x", ONE, outdated=frozenset({"walls", "ghost"})),
    # outdated by date: a week's window before 2024-05-01
    Query("q7", "x", ONE, answers=("Everest",), date=date(2024, 5, 1), max_age_days=7),
    # a date without a window: outdatedness unknown; missing from the run
    Query("q8", "x", ONE, answers=("Paris",), date=date(2024, 5, 1)),
    # an answer that normalises to nothing is no answer
    Query("q9", "x", ONE, answers=("The ?!",), outdated=frozenset()),
)
BENCH = Benchmark("t", CORPUS, QUERIES, "sha256:0", "mem")
RANKED = {
    "q1": ["walls", "ghost", "eiffel", "usa"],
    "q2": ["plain", "everest"],
    "q3": ["walls", "ghost", "eiffel"],
    "q4": ["usa"],
    "q5": ["eiffel"],
    "q6": ["eiffel", "walls", "ghost"],
    "q7": ["walls", "everest", "ghost", "plain", "usa"],
    "q9": ["eiffel"],
}
NAMES = ["answer_recall@1", "answer_recall@3", "answer_rank", "outdated@2", "outdated@5"]
WANT = {  # q1 .. q9
    "answer_recall@1": [0, 0, 0, 1, NAN, NAN, 0, 0, NAN],
    "answer_recall@3": [1, 1, 1, 1, NAN, NAN, 1, 0, NAN],
    "answer_rank": [3, 2, 3, 1, NAN, NAN, 2, NAN, NAN],
    "outdated@2": [NAN, NAN, NAN, NAN, NAN, 1 / 2, 1 / 2, NAN, 0],
    "outdated@5": [NAN, NAN, NAN, NAN, NAN, 1 / 5, 2 / 5, NAN, 0],
}


def _run() -> Run:
    scores = {q: {c: float(10 - i) for i, c in enumerate(ids)} for q, ids in RANKED.items()}
    return Run.from_scores("r", scores, depth=10, vocab=BENCH.vocab)


@pytest.mark.parametrize(
    "text,want",
    [
        ("The Eiffel Tower, in PARIS!", "eiffel tower in paris"),
        ("an apple a day", "apple day"),
        ("theatre and anthem", "theatre and anthem"),  # articles only as whole words
        ("Ireland's 1990–2000", "ireland s 1990 2000"),
        ("¿Qué? «Le  Monde»", "qué le monde"),  # Unicode punctuation, runs of spaces
        ("  A  ", ""),
    ],
)
def test_normalize(text, want):
    assert answers.normalize(text) == want


def test_hand_computed_values():
    metrics = [parse_metric(n) for n in NAMES]
    run = _run()
    got = answers.evaluate(BENCH, [run[q.query_id] for q in QUERIES], metrics)
    assert list(got) == NAMES
    for name in NAMES:
        np.testing.assert_array_equal(got[name], np.array(WANT[name], float), err_msg=name)
    # the ranked ids alone give the same numbers
    plain = answers.evaluate(BENCH, [RANKED.get(q.query_id, []) for q in QUERIES], metrics)
    for name in NAMES:
        np.testing.assert_array_equal(plain[name], got[name], err_msg=name)


def test_only_ranked_chunks_down_to_the_first_answer_are_normalised(monkeypatch):
    seen = []
    real = answers.normalize
    monkeypatch.setattr(answers, "normalize", lambda t: seen.append(t) or real(t))
    q = Query("q", "x", ONE, answers=("Paris",))
    bench = Benchmark("t", CORPUS, (q,), "sha256:0", "mem")
    got = answers.evaluate(bench, [["plain", "eiffel", "usa"]], [parse_metric("answer_rank")])
    assert got["answer_rank"].tolist() == [2.0]
    assert len(seen) == 3  # the answer, "plain" and "eiffel"; never "usa" nor the rest


def test_names_parse_and_misuse_is_an_error():
    m = parse_metric("answer_recall@10")
    assert (m.name, m.k, m.family.kind, m.family.higher_is_better) == (
        "answer_recall@10",
        10,
        "corpus",
        True,
    )
    m = parse_metric("ANSWER_RANK")
    assert (m.name, m.k, m.family.cut, m.family.higher_is_better) == (
        "answer_rank",
        None,
        "none",
        False,
    )
    m = parse_metric("outdated@5")
    assert (m.name, m.k, m.family.higher_is_better) == ("outdated@5", 5, False)
    assert FAMILIES["outdated"].kind == "corpus"
    with pytest.raises(ConfigError, match="reads the whole list; drop the @5"):
        parse_metric("answer_rank@5")
    with pytest.raises(ConfigError, match="needs a cut-off.*outdated@10"):
        parse_metric("outdated")
    with pytest.raises(ConfigError, match="needs a cut-off.*answer_recall@10"):
        parse_metric("answer_recall")
    with pytest.raises(ConfigError, match="did you mean 'answer_recall'"):
        parse_metric("answer_recal@10")
    with pytest.raises(ConfigError, match="does not use a relevance level"):
        parse_metric("outdated(rel=2)@5")
    names = [m.name for m in metrics_for(["answer_rank", "answer_recall", "outdated"], [10, 5], 10)]
    assert names == [
        "answer_recall@5",
        "outdated@5",
        "answer_recall@10",
        "outdated@10",
        "answer_rank",
    ]
    with pytest.raises(TypeError, match="in batch"):
        parse_metric("outdated@5")(QUERIES[0], ["eiffel"])


def test_per_query_returns_them_in_order_with_other_metrics():
    metrics = metrics_for(["outdated", "coverage", "answer_rank", "answer_recall", "P"], [1, 3], 10)
    metrics.append(parse_metric("outdated@5"))
    values = per_query(BENCH, _run(), metrics)
    assert list(values) == [m.name for m in metrics]
    assert list(values)[:4] == ["outdated@1", "coverage@1", "answer_recall@1", "P@1"]
    for name in ("answer_recall@1", "answer_recall@3", "answer_rank", "outdated@5"):
        np.testing.assert_array_equal(values[name], np.array(WANT[name], float), err_msg=name)
    np.testing.assert_array_equal(values["outdated@1"], [NAN] * 5 + [0, 0, NAN, 0])
    cov = [reference.coverage(q.groups, RANKED.get(q.query_id, []), 3) for q in QUERIES]
    np.testing.assert_array_equal(values["coverage@3"], cov)
    assert values["P@3"][0] == pytest.approx(1 / 3)  # eiffel at rank 3 is q1's gold


# ------------------------------------------------------------------------------ ties

TEXTS = ["paris is big", "life within walls", "in paris", "nothing here", "an old map", "The-Paris"]


def _orders(ranking: Ranking):
    ids = list(ranking.ids)
    spans = ties.tie_groups(ranking.scores)
    for perms in itertools.product(*(itertools.permutations(ids[a:b]) for a, b in spans)):
        out = list(ids)
        for (a, b), p in zip(spans, perms):
            out[a:b] = p
        yield out


def _random_case(rng: random.Random):
    pool = [f"c{i}" for i in range(10)]
    corpus = {
        c: Chunk(c, rng.choice(TEXTS), date=rng.choice([None, date(2024, 1, 1), date(2024, 5, 1)]))
        for c in pool[:8]  # c8, c9: ids the corpus lacks
    }
    n = rng.randint(2, 9)
    ranked = rng.sample(pool, n)
    scores = {c: float(rng.randint(0, rng.randint(1, 3))) for c in ranked}
    q = Query(
        "q",
        "x",
        ONE,
        answers=rng.choice([("Paris",), ("in", "map"), ("walls",), ()]),
        answerable=rng.choice(["yes", "yes", "partial", "no"]),
        outdated=rng.choice([None, frozenset(rng.sample(pool, 3))]),
        date=date(2024, 5, 2),
        max_age_days=rng.choice([None, 7]),
    )
    return Benchmark("t", corpus, (q,), "sha256:0", "mem"), canonical(scores, depth=n)


@pytest.mark.parametrize("seed", range(4))
def test_tie_ranges_match_every_order(seed):
    rng = random.Random(seed)
    metrics = [parse_metric(n) for n in ("answer_rank", "answer_recall@1", "outdated@1")]
    metrics += metrics_for(["answer_recall", "outdated"], [2, 3, 5], depth=10)
    assert all(ties.supported(m) for m in metrics)
    checked = dependent = 0
    while checked < 150:
        bench, ranking = _random_case(rng)
        orders = list(_orders(ranking))
        if len(orders) > 2000:
            continue
        run = Run("r", {"q": ranking}, depth=10)
        values = per_query(bench, run, metrics)
        got = ties.tie_bounds(bench, run, metrics, values)
        every = [answers.evaluate(bench, [o], metrics) for o in orders]
        for m in metrics:
            vals = np.array([e[m.name][0] for e in every])
            t, where = got[m.name], f"{m.name} {bench.queries[0]} {ranking}"
            if np.isnan(values[m.name][0]):
                assert np.isnan(t.low[0]) and np.isnan(t.high[0]), where
                continue
            assert not np.isnan(vals).any(), where  # reordering never removes an answer
            assert t.exact[0] and t.known[0], where
            assert t.low[0] == pytest.approx(vals.min(), abs=1e-12), where
            assert t.high[0] == pytest.approx(vals.max(), abs=1e-12), where
            assert t.expected[0] == pytest.approx(vals.mean(), abs=1e-12), where
            one = ties.query_range(bench.queries[0], ranking, m, values[m.name][0], bench)
            assert (one.low, one.high) == (t.low[0], t.high[0]), where
            dependent += bool(t.dependent[0])
        checked += 1
    assert dependent > 30  # the cases do exercise ties


def test_answer_rank_tie_by_hand():
    """Ranks 2-4 tied, two of them hold the answer: the first answer is at rank 2 or 3, at
    rank 2 with probability 2/3."""
    q = Query("q", "x", ONE, answers=("Paris",))
    ranking = canonical({"plain": 3.0, "walls": 2.0, "eiffel": 2.0, "usa": 2.0}, depth=4)
    assert ranking.ids == ("plain", "walls", "usa", "eiffel")
    m = parse_metric("answer_rank")
    corpus = dict(CORPUS) | {"usa": Chunk("usa", "Paris, Texas")}
    bench = Benchmark("t", corpus, (q,), "sha256:0", "mem")
    value = answers.evaluate(bench, [ranking], [m])[m.name][0]
    assert value == 3.0
    got = ties.query_range(q, ranking, m, value, bench)
    assert (got.low, got.high) == (2.0, 3.0)
    assert got.expected == pytest.approx(2 * 2 / 3 + 3 * 1 / 3)
    with pytest.raises(ValueError, match="needs the benchmark"):
        ties.query_range(q, ranking, m, value)
