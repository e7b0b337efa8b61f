"""End to end: `python -m harness` in a temp directory, as a user runs it."""

import json
import os
from pathlib import Path

import pytest

from tests.conftest import GENERAL_WIKI, ROOT, write_redqa
from tests.helpers.cli import assert_one_line_error, harness, run_module


def test_default_run_prints_table_and_writes_cell(tmp_path):
    out = harness(cwd=tmp_path).stdout
    assert "demo · bm25 · 48 queries" in out
    lines = out.splitlines()
    # eight metrics with names this long make a table wider than 120 columns: one row each
    header = next(line for line in lines if line.startswith("metric"))
    assert header.split() == ["metric", "overall", "hop=1", "hop=2", "hop=3", "hop=4"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[lines.index(header) + 2 :]}
    assert list(rows)[:9] == [
        "n",
        "coverage@5",
        "perfrecall@5",
        "group_ndcg@5",
        "group_mrr@5",
        "coverage@10",
        "perfrecall@10",
        "group_ndcg@10",
        "group_mrr@10",
    ]
    cell = tmp_path / "results" / "demo" / "bm25"
    assert sorted(p.name for p in cell.iterdir()) == [
        "config.yaml",
        "metrics.json",
        "per_query.csv",
        "qrels.trec",
        "run.trec",
        "timings.json",
    ]
    doc = json.loads((cell / "metrics.json").read_text())
    overall = doc["results"]["overall"]
    assert overall["n"] == int(rows["n"][0]) == 48
    assert f"{100 * overall['mean']['group_ndcg@10']:.2f}" == rows["group_ndcg@10"][0]
    assert doc["schema"] == "retrieval-harness/metrics/3"
    assert doc["benchmark"]["checksum"].startswith("sha256:")
    assert doc["config"]["retriever"]["k1"] == 1.5
    assert doc["provenance"]["versions"]["numpy"]
    per_query = (cell / "per_query.csv").read_text().splitlines()
    assert per_query[0].startswith("query_id,hop,n_groups,coverage@5")
    assert len(per_query) == 49
    trec = (cell / "run.trec").read_text().splitlines()
    assert len(trec) == 48 * 100 and trec[0].split()[1::2] == ["Q0", "1", "bm25"]


def test_rerun_is_byte_identical(tmp_path):
    harness(cwd=tmp_path)
    cell = tmp_path / "results" / "demo" / "bm25"
    first = {p.name: p.read_bytes() for p in cell.iterdir() if p.name != "timings.json"}
    harness(cwd=tmp_path)
    second = {p.name: p.read_bytes() for p in cell.iterdir() if p.name != "timings.json"}
    assert first == second


def test_bm25_run_does_not_import_torch(tmp_path):
    # -X importtime lists every module the run imports, whenever it is imported
    res = harness(cwd=tmp_path, python_flags=["-X", "importtime"])
    imported = {
        ln.rsplit("|", 1)[-1].strip().split(".")[0]
        for ln in res.stderr.splitlines()
        if ln.startswith("import time:")
    }
    assert "numpy" in imported  # the listing is there to read
    assert "torch" not in imported


def test_general_wiki_with_custom_cutoffs(tmp_path):
    if not GENERAL_WIKI.is_file():
        pytest.skip(f"reference data absent: {GENERAL_WIKI}")
    out = harness(
        "corpus=general-wiki",
        "metrics.k=[1,3,5,10,20]",
        "retrieval.depth=100",
        cwd=tmp_path,
        env={"HARNESS_DATA_DIR": str(GENERAL_WIKI.parent.parent)},
    ).stdout
    assert "general-wiki · bm25 · 688 queries" in out and "coverage@20" in out
    doc = json.loads((tmp_path / "results/general-wiki/bm25/metrics.json").read_text())
    assert {k: v["n"] for k, v in doc["results"]["hop"].items()} == {
        "1": 214,
        "2": 175,
        "3": 159,
        "4": 140,
    }


def test_beir_folder(tmp_path):
    folder = tmp_path / "tiny-beir"
    (folder / "qrels").mkdir(parents=True)
    docs = {"d1": "salt marsh birds", "d2": "river mill wheel", "d3": "salt pans of the coast"}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in docs.items())
    )
    queries = {"q1": "salt", "q2": "mill", "q3": "nothing relevant"}
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items())
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td3\t2\nq2\td2\t1\nq3\td1\t0\n"
    )
    out = harness("corpus=beir", f"corpus.path={folder}", "metrics.k=[1,2]", cwd=tmp_path).stdout
    assert "tiny-beir · bm25 · 3 queries" in out
    said = "(1 query without gold (or without a relevant chunk) is left out of the means;"
    assert said in out
    doc = json.loads((tmp_path / "results/tiny-beir/bm25/metrics.json").read_text())
    overall = doc["results"]["overall"]
    assert overall["excluded"]["coverage@2"] == 1
    assert overall["mean"]["coverage@2"] == 1.0  # q1: both salt chunks; q2: the mill chunk
    assert overall["mean"]["coverage@1"] == pytest.approx((0.5 + 1.0) / 2)


def _bad_file(tmp_path: Path, name: str) -> Path:
    q = {"query_id": "q", "question": "x", "gold_chunk_groups": [["c1"]]}
    variants = {
        "invalid-json": None,
        "no-question": [{"query_id": "q", "gold_chunk_groups": [["c1"]]}],
        "empty-question": [{**q, "question": ""}],
        "bad-groups": [{**q, "gold_chunk_groups": [["c1"], []]}],
        "duplicate-ids": [q, q],
    }
    path = tmp_path / f"{name}.json"
    if variants[name] is None:
        path.write_text('{"queries": [')
    else:
        write_redqa(path, queries=variants[name])
    return path


@pytest.mark.parametrize(
    "case, message",
    [
        ("invalid-json", "invalid JSON at line 1"),
        ("no-question", "query 'q' (queries[0]) needs a non-empty 'question'"),
        ("empty-question", "query 'q' (queries[0]) needs a non-empty 'question'"),
        ("bad-groups", "'gold_chunk_groups' must be a list of non-empty lists"),
        ("duplicate-ids", "duplicate query_id 'q'"),
    ],
)
def test_bad_benchmark_file(tmp_path, case, message):
    path = _bad_file(tmp_path, case)
    res = harness("corpus=redqa", f"corpus.path={path}", cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, message)
    assert str(path) in res.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["corpus=redqa", "corpus.path=/no/such/file.json"],
            "benchmark not found: /no/such/file.json",
        ),
        (["corpus=redqa"], "corpus.path is required"),
        (["retriever=bm26"], "unknown retriever 'bm26' (did you mean 'bm25'?); valid: bge-m3,"),
        (["corpus=genral-wiki"], "unknown corpus 'genral-wiki' (did you mean 'general-wiki'?)"),
        (["metrics.k=[0,10]"], "metrics.k must hold positive integers, got 0"),
        (["retrieval.depth=5"], "retrieval.depth=5 is smaller than the largest K (10)"),
        (["metrics.names=[coverage,ndgc]"], "unknown metric 'ndgc' (did you mean 'nDCG'?)"),
        (["retriever.tokenizer=simpel"], "unknown tokenizer 'simpel' (did you mean 'simple'?)"),
        (["retrieval.dpeth=3"], "unknown config key 'retrieval.dpeth' (did you mean 'depth'?)"),
        (["retrieval.depth=ten"], "Value 'ten' of type 'str' could not be converted to Integer"),
    ],
)
def test_bad_arguments(tmp_path, args, message):
    assert_one_line_error(harness(*args, cwd=tmp_path, check=False), tmp_path, message)


def test_checksum_mismatch_in_data_dir(tmp_path):
    data = tmp_path / "data"
    (data / "redqa").mkdir(parents=True)
    write_redqa(data / "redqa" / "general-wiki.json")
    res = harness(
        "corpus=general-wiki", cwd=tmp_path, env={"HARNESS_DATA_DIR": str(data)}, check=False
    )
    assert_one_line_error(res, tmp_path, "checksum mismatch for")
    assert "expected f512990911287d032ccb49bf848d2738021cf91d" in res.stderr


def test_unwritable_results_dir(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    res = harness(f"results.dir={blocker}/results", cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, "is a file where the results folder")


def test_non_editable_install_runs_from_any_directory(tmp_path):
    """Build a wheel, install it into a target dir, and run from an unrelated directory."""
    wheels = tmp_path / "wheels"
    no_checkout = {"PYTHONPATH": os.environ.get("PYTHONPATH")}  # pip: not the checkout
    run_module("pip", "wheel", "--no-deps", "-q", "-w", wheels, ROOT, cwd=tmp_path,
               env=no_checkout)  # fmt: skip
    target = tmp_path / "site"
    wheel = next(wheels.glob("*.whl"))
    run_module("pip", "install", "--no-deps", "-q", "--target", target, wheel, cwd=tmp_path,
               env=no_checkout)  # fmt: skip
    work = tmp_path / "elsewhere"
    work.mkdir()
    res = harness("retriever=bm25-simple", cwd=work, env={"PYTHONPATH": str(target)}, check=False)
    assert res.returncode == 0, res.stderr
    assert "demo · bm25-simple · 48 queries" in res.stdout
    page = target / "harness/report/leaderboard"  # the leaderboard page's style and script
    assert (page / "page.css").is_file() and (page / "page.js").is_file()
    assert (
        str(target)
        in json.loads((work / "results/demo/bm25-simple/metrics.json").read_text())["benchmark"][
            "source"
        ]
    )


def test_help_lists_groups_and_examples(tmp_path):
    out = harness("--help", cwd=tmp_path).stdout
    assert "Usage: python -m harness" in out
    assert "retriever: bge-m3, bge-m3-rare, bm25, bm25-simple, custom, e5-large" in out
    assert "HARNESS_DATA_DIR" in out
    assert not (tmp_path / "results").exists()
