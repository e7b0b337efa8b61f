"""Cell identity and growing metric sets, end to end: a parameter sweep leaves one cell per
setting, other metrics are scored from the stored ranked list and merged, a cell of another
retriever config is never replaced without force."""

import json

from tests.helpers.cli import harness, leaderboard
from tests.helpers.markdown import squeeze

FAST = ("stats.bootstrap=0",)


def _doc(cell):
    return json.loads((cell / "metrics.json").read_text())


def _column(cell, metric):
    lines = (cell / "per_query.csv").read_text().splitlines()
    at = lines[0].split(",").index(metric)
    return [line.split(",")[at] for line in lines[1:]]


def test_parameter_sweep_leaves_a_cell_per_setting_and_both_reach_the_leaderboard(tmp_path):
    harness("-m", "retriever.k1=0.9,1.2", "corpus=demo", *FAST, cwd=tmp_path)
    demo = tmp_path / "results" / "demo"
    assert sorted(p.name for p in demo.iterdir()) == ["bm25[k1=0.9]", "bm25[k1=1.2]"]
    doc = _doc(demo / "bm25[k1=0.9]")
    assert doc["retriever"] == "bm25[k1=0.9]" and doc["variant"] == {"k1": 0.9}
    assert doc["display_name"] == "BM25 [k1=0.9]"
    assert doc["config"]["retriever"]["k1"] == 0.9
    trec = (demo / "bm25[k1=0.9]" / "run.trec").read_text().splitlines()
    assert trec[0].split()[5] == "bm25[k1=0.9]"
    out = leaderboard(cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    table = squeeze((tmp_path / "leaderboard" / "table3.md").read_text())
    assert "| BM25 [k1=0.9] |" in table and "| BM25 [k1=1.2] |" in table
    # the shipped config keeps its plain name beside the variants
    harness("corpus=demo", *FAST, cwd=tmp_path)
    assert (demo / "bm25").is_dir() and len(list(demo.iterdir())) == 3


def test_other_metrics_are_scored_from_the_stored_run_and_merged(tmp_path):
    cell = tmp_path / "results" / "demo" / "bm25"
    harness(*FAST, cwd=tmp_path)
    rare = _doc(cell)
    run_bytes = (cell / "run.trec").read_bytes()
    coverage = _column(cell, "coverage@10")

    out = harness("metrics=standard", *FAST, cwd=tmp_path)
    assert "scored its stored ranked list (no retrieval); added nDCG@1" in out.stderr
    grown = _doc(cell)
    assert set(rare["metrics"]) < set(grown["metrics"])
    assert {"P@10", "AP", "nDCG@10"} <= set(grown["metrics"])
    assert (cell / "run.trec").read_bytes() == run_bytes
    assert _column(cell, "coverage@10") == coverage
    for m in rare["metrics"]:
        assert grown["results"]["overall"]["mean"][m] == rare["results"]["overall"]["mean"][m]
    # the printed table shows what was asked for
    header = next(ln for ln in out.stdout.splitlines() if ln.startswith("metric"))
    assert "coverage@10" not in out.stdout.split(header)[1].split("Variance")[0]

    # the same numbers as a cell computed afresh with those metrics
    fresh = tmp_path / "fresh"
    harness("metrics=standard", *FAST, f"results.dir={fresh}", cwd=tmp_path)
    assert _column(fresh / "demo" / "bm25", "P@10") == _column(cell, "P@10")

    # a relevance level is a new set of names, beside the level-1 ones
    harness("metrics=standard", "metrics.relevance_level=2", *FAST, cwd=tmp_path)
    names = _doc(cell)["metrics"]
    assert "P(rel=2)@10" in names and "P@10" in names and "coverage@10" in names

    # force=true retrieves again, and keeps every metric the cell had
    out = harness("metrics.names=[coverage]", "metrics.k=[10]", "force=true", *FAST, cwd=tmp_path)
    assert set(names) == set(_doc(cell)["metrics"])
    assert (cell / "run.trec").read_bytes() == run_bytes

    # asking for a subset of what the cell holds shows it from disk
    out = harness("metrics.names=[coverage]", "metrics.k=[10]", *FAST, cwd=tmp_path)
    assert "is up to date" in out.stderr
    assert "coverage@10" in out.stdout and "group_ndcg@10" not in out.stdout


def test_a_cell_of_another_config_is_not_replaced_without_force(tmp_path):
    harness(*FAST, cwd=tmp_path)
    cell = tmp_path / "results" / "demo" / "bm25"
    before = (cell / "metrics.json").read_bytes()
    out = harness("retriever=bm25-simple", "retriever.name=bm25", *FAST, cwd=tmp_path, check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("error: ") and "holds a cell of another retriever" in out.stderr
    assert "tokenizer: simple here, whitespace there" in out.stderr
    assert (cell / "metrics.json").read_bytes() == before
    out = harness("retriever=bm25-simple", "retriever.name=bm25", "force=true", *FAST, cwd=tmp_path)
    assert "replaced (force=true)" in out.stderr
    assert _doc(cell)["config"]["retriever"]["tokenizer"] == "simple"


def test_reproduction_says_not_computed_where_a_cell_lacks_the_metric(tmp_path):
    harness("metrics=standard", *FAST, cwd=tmp_path)
    ref = tmp_path / "results" / "reference"
    ref.mkdir()
    (ref / "mine.csv").write_text(
        "source,corpus,retriever,label,model_id,metric,value\n"
        "mine,demo,bm25,BM25,bm25,coverage@10,55.73\n"
    )
    out = leaderboard("--check", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    text = (tmp_path / "leaderboard" / "reproduction.md").read_text()
    assert "not computed" in text and "FAIL" not in text
    assert "metrics.names=[coverage@10]" in text
    # once computed from the stored run, the published number is reproduced
    harness("metrics.names=[coverage]", "metrics.k=[10]", *FAST, cwd=tmp_path)
    out = leaderboard("--check", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| OK |" in squeeze((tmp_path / "leaderboard" / "reproduction.md").read_text())
