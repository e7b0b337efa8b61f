"""Ranked chunk ids the corpus lacks: kept at their rank with code -1 (`keep`) or removed with
later ranks moving up (`drop`), counted; the setting is checked once (run.unknown_ids)."""

import numpy as np
import pytest

from harness.cell.execute import messages, run_coverage
from harness.cell.plan import CellPlan
from harness.core.errors import ConfigError
from harness.core.run import Ranking, Run, canonical
from harness.core.run.files import apply_unknown_ids, check_unknown_ids, unknown_ids_note
from harness.core.types import Benchmark, Chunk, Query
from metrics import standard
from metrics.evaluate import _check_codes

VOCAB = {"a": 0, "b": 1, "c": 2}
SCORES = {"q1": {"a": 5.0, "x": 4.0, "b": 3.0, "y": 2.0, "c": 1.0}, "q2": {"b": 1.0}}


def test_canonical_gives_ids_the_vocab_lacks_code_minus_one():
    r = canonical(SCORES["q1"], depth=10, vocab=VOCAB)
    assert r.ids == ("a", "x", "b", "y", "c")
    assert r.codes.tolist() == [0, -1, 1, -1, 2]


@pytest.mark.parametrize("coded", [True, False])
def test_keep_leaves_them_in_place_and_counts_them(coded):
    run = Run.from_scores("s", SCORES, 10, VOCAB if coded else None)
    kept, found = apply_unknown_ids(run, VOCAB, ["q1", "q2", "q3"], "keep")
    assert kept["q1"].ids == ("a", "x", "b", "y", "c")
    assert kept["q1"].codes.tolist() == [0, -1, 1, -1, 2]  # codes added where they were missing
    assert kept["q1"].scores == run["q1"].scores
    assert found == {"mode": "keep", "entries": 2, "queries": 1, "examples": ["x", "y"]}
    assert kept.name == "s" and kept.depth == 10 and "q3" not in kept


@pytest.mark.parametrize("coded", [True, False])
def test_drop_removes_them_and_closes_the_gaps(coded):
    run = Run.from_scores("s", SCORES, 10, VOCAB if coded else None)
    dropped, found = apply_unknown_ids(run, VOCAB, ["q1", "q2"], "drop")
    assert dropped["q1"].ids == ("a", "b", "c")
    assert dropped["q1"].scores == (5.0, 3.0, 1.0)
    assert dropped["q1"].codes.tolist() == [0, 1, 2]
    assert found == {"mode": "drop", "entries": 2, "queries": 1, "examples": ["x", "y"]}
    again, found = apply_unknown_ids(dropped, VOCAB, ["q1", "q2"], "drop")
    assert again["q1"].ids == ("a", "b", "c") and found["entries"] == 0


def test_only_the_queries_asked_for_are_touched_and_examples_are_five():
    scores = {"q1": {f"u{i}": float(i) for i in range(8)}, "other": {"zz": 1.0}}
    run, found = apply_unknown_ids(Run.from_dict(scores), VOCAB, ["q1"], "drop")
    assert run["q1"].ids == () and run["other"].ids == ("zz",)
    assert found["entries"] == 8 and found["examples"] == ["u7", "u6", "u5", "u4", "u3"]


@pytest.mark.parametrize("value", ["ignore", "Keep", None, 1, True])
def test_a_bad_setting_is_one_config_error(value):
    with pytest.raises(ConfigError, match=r"^run.unknown_ids is .*; valid: keep \(.*\) or drop"):
        check_unknown_ids(value)


def test_note_says_what_happened():
    assert unknown_ids_note(None) is None
    assert unknown_ids_note({"mode": "keep", "entries": 0, "queries": 0, "examples": []}) is None
    note = unknown_ids_note({"mode": "drop", "entries": 3, "queries": 2, "examples": ["x", "y"]})
    assert note == (
        "3 ranked chunk ids in 2 queries are not in the corpus (e.g. 'x', 'y'); dropped, later "
        "ranks moved up (unknown_ids=drop)"
    )


def _bench():
    corpus = {c: Chunk(c, c) for c in VOCAB}
    q = Query("q1", "t", (frozenset({"b"}), frozenset({"z"})))  # z: gold the corpus lacks
    return Benchmark("t", corpus, (q,), "sha256:0", "memory")


def test_coverage_block_and_messages():
    bench = _bench()
    run, found = apply_unknown_ids(Run.from_scores("s", SCORES, 10, VOCAB), VOCAB, ["q1"], "keep")
    coverage = run_coverage(bench, run, object(), found)
    assert coverage["unknown_ids"] == found and coverage["queries_without_results"] == 0
    # the run's q2 is not in the benchmark: counted as a run file's extra queries are
    extra = (
        "1 query id(s) in the run are not queries the benchmark scores (unknown, or without "
        "judgments) and were left out (e.g. 'q2')"
    )
    assert messages(object(), coverage) == [extra, unknown_ids_note(found)]


def test_check_codes_accepts_minus_one_for_an_id_the_corpus_lacks_only():
    bench = _bench()
    _check_codes(
        bench, [canonical(SCORES["q1"], 10, VOCAB), Ranking(("y",), (1.0,), np.array([-1]))]
    )
    for ids, codes in ((("a",), [-1]), (("y",), [0]), (("a", "b"), [0, 2])):
        bad = Ranking(ids, (1.0,) * len(ids), np.array(codes))
        with pytest.raises(ValueError, match="do not follow the corpus order"):
            _check_codes(bench, [bad])


def test_an_unknown_ranked_id_matches_a_judged_id_the_corpus_lacks():
    """trec_eval matches ids as strings: z, judged but not in the corpus, found by a run."""
    judged = standard.prepare([{"b": 1, "z": 1}], VOCAB)
    r = canonical({"z": 2.0, "y": 1.5, "b": 1.0}, 10, VOCAB)
    assert r.codes.tolist() == [-1, -1, 1]
    out = standard.evaluate([r], judged, [("P", 1), ("recall", 3), ("recall", 1)])
    assert out[("P", 1)].tolist() == [1.0] and out[("recall", 3)].tolist() == [1.0]


def _config(**run):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from harness.core.confs import register
    from harness.core.paths import conf_dir

    register()
    overrides = [f"run.{k}={v}" for k, v in run.items()]
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    return OmegaConf.to_container(cfg, resolve=True)


def test_plan_reads_the_setting_once():
    assert CellPlan.from_config(_config()).unknown_ids == "keep"
    plan = CellPlan.from_config(_config(unknown_ids="drop"))
    assert plan.unknown_ids == "drop" and plan.config["run"] == {"unknown_ids": "drop"}
    cfg = _config()
    del cfg["run"]  # a config without the section (made by hand): the default, recorded
    assert CellPlan.from_config(cfg).config["run"] == {"unknown_ids": "keep"}
    with pytest.raises(ConfigError, match="^run.unknown_ids is 'ignore'; valid: keep"):
        CellPlan.from_config(_config(unknown_ids="ignore"))
    with pytest.raises(ConfigError, match="^run must be a section"):
        CellPlan.from_config({**cfg, "run": "drop"})


def test_fusion_keeps_a_part_run_files_unknown_ids_in_place(tmp_path):
    """RRF over a run file naming a chunk the corpus lacks: the fused list holds it at its
    fused rank (code -1), and the cell's policy then keeps or drops it."""
    from retrievers.hybrid import Hybrid
    from retrievers.run_file import RunFile

    (tmp_path / "x.trec").write_text("q1 Q0 ghost 1 3 x\nq1 Q0 a 2 2 x\nq1 Q0 b 3 1 x\n")
    (tmp_path / "y.trec").write_text("q1 Q0 b 1 9 y\nq1 Q0 c 2 1 y\n")
    parts = {k: RunFile(path=str(tmp_path / f"{k}.trec")) for k in "xy"}
    h = Hybrid(name="h", parts=parts)
    h.index({c: Chunk(c, c) for c in VOCAB})
    fused = h.search([Query("q1", "t", (frozenset({"a"}),))], depth=10)
    # b: 1/63 + 1/61; ghost 1/61; a, c 1/62 (tie: id descending)
    assert fused["q1"].ids == ("b", "ghost", "c", "a")
    assert fused["q1"].codes.tolist() == [1, -1, 2, 0]
    dropped, found = apply_unknown_ids(fused, VOCAB, ["q1"], "drop")
    assert dropped["q1"].ids == ("b", "c", "a") and found["entries"] == 1
