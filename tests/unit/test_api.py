"""The public API at `import harness`: lazy, and the same numbers as the CLI's cell files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import harness
from harness.core.errors import ConfigError, HarnessError
from tests.conftest import ROOT, write_redqa


def test_import_loads_neither_torch_nor_hydra_nor_pandas():
    code = (
        "import harness, sys; print(harness.__all__); "
        "bad = [m for m in ('torch', 'hydra', 'pandas') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_every_public_name_resolves():
    for name in harness.__all__:
        assert getattr(harness, name) is not None
    with pytest.raises(AttributeError):
        harness.no_such_thing  # noqa: B018


def test_evaluate_matches_the_cli_cell(tmp_path):
    from harness.cli.run import run as cli_run
    from harness.core.confs import named_config

    cfg = {
        "retriever": named_config("retriever", "bm25"),
        "corpus": named_config("corpus", "demo"),
        "metrics": {"names": ["coverage", "group_ndcg"], "k": [10], "relevance_level": 1},
        "retrieval": {"depth": 100},
        "results": {"dir": str(tmp_path / "results"), "write": True},
        "stats": {"bootstrap": 200, "confidence": 0.95, "seed": 0},
    }
    cli_run(cfg)
    cell = tmp_path / "results" / "demo" / "bm25"
    doc = json.loads((cell / "metrics.json").read_text())
    ev = harness.evaluate(
        "demo", harness.get_retriever("bm25"), ["coverage", "group_ndcg"], 10, bootstrap=200
    )
    summary = ev.summary
    assert list(summary.index[:2]) == ["overall", "hop=1"]
    for stratum, s in [("overall", doc["results"]["overall"])] + [
        (f"hop={k}", v) for k, v in doc["results"]["hop"].items()
    ]:
        assert summary.loc[stratum, "n"] == s["n"]
        for m in ("coverage@10", "group_ndcg@10"):
            assert summary.loc[stratum, m] == s["mean"][m]
            assert [summary.loc[stratum, f"{m} ci_low"], summary.loc[stratum, f"{m} ci_high"]] == s[
                "ci"
            ][m]
    cli_rows = pd.read_csv(cell / "per_query.csv", dtype={"hop": str}).set_index("query_id")
    pd.testing.assert_frame_equal(ev.per_query, cli_rows, check_dtype=False)
    # save() writes the cell files the CLI writes; the numbers and the run are identical
    saved = ev.save(tmp_path / "api_cell")
    for name in ("per_query.csv", "run.trec", "qrels.trec"):
        assert (saved / name).read_text() == (cell / name).read_text(), name
    again = json.loads((saved / "metrics.json").read_text())
    assert again["results"] == doc["results"] and again["variance"] == doc["variance"]
    with pytest.raises(HarnessError, match="overwrite=True"):
        ev.save(saved)


def test_run_round_trip_through_trec_and_dicts(tmp_path):
    run = harness.Run.from_dict({"q1": {"b": 1.0, "a": 1.0, "c": 3.0}}, name="mine")
    assert run["q1"].ids == ("c", "b", "a")  # score desc, ties by id desc
    path = run.to_trec(tmp_path / "mine.trec")
    assert path.read_text().splitlines()[0] == "q1 Q0 c 1 3.0 mine"
    back = harness.Run.from_trec(path)
    assert back.name == "mine" and back.to_dict() == run.to_dict()
    with pytest.raises(HarnessError, match="white space"):
        harness.Run.from_dict({"q 1": {"a": 1.0}}).to_trec(tmp_path / "bad.trec")


def test_evaluate_a_dict_run_with_custom_strata(tmp_path):
    path = write_redqa(tmp_path / "tiny.json")
    bench = harness.load_benchmark(path)
    run = {"q1": {"c1": 2.0, "c3": 1.0}, "q2": {"c4": 1.0}}
    ev = harness.evaluate(
        bench, run, ["coverage"], 1, strata={"kind": {"q1": "a", "q2": "b"}}, bootstrap=0
    )
    assert ev.summary.loc["overall", "coverage@1"] == pytest.approx((0.5 + 0.0) / 2)
    assert ev.summary.loc["kind=a", "coverage@1"] == 0.5
    assert ev.per_query["kind"].tolist() == ["a", "b"]
    with pytest.raises(ConfigError, match="no label for query 'q2'"):
        harness.evaluate(bench, run, strata={"kind": {"q1": "a"}})


def test_experiment_rows_and_significance_columns():
    df = harness.Experiment(
        ["bm25", harness.get_retriever("bm25", k1=0.1, name="bm25-k1")],
        "demo",
        ["group_ndcg"],
        10,
        permutations=500,
    )
    assert df["name"].tolist() == ["bm25", "bm25-k1"]
    for col in (
        "group_ndcg@10",
        "group_ndcg@10 +",
        "group_ndcg@10 -",
        "group_ndcg@10 p",
        "group_ndcg@10 p_holm",
        "group_ndcg@10 sig",
    ):
        assert col in df.columns
    assert np.isnan(df.loc[0, "group_ndcg@10 p"]) and 0 < df.loc[1, "group_ndcg@10 p"] <= 1
    assert (
        str(df["group_ndcg@10 +"].dtype) == "Int64"
        and str(df["group_ndcg@10 sig"].dtype) == "boolean"
    )
    assert (
        df["group_ndcg@10 +"].isna().tolist() == [True, False] and df["group_ndcg@10 sig"].isna()[0]
    )
    a = harness.evaluate("demo", "bm25", ["group_ndcg"], 10, bootstrap=0)
    b = harness.evaluate("demo", harness.get_retriever("bm25", k1=0.1, name="bm25-k1"),
                         ["group_ndcg"], 10, bootstrap=0)  # fmt: skip
    report = harness.compare(a, b, permutations=500, bootstrap=0)
    overall = next(r for r in report.rows if r.stratum == "overall")
    assert overall.result.p_randomization == df.loc[1, "group_ndcg@10 p"]  # one engine, one number
    assert (overall.result.better, overall.result.worse) == (
        df.loc[1, "group_ndcg@10 +"],
        df.loc[1, "group_ndcg@10 -"],
    )
    with pytest.raises(ConfigError, match="correction"):
        harness.Experiment(["bm25"], "demo", correction="fdr")


def test_compare_matches_the_cli_report(tmp_path):
    a = harness.evaluate("demo", "bm25", ["group_ndcg"], 10, bootstrap=0)
    b = harness.evaluate("demo", "bm25-simple", ["group_ndcg"], 10, bootstrap=0)
    report = harness.compare(
        a.save(tmp_path / "a"), b.save(tmp_path / "b"), permutations=500, bootstrap=500
    )
    frame = report.to_dataframe()
    assert set(frame["stratum"]) >= {"overall", "hop=1"}
    assert "# Retrieval comparison: demo" in report.to_markdown()
    from_objects = harness.compare(a, b, permutations=500, bootstrap=500).to_dataframe()
    assert frame["delta"].tolist() == from_objects["delta"].tolist()


def test_compare_reads_metric_names_as_the_registry_does():
    names = ["group_ndcg", "ndcg_cut", "map"]
    a = harness.evaluate("demo", "bm25", names, 10, bootstrap=0)
    b = harness.evaluate("demo", "bm25-simple", names, 10, bootstrap=0)
    picked = harness.compare(a, b, metrics=["ndcg_cut_10", "MAP", "group_ndcg@10"], bootstrap=0)
    assert picked.metrics == ["nDCG@10", "AP", "group_ndcg@10"]
    with pytest.raises(ConfigError, match="could mean two things: nDCG@10 .* group_ndcg@10"):
        harness.compare(a, b, metrics=["ndcg@10"], bootstrap=0)
    family = harness.compare(a, b, metrics=["ndcg_cut", "map"], bootstrap=0)
    assert family.metrics == ["nDCG@10", "AP"]  # a bare family: each K the cells share
    with pytest.raises(harness.HarnessError, match="'map_cut' is not in"):
        harness.compare(a, b, metrics=["map_cut"], bootstrap=0)  # AP@K, not AP
    with pytest.raises(
        harness.HarnessError, match=r"metric 'P_10' \(P@10\) is not in 'bm25', 'bm25-"
    ):
        harness.compare(a, b, metrics=["P_10"], bootstrap=0)


def test_load_benchmark_by_unknown_name_says_what_it_accepts():
    with pytest.raises(ConfigError, match="neither a corpus config"):
        harness.load_benchmark("general-wikki")


def test_get_retriever_unknown_setting_is_one_clear_error():
    with pytest.raises(ConfigError, match="unknown retriever setting 'k11' for 'bm25'.*'k1'"):
        harness.get_retriever("bm25", k11=1.2)


def test_encoder_objects_are_cached_only_under_an_explicit_id(tmp_path, monkeypatch):
    """An object's weights cannot be fingerprinted: without cache_id nothing is cached, so a
    changed encoder never gets another's embeddings."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "examples"))
    from toy_plugins import HashingEncoder

    from retrievers.dense import Dense

    a = harness.evaluate("demo", HashingEncoder(dim=64), ["group_ndcg"], 10, bootstrap=0)
    b = harness.evaluate("demo", HashingEncoder(dim=32), ["group_ndcg"], 10, bootstrap=0)
    assert a.summary.loc["overall", "group_ndcg@10"] != b.summary.loc["overall", "group_ndcg@10"]
    assert not (tmp_path / "embeddings").exists()
    keyed = Dense.from_encoder(HashingEncoder(dim=32), name="h32", cache_id="hashing-32")
    c = harness.evaluate("demo", keyed, ["group_ndcg"], 10, bootstrap=0)
    assert c.summary.loc["overall", "group_ndcg@10"] == b.summary.loc["overall", "group_ndcg@10"]
    assert any((tmp_path / "embeddings").rglob("*.npy"))


def test_every_kind_of_system_reaches_the_same_run(tmp_path):
    """A config name, a retriever object, its run, the run as a dict and as a file: one value."""
    bench = harness.load_benchmark("demo")
    by_name = harness.evaluate(bench, "bm25", ["group_ndcg"], 10, bootstrap=0)
    path = by_name.run.to_trec(tmp_path / "bm25.trec")
    systems = [
        harness.get_retriever("bm25"),
        by_name.run,
        by_name.run.to_dict(),
        path,
        str(path),
    ]
    for system in systems:
        ev = harness.evaluate(bench, system, ["group_ndcg"], 10, bootstrap=0)
        assert ev.values["group_ndcg@10"].tolist() == by_name.values["group_ndcg@10"].tolist(), (
            system
        )
    with pytest.raises(harness.HarnessError, match="did you mean 'bm25'"):
        harness.evaluate(bench, "bm52", ["group_ndcg"], 10)


def test_counts_are_totals_and_gm_map_geometric_everywhere(tmp_path):
    """NumRet, NumRelRet total over the queries (as trec_eval and ir_measures do), gm_map is
    a geometric mean: in the summary, per stratum, in compare and Experiment, and a saved
    cell's per-query values still check against its metrics.json."""
    names = ["NumQ", "NumRet", "NumRelRet", "gm_map", "AP"]
    a = harness.evaluate("demo", "bm25", names, bootstrap=200)
    b = harness.evaluate("demo", "bm25-simple", names, bootstrap=0)
    for ev in (a, b):
        vals = ev.per_query
        assert ev.summary.loc["overall", "NumQ"] == vals["NumQ"].notna().sum()
        assert ev.summary.loc["overall", "NumRet"] == vals["NumRet"].sum()
        hop1 = vals["hop"] == "1"
        assert ev.summary.loc["hop=1", "NumRelRet"] == vals.loc[hop1, "NumRelRet"].sum()
        ap = vals["gm_map"].dropna().clip(lower=1e-5)
        assert ev.summary.loc["overall", "gm_map"] == pytest.approx(np.exp(np.log(ap).mean()))
        assert ev.summary.loc["overall", "gm_map"] < ev.summary.loc["overall", "AP"]
    a_dir, b_dir = a.save(tmp_path / "a"), b.save(tmp_path / "b")
    assert harness.compare(a_dir, b_dir, bootstrap=0).metrics == ["gm_map", "AP"]  # no counts
    report = harness.compare(a_dir, b_dir, metrics=["NumRelRet", "gm_map"], bootstrap=100)
    frame = report.to_dataframe().set_index(["metric", "stratum"])
    row = frame.loc[("NumRelRet", "overall")]
    assert row["mean_baseline"] == a.summary.loc["overall", "NumRelRet"]
    assert row["delta"] == b.summary.loc["overall", "NumRelRet"] - row["mean_baseline"]
    row = frame.loc[("gm_map", "overall")]
    assert row["mean_candidate"] == pytest.approx(b.summary.loc["overall", "gm_map"])
    df = harness.Experiment(["bm25", "bm25-simple"], "demo", ["NumRet", "gm_map"], permutations=50)
    assert df.loc[0, "NumRet"] == a.summary.loc["overall", "NumRet"]
    assert df.loc[0, "gm_map"] == a.summary.loc["overall", "gm_map"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"k": 0}, "k must hold positive integers, got 0"),
        ({"metrics": []}, "metrics is empty"),
        ({"depth": 0}, "depth must be a positive integer, got 0"),
        ({"bootstrap": -1}, "bootstrap must be an integer >= 0"),
        ({"no_relevant": "x"}, "no_relevant is 'x'; valid: skip"),
        ({"k": [10], "depth": 5}, "depth=5 is smaller than the largest K (10); raise depth"),
    ],
)
def test_api_errors_name_the_keywords_the_caller_wrote(kwargs, message):
    with pytest.raises(ConfigError) as err:
        harness.evaluate("demo", "bm25", **kwargs)
    assert str(err.value).startswith(message) and "metrics.k" not in str(err.value)
    assert "retrieval.depth" not in str(err.value) and "stats." not in str(err.value)
