"""ΔSePer end to end on a small inline benchmark with the stub generator and NLI model
(tests/helpers/utility_stub.py), against values computed by hand; the cache (a rerun asks
nothing, builds nothing and gives the same bytes; another retriever shares the closed-book
prompts); undefined queries."""

from __future__ import annotations

import json
import logging
import math

import pytest

from harness.core.errors import ConfigError, HarnessError
from harness.core.run import Run
from harness.core.types import Benchmark, Chunk, Query
from harness.utility import ModelSpec, UtilitySpec, utility_values
from tests.helpers import utility_stub
from tests.helpers.utility_stub import StubGenerator, StubNLI

STUB = "tests.helpers.utility_stub."


def bench() -> Benchmark:
    corpus = {
        "c1": Chunk("c1", "The capital of France is Paris"),
        "c2": Chunk("c2", "The city on the Rhône is Lyons"),
        "c3": Chunk("c3", "Marseille lies on the coast"),
    }
    g = (frozenset({"c1"}),)
    queries = (
        Query("q1", "What is the capital of France?", g, answers=("Paris",)),
        Query("q2", "Which city is on the Rhône?", g, answers=("Lyon", "Lyons")),
        Query("q3", "No answer given?", g),
        Query("q4", "Unanswerable?", (), answers=("X",), absent=g, answerable="no"),
        Query("q5", "Where is the Louvre?", g, answers=("Paris",)),
        Query("q6", "Nothing retrieved?", g, answers=("Paris",)),
    )
    return Benchmark("stub", corpus, queries, "sum", "inline")


RUN = {
    "q1": {"c1": 3.0, "c2": 2.0, "c3": 1.0},
    "q2": {"c3": 2.0, "c2": 1.0},
    "q3": {"c1": 1.0},
    "q4": {"c1": 1.0},
    "q5": {"c1": 1.0},  # fewer than K = 2: top 2 = top 1
}  # q6: nothing retrieved


def spec(tmp_path, **kw) -> UtilitySpec:
    return UtilitySpec(
        generator=ModelSpec("custom", None, target=STUB + "StubGenerator"),
        nli=ModelSpec("custom", None, target=STUB + "StubNLI"),
        cache=tmp_path / "cache",
        **{"samples": 4, **kw},
    )


# --- the hand computation ---------------------------------------------------------------
# Closed book (every query): samples "I do not know" [-1, -1], "unknown" [-2], twice each. NLI
# texts are "question answer"; the stub gives 0.2 to every pair (neither equal nor contained),
# so SePer_soft(q) = 0.2 whatever the weights, and SePer_hard(q) = 0 (0.2 < tau 0.5).
CLOSED_SOFT, CLOSED_HARD = 0.2, 0.0
# Two passages: samples alternate the last words of passages 1 and 2, one token each of
# log-prob -0.5 and -1.0: weights w1 = e^-0.5 / (2 e^-0.5 + 2 e^-1) = 1 / (2 (1 + e^-0.5)),
# w2 = 1/2 - w1 (twice each).
W1 = 1 / (2 * (1 + math.exp(-0.5)))  # 0.3112296656...
W2 = 0.5 - W1
# q1, K=1: "Paris" x4, E(q Paris ⊢ q Paris) = 0.9: soft 0.9; one class, 0.9 both ways: hard 1.
# q1, K=2: the last words of c1 and c2: Paris (w1 x2), Lyons (w2 x2): soft = 2 w1 0.9 +
#   2 w2 0.2; hard = 2 w1 (Lyons is its own class: 0.2 < 0.5).
Q1_K2_SOFT = 2 * W1 * 0.9 + 2 * W2 * 0.2
Q1_K2_HARD = 2 * W1
# q2, refs Lyon and Lyons. K=1: "coast" x4: 0.2 (soft), 0 (hard).
# K=2: coast (w1 x2), Lyons (w2 x2). E(Lyons ⊢ Lyon) = 0.7 (contains), E(Lyon ⊢ Lyons) = 0.2,
#   E(Lyons ⊢ Lyons) = 0.9. Soft: ref Lyon 2 w1 0.2 + 2 w2 0.7; ref Lyons 2 w1 0.2 + 2 w2 0.9.
#   Hard: ref Lyon: the Lyons class is not equivalent (0.2 back); ref Lyons: 2 w2.
Q2_K2_SOFT = ((2 * W1 * 0.2 + 2 * W2 * 0.7) + (2 * W1 * 0.2 + 2 * W2 * 0.9)) / 2
Q2_K2_HARD = (0 + 2 * W2) / 2
NAN = math.nan
EXPECTED = {  # q1, q2, q3 (no answer), q4 (unanswerable), q5 (K=2 is K=1), q6 (no retrieval)
    "dseper@1": [0.9 - 0.2, 0.0, NAN, NAN, 0.9 - 0.2, 0.0],
    "dseper@2": [Q1_K2_SOFT - 0.2, Q2_K2_SOFT - 0.2, NAN, NAN, 0.9 - 0.2, 0.0],
    "dseper_hard@1": [1.0, 0.0, NAN, NAN, 1.0, 0.0],
    "dseper_hard@2": [Q1_K2_HARD, Q2_K2_HARD, NAN, NAN, 1.0, 0.0],
    "seper@1": [0.9, 0.2, NAN, NAN, 0.9, 0.2],
    "seper@2": [Q1_K2_SOFT, Q2_K2_SOFT, NAN, NAN, 0.9, 0.2],
}


def same(got, want):
    assert list(got) == list(want)
    for name in want:
        assert got[name] == pytest.approx(want[name], abs=1e-12, nan_ok=True), name


@pytest.fixture(autouse=True)
def _fresh_stub():
    utility_stub.reset()


def test_hand_computed_values_then_cached_rerun(tmp_path):
    run = Run.from_dict(RUN)
    values, stats = utility_values(bench(), run, [1, 2], spec(tmp_path))
    same(values, EXPECTED)
    # prompts: q1 and q2 three each, q5 two (K=2 = K=1), q6 one (no retrieval = closed book)
    assert stats["prompts"] == 9 and stats["generation_misses"] == 9
    assert len(StubGenerator.calls) == 9 and len(set(StubGenerator.calls)) == 9
    assert stats["queries"] == 4
    assert stats["models_loaded"] == [STUB + "StubGenerator", STUB + "StubNLI"]
    assert not any("Unanswerable" in p or "No answer" in p for p in StubGenerator.calls)

    utility_stub.reset()
    again, stats2 = utility_values(bench(), run, [1, 2], spec(tmp_path))
    assert stats2["models_loaded"] == [] and StubGenerator.built == StubNLI.built == 0
    assert StubGenerator.calls == [] and StubNLI.calls == []
    assert stats2["generation_hits"] == 9 and stats2["nli_misses"] == 0
    assert json.dumps(again) == json.dumps(values)  # byte-identical, NaN included


def test_another_retriever_reuses_closed_book_prompts(tmp_path):
    utility_values(bench(), Run.from_dict(RUN), [1, 2], spec(tmp_path))
    utility_stub.reset()
    other = dict(RUN, q1={"c2": 2.0, "c1": 1.0})  # q1's top 1 and top 2 change
    values, stats = utility_values(bench(), Run.from_dict(other), [1, 2], spec(tmp_path))
    assert stats["generation_misses"] == 2 and stats["generation_hits"] == 7
    assert all("Doc 1: The city on the Rhône is Lyons" in p for p in StubGenerator.calls)
    # q1, K=1: "Lyons" x4 against "Paris": 0.2 -> ΔSePer 0
    assert values["dseper@1"][0] == pytest.approx(0.0, abs=1e-15)


def test_objects_passed_in_and_families(tmp_path):
    values, stats = utility_values(
        bench(),
        Run.from_dict(RUN),
        [2],
        spec(tmp_path),
        families=["seper"],
        generator=StubGenerator(),
        nli=StubNLI(),
    )
    assert list(values) == ["seper@2"]
    assert values["seper@2"] == pytest.approx(EXPECTED["seper@2"], abs=1e-12, nan_ok=True)
    assert stats["models_loaded"] == []  # nothing built: the objects were given
    # seper alone needs no closed-book prompt: the one sampled is q6's, which retrieved nothing
    assert stats["prompts"] == 4
    closed = [p for p in StubGenerator.calls if "Doc" not in p]
    assert len(closed) == 1 and closed[0].endswith("Question: Nothing retrieved?")


def test_identity_of_the_model_keys_the_cache(tmp_path):
    run = Run.from_dict(RUN)
    utility_values(bench(), run, [1], spec(tmp_path), generator=StubGenerator(version=1))
    _, stats = utility_values(bench(), run, [1], spec(tmp_path), generator=StubGenerator(version=2))
    assert stats["generation_hits"] == 0
    # another NLI model: the generations are reused, every entailment entry is new
    gen2 = StubGenerator(version=2)
    _, stats = utility_values(bench(), run, [1], spec(tmp_path), generator=gen2, nli=StubNLI(2))
    assert stats["generation_hits"] == stats["prompts"] and stats["nli_hits"] == 0


def test_settings_that_change_numbers_change_keys(tmp_path):
    run = Run.from_dict(RUN)
    utility_values(bench(), run, [1], spec(tmp_path))
    for changed in ({"samples": 5}, {"temperature": 0.7}, {"seed": 1}, {"top_p": 0.9}):
        _, stats = utility_values(bench(), run, [1], spec(tmp_path, **changed))
        assert stats["generation_hits"] == 0, changed
    # tau only changes the arithmetic: every entry is reused
    _, stats = utility_values(bench(), run, [1], spec(tmp_path, threshold=0.95))
    assert stats["generation_misses"] == 0 and stats["nli_misses"] == 0


def test_without_question_nli_reads_answers_alone(tmp_path):
    values, _ = utility_values(
        bench(), Run.from_dict(RUN), [2], spec(tmp_path, with_question=False)
    )
    assert ("Paris", "Paris") in StubNLI.calls
    assert not any("?" in p or "?" in h for p, h in StubNLI.calls)
    # the stub scores answers alone as it scores "question answer": the same numbers
    assert values["dseper@2"] == pytest.approx(EXPECTED["dseper@2"], abs=1e-12, nan_ok=True)


def test_prompts_follow_the_templates(tmp_path):
    bench_ = bench()
    titled = dict(bench_.corpus, c1=Chunk("c1", "The capital of France is Paris", "France"))
    b = Benchmark("stub", titled, bench_.queries, "sum", "inline")
    utility_values(b, Run.from_dict(RUN), [2], spec(tmp_path, passage="[{rank}|{title}] {text}"))
    want = (
        "The following are given documents.\n\n[1|France] The capital of France is Paris\n"
        "Doc 2: The city on the Rhône is Lyons\n\nQuestion: What is the capital of France?"
    )
    assert any(p.endswith(want) for p in StubGenerator.calls)


def test_bad_families_and_ks(tmp_path):
    with pytest.raises(ConfigError, match="unknown utility metric family 'dseperr'"):
        utility_values(bench(), Run.from_dict(RUN), [1], spec(tmp_path), families=["dseperr"])
    with pytest.raises(ConfigError, match="K must be an integer >= 1"):
        utility_values(bench(), Run.from_dict(RUN), [0], spec(tmp_path))


def test_corrupt_cache_entry_is_recomputed(tmp_path):
    run = Run.from_dict(RUN)
    values, _ = utility_values(bench(), run, [1], spec(tmp_path))
    entries = sorted((tmp_path / "cache" / "gen").rglob("*.json"))
    entries[0].write_text("{ not json")
    utility_stub.reset()
    again, stats = utility_values(bench(), run, [1], spec(tmp_path))
    assert stats["generation_misses"] == 1
    assert json.dumps(again) == json.dumps(values)


def test_custom_targets_that_cannot_be_built(tmp_path):
    run = Run.from_dict(RUN)
    bad = UtilitySpec(
        generator=ModelSpec("custom", None, target="tests.helpers.nowhere.Gen"),
        nli=ModelSpec("custom", None, target=STUB + "StubNLI", options={"colour": "red"}),
        cache=tmp_path,
    )
    with pytest.raises(ConfigError, match="cannot import tests.helpers.nowhere"):
        utility_values(bench(), run, [1], bad)
    with pytest.raises(ConfigError, match="does not take utility.nli.options"):
        utility_values(bench(), run, [1], bad, generator=StubGenerator())
    with pytest.raises(HarnessError, match=r"needs identity\(\) and entailment\(pairs\)"):
        utility_values(bench(), run, [1], bad, generator=StubGenerator(), nli=object())


# --- multi-token answers whose entailments differ -----------------------------------------
# The stub answers from a table (N = 3, in order). Closed book: "Paris, France" [-0.1, -0.3,
# -0.5], "paris" [-1.2, -0.4], "Lyon" [-0.7]; with the passage: "Paris" [-0.05, -0.25],
# "Marseille" [-0.4], "Paris". Against the reference "Paris" (texts "question answer"):
# E(.. Paris, France ⊢ .. Paris) = 0.7 (contains), E(.. paris ⊢ .. Paris) = 0.9 (equal up to
# case), Lyon and Marseille 0.2; backwards E(.. Paris ⊢ .. Paris, France) = 0.2.
# Hard: closed book, {Paris, France} is not equivalent (0.2 back), {paris} is, {Lyon} is not;
# with the passage {Paris} (samples 1 and 3) is, {Marseille} is not.
# length_normalize: scores are mean log-probs, closed book -0.3, -0.8, -0.7, with the passage
# -0.15, -0.4, -0.15; without, sums: -0.9, -1.6, -0.7 and -0.3, -0.4, -0.3.
#   SePer_soft(q)    = (0.7 e^a + 0.9 e^b + 0.2 e^c) / (e^a + e^b + e^c)
#   SePer_hard(q)    = e^b / (e^a + e^b + e^c)
#   SePer_soft(q, D) = (2 · 0.9 e^p + 0.2 e^m) / (2 e^p + e^m)
#   SePer_hard(q, D) = 2 e^p / (2 e^p + e^m)
TABLE = {
    "your own knowledge": [["Paris, France", [-0.1, -0.3, -0.5]], ["paris", [-1.2, -0.4]],
                           ["Lyon", [-0.7]]],
    "given document": [["Paris", [-0.05, -0.25]], ["Marseille", [-0.4]]],
}  # fmt: skip
MULTI = {  # written out; the formulas above evaluated by hand (Python's math.exp)
    True: {
        "dseper@1": 0.7038144542526656 - 0.6060746975919921,
        "dseper_hard@1": 0.7197349346466653 - 0.2663901757727681,
        "seper@1": 0.7038144542526656,
    },
    False: {
        "dseper@1": 0.6819546840410017 - 0.5118518894617157,
        "dseper_hard@1": 0.6885066914871453 - 0.18270326891533498,
        "seper@1": 0.6819546840410017,
    },
}


@pytest.mark.parametrize("length_normalize", [True, False])
def test_hand_computed_multi_token_answers(tmp_path, length_normalize):
    corpus = {"c1": Chunk("c1", "Paris is the capital of France")}
    g = (frozenset({"c1"}),)
    query = Query("q1", "What is the capital of France?", g, answers=("Paris",))
    b = Benchmark("multi", corpus, (query,), "sum", "inline")
    s = UtilitySpec(
        generator=ModelSpec("custom", None, target=STUB + "StubGenerator",
                            options={"table": TABLE}),
        nli=ModelSpec("custom", None, target=STUB + "StubNLI"),
        cache=tmp_path / "cache",
        samples=3,
        length_normalize=length_normalize,
    )  # fmt: skip
    values, _ = utility_values(b, Run.from_dict({"q1": {"c1": 1.0}}), [1], s)
    assert sorted(StubGenerator.calls) == sorted([s.prompt_closed.format(question=query.text),
        s.prompt.format(question=query.text,
                        passages="Doc 1: Paris is the capital of France")])  # fmt: skip
    want = MULTI[length_normalize]
    assert sorted(values) == sorted(want)
    for name, value in want.items():
        assert values[name] == [pytest.approx(value, abs=1e-12)], name


# --- damaged cache entries ------------------------------------------------------------------
def _drop(key):
    return lambda e: {k: v for k, v in e.items() if k != key}


DAMAGE = {  # kind -> ways an entry can parse as JSON and still be wrong
    "gen": {
        "no logprobs": lambda e: {**e, "samples": [{"text": s["text"]} for s in e["samples"]]},
        "text log-prob": lambda e: {**e, "samples": [{"text": "x", "logprobs": ["a"]}] * 4},
        "too few": lambda e: {**e, "samples": e["samples"][:3]},
        "no samples": _drop("samples"),
        "number text": lambda e: {**e, "samples": [{"text": 1, "logprobs": [-1.0]}] * 4},
        "bool log-prob": lambda e: {**e, "samples": [{"text": "x", "logprobs": [True]}] * 4},
    },
    "nli": {
        "no to_ref": _drop("to_ref"),
        "no from_ref": _drop("from_ref"),
        "long row": lambda e: {**e, "to_ref": [row + [0.5] for row in e["to_ref"]]},
        "null prob": lambda e: {**e, "from_ref": [[None] * len(r) for r in e["from_ref"]]},
        "texts not a list": lambda e: {**e, "texts": "Paris"},
    },
    "nli-cluster": {
        "no matrix": _drop("matrix"),
        "short row": lambda e: {**e, "matrix": [row[:-1] for row in e["matrix"]]},
        "text prob": lambda e: {**e, "matrix": [["x"] * len(r) for r in e["matrix"]]},
    },
}
CASES = [(kind, name) for kind, ways in DAMAGE.items() for name in ways]


@pytest.mark.parametrize(("kind", "damage"), CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_entry_of_the_wrong_shape_is_recomputed(tmp_path, caplog, kind, damage):
    run = Run.from_dict(RUN)
    values, _ = utility_values(bench(), run, [2], spec(tmp_path))
    # an entry with several answer texts: a damaged row is then never a valid one
    path = next(
        p
        for p in sorted((tmp_path / "cache" / kind).rglob("*.json"))
        if len({s["text"] for s in json.loads(p.read_text()).get("samples", [])})
        + len(json.loads(p.read_text()).get("texts", []))
        > 1
    )
    good = path.read_text()
    entry = json.loads(good)
    path.write_text(json.dumps(DAMAGE[kind][damage](entry)))
    utility_stub.reset()
    caplog.set_level(logging.INFO, logger="harness.utility")
    again, stats = utility_values(bench(), run, [2], spec(tmp_path))
    assert json.dumps(again) == json.dumps(values)
    misses = stats["generation_misses"] + stats["nli_misses"]
    assert misses == 1 and (stats["generation_misses"] == 1) == (kind == "gen")
    assert f"utility cache entry {path} " in caplog.text and "computing it again" in caplog.text
    assert path.read_text() == good  # rewritten whole
    _, stats = utility_values(bench(), run, [2], spec(tmp_path))
    assert stats["generation_misses"] + stats["nli_misses"] == 0
