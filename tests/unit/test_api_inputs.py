"""What a notebook user hands the API by mistake gets one clear error, not a silent 0."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import harness
from harness.core.errors import BenchmarkError, ConfigError, HarnessError
from harness.core.run import Run


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A BEIR folder whose query and document ids read as numbers."""
    root = tmp_path_factory.mktemp("beir")
    docs = {"1": "alpha beta", "2": "gamma", "3": "alpha gamma"}
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in docs.items())
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in [("7", "alpha"), ("8", "x")])
    )
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n7\t1\t1\n7\t3\t2\n8\t2\t1\n"
    )
    return root


@pytest.fixture(scope="module")
def numeric(folder):
    return harness.load_benchmark(folder)


def test_a_run_of_another_benchmark_is_refused_not_scored_zero(numeric):
    with pytest.raises(BenchmarkError, match=r"^evaluate\(\): none of its 2 query ids is in the "
                       r"benchmark \(run has 'x1', 'x2'; benchmark has '7', '8'\)"):  # fmt: skip
        harness.evaluate(numeric, {"x1": {"1": 1.0}, "x2": {"2": 1.0}}, metrics="nDCG@10")


@pytest.mark.parametrize(
    "empty",
    [{}, {"7": {}, "8": []}, pd.DataFrame({"qid": [], "docno": [], "score": []})],
    ids=["dict", "empty-rankings", "frame"],
)
def test_an_empty_run_is_refused_as_an_empty_run_file_is(numeric, empty):
    with pytest.raises(BenchmarkError, match="the run holds no results"):
        harness.evaluate(numeric, empty, metrics="nDCG@10")


def test_ids_given_as_numbers_score_as_the_same_ids_as_text(numeric):
    as_text = {"7": {"3": 2.0, "2": 1.0}, "8": [("2", 0.5)]}
    as_numbers = {7: {3: 2.0, 2: 1.0}, 8: [(2, 0.5)]}
    want = harness.evaluate(numeric, as_text, metrics=["nDCG@10", "P@1"], bootstrap=0)
    got = harness.evaluate(numeric, as_numbers, metrics=["nDCG@10", "P@1"], bootstrap=0)
    assert got.run.to_dict() == want.run.to_dict() == {"7": {"3": 2.0, "2": 1.0}, "8": {"2": 0.5}}
    assert got.means.equals(want.means)
    assert want.means.loc["overall", "P@1"] == 1.0  # not the 0 of ids that never matched


def test_two_query_ids_with_one_text_are_refused_not_merged():
    with pytest.raises(BenchmarkError, match=r"run query ids 7 and '7' are one id as text"):
        Run.of({7: {"a": 1.0}, "7": {"b": 2.0}})
    with pytest.raises(BenchmarkError, match=r"run query '1': chunk ids that are one id as text"):
        Run.of({1: {7: 0.5, "7": 0.3}})


def test_reprs_are_one_short_line(numeric):
    assert repr(numeric).startswith(f"Benchmark('{numeric.name}', 2 queries, 3 chunks, sha256:")
    assert repr(Run.of({"7": {"1": 1.0}}, name="mine")) == "Run('mine', 1 query, depth 1)"
    wiki = harness.load_benchmark("demo")
    assert len(repr(wiki)) < 100


def test_load_benchmark_by_path_refuses_a_setting_its_format_lacks(folder):
    said = r"unknown corpus setting 'splitt' for 'beir' \(did you mean 'split'\?\); settings: "
    with pytest.raises(ConfigError, match=said + "name, format, path, split, qrels$"):
        harness.load_benchmark(folder, splitt="dev")
    assert harness.load_benchmark(folder, split="test", name="n").name == "n"


def test_experiment_wants_a_list_of_systems():
    for one in ("bm25", {"q": {"d": 1.0}}):
        with pytest.raises(ConfigError, match="^Experiment takes a list of systems"):
            harness.Experiment(one, "demo")


def test_experiment_passes_relevance_level_on(numeric):
    run = {"7": {"1": 3.0, "3": 2.0}, "8": {"2": 1.0}}
    table = harness.Experiment([run], numeric, metrics="P@1", relevance_level=2, baseline=None)
    alone = harness.evaluate(numeric, run, metrics="P@1", relevance_level=2, bootstrap=0)
    # at level 2 only doc 3 of query 7 is relevant, and query 8 has none (left out)
    assert table.loc[0, "P(rel=2)@1"] == alone.means.loc["overall", "P(rel=2)@1"] == 0.0


def test_compare_refuses_what_is_neither_a_folder_nor_a_result_and_names_unsaved_ones(numeric):
    with pytest.raises(HarnessError, match="^compare takes result folders or Evaluations"):
        harness.compare(1, 2)
    a = harness.evaluate("demo", "bm25", bootstrap=0)
    b = harness.evaluate(numeric, {"7": {"1": 1.0}}, metrics="nDCG@10", bootstrap=0)
    with pytest.raises(HarnessError, match=r"different benchmarks: 'bm25' is 'demo', 'run' is"):
        harness.compare(a, b)


def test_a_query_with_an_empty_ranking_has_no_results_as_a_missing_one(numeric):
    for run in ({"7": {"1": 3.0}}, {"7": {"1": 3.0}, "8": {}}):
        ev = harness.evaluate(numeric, run, metrics=["P@1"], bootstrap=0)
        assert "1 benchmark query has no results in the run and score 0 (e.g. '8')" in ev.notes
        assert ev.record["run"]["queries_without_results"] == 1


def test_a_notebook_shows_the_notes_and_the_queries_left_out(numeric):
    run = {"7": {"1": 3.0, "9": 2.0}}  # query 8 has no results; chunk 9 is not in the corpus
    ev = harness.evaluate(numeric, run, metrics=["P@1"], relevance_level=2, bootstrap=0)
    shown = ev._repr_html_()
    assert shown.startswith(ev.summary._repr_html_())
    # at level 2 query 8 has no relevant document: left out of P(rel=2)@1's mean
    assert "<li>P(rel=2)@1: 1 of 2 queries without a value" in shown
    assert "1 benchmark query has no results in the run" in shown
    assert "1 ranked chunk id in 1 query is not in the corpus (e.g. &#x27;9&#x27;)" in shown


def test_a_strata_file_of_other_data_is_refused(tmp_path):
    from harness.strata.file import SCHEMA

    path = tmp_path / "strata.json"
    path.write_text(json.dumps({"schema": SCHEMA, "checksum": "sha256:other", "params": {}}))
    with pytest.raises(HarnessError, match=r"strata file .* does not fit this evaluation: it was "
                       r"built for corpus checksum sha256:other"):  # fmt: skip
        harness.evaluate("demo", "bm25", strata=path, bootstrap=0)


def test_a_format_name_is_not_a_benchmark_unless_a_folder_of_that_name_is_here(
    folder, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^'beir' is a format, not a benchmark: it needs path"):
        harness.load_benchmark("beir")  # it said "benchmark not found: ??? (from corpus.path)"
    with pytest.raises(ConfigError, match=r"load_benchmark\('irds', id=\.\.\.\)"):
        harness.load_benchmark("irds")
    import shutil

    shutil.copytree(folder, tmp_path / "beir")
    assert harness.load_benchmark("beir").checksum == harness.load_benchmark(folder).checksum
    # a folder named as a packaged benchmark is not read, with a warning saying how
    shutil.copytree(folder, tmp_path / "demo")
    with pytest.warns(UserWarning, match=r"'demo' names the packaged benchmark; .* './demo'"):
        assert len(harness.load_benchmark("demo").queries) == 48
    assert len(harness.load_benchmark("./demo").queries) == 2


def test_what_loading_notes_is_in_the_benchmark_and_every_evaluation(folder, tmp_path):
    """A notebook shows no log: a judged id the corpus lacks is in bench.notes and ev.notes,
    on every load (the command line logs it once per process)."""
    import shutil

    odd = tmp_path / "odd"
    shutil.copytree(folder, odd)
    with (odd / "qrels" / "test.tsv").open("a") as f:
        f.write("8\tgone\t1\n")
    note = (
        "1 judgment(s) (1 with grade > 0) name 1 chunk(s) not in corpus.jsonl (e.g. 'gone'); "
        "kept as trec_eval keeps them"
    )
    for _ in range(2):
        bench = harness.load_benchmark(odd)
        assert len(bench.notes) == 1 and note in bench.notes[0]
    ev = harness.evaluate(bench, {"7": {"1": 1.0}}, metrics=["P@1"], bootstrap=0)
    assert ev.notes[0] == bench.notes[0]
    assert note in harness.evaluate(odd, {"7": {"1": 1.0}}, metrics=["P@1"], bootstrap=0).notes[0]
    assert harness.load_benchmark(folder).notes == ()


def test_noting_leaves_the_logger_as_it_found_it(folder, tmp_path, caplog):
    """A logger the user silenced stays silent (the notes are still kept), and overlapping
    evaluations in two threads leave its level as it was."""
    import logging
    import shutil
    import threading

    from harness.data import noted

    odd = tmp_path / "odd"
    shutil.copytree(folder, odd)
    with (odd / "qrels" / "test.tsv").open("a") as f:
        f.write("8\tgone\t1\n")
    log = logging.getLogger("harness.data")
    before = log.level
    try:
        log.setLevel(logging.ERROR)
        with caplog.at_level(logging.INFO, logger="root"):
            bench = harness.load_benchmark(odd)
        assert "not in corpus.jsonl" in bench.notes[0]
        assert not [r for r in caplog.records if r.name == "harness.data"]
        assert log.level == logging.ERROR
    finally:
        log.setLevel(before)
    inside, leave = threading.Event(), threading.Event()

    def hold():
        with noted():
            inside.set()
            leave.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    inside.wait(10)
    with noted():
        leave.set()  # the other block ends first, this one last
        other.join(10)
        assert log.isEnabledFor(logging.INFO)
    assert log.level == before


def test_a_format_name_with_its_path_warns_of_nothing(folder, tmp_path, monkeypatch):
    import shutil
    import warnings

    monkeypatch.chdir(tmp_path)
    shutil.copytree(folder, tmp_path / "beir")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bench = harness.load_benchmark("beir", path=str(folder))
    assert bench.checksum == harness.load_benchmark(folder).checksum
