"""End to end: score a stored run with retriever=run_file, and its bad inputs."""

import gzip
import json

from tests.conftest import write_redqa
from tests.helpers.cli import assert_one_line_error, harness


def test_run_trec_round_trip_gives_identical_metrics(tmp_path):
    harness("metrics=all", cwd=tmp_path)
    cell = tmp_path / "results/demo/bm25"
    stored = tmp_path / "stored.trec"
    stored.write_bytes((cell / "run.trec").read_bytes())
    res = harness("retriever=run_file", f"retriever.path={stored}", "metrics=all", cwd=tmp_path)
    assert "demo · stored · 48 queries" in res.stdout
    assert res.stderr == ""  # every id matched, nothing to report
    a = json.loads((cell / "metrics.json").read_text())
    b = json.loads((tmp_path / "results/demo/stored/metrics.json").read_text())
    assert a["results"] == b["results"]
    assert b["retriever"] == "stored" and b["run"]["retriever_notes"]["queries_in_run"] == 48
    packed = tmp_path / "packed.trec.gz"
    packed.write_bytes(gzip.compress(stored.read_bytes()))
    res = harness("retriever=run_file", f"retriever.path={packed}", "metrics=all", cwd=tmp_path)
    assert "demo · packed · 48 queries" in res.stdout and res.stderr == ""
    c = json.loads((tmp_path / "results/demo/packed/metrics.json").read_text())
    assert c["results"] == a["results"]


def test_json_run_with_missing_query_and_unknown_chunk(tmp_path):
    bench = write_redqa(tmp_path / "tiny.json")
    run = tmp_path / "sys.json"
    run.write_text(json.dumps({"q1": {"c1": 3.0, "c2": 2.0, "ghost": 9.0}}))
    res = harness(
        "corpus=redqa",
        f"corpus.path={bench}",
        "retriever=run_file",
        f"retriever.path={run}",
        "metrics.k=[1,2]",
        cwd=tmp_path,
    )
    assert "note: 1 benchmark query has no results in the run and score 0 (e.g. 'q2')" in res.stderr
    assert "1 ranked chunk id in 1 query is not in the corpus (e.g. 'ghost'); kept" in res.stderr
    doc = json.loads((tmp_path / "results/tiny/sys/metrics.json").read_text())
    assert doc["run"]["queries_without_results"] == 1
    assert doc["run"]["retriever_notes"]["unknown_chunk_ids"]["examples"] == ["ghost"]
    assert doc["run"]["unknown_ids"] == {
        "mode": "keep",
        "entries": 1,
        "queries": 1,
        "examples": ["ghost"],
    }
    hops = doc["results"]["hop"]
    assert hops["1"]["mean"]["coverage@2"] == 0.0  # q2 is absent: scores 0, stays counted
    assert hops["2"]["mean"]["coverage@2"] == 0.5  # ghost keeps rank 1: only c1 in the top 2


def test_malformed_run_line_is_one_error_line(tmp_path):
    run = tmp_path / "bad.trec"
    run.write_text("demo_001 Q0 Dunmarrow_overview 1 3.2 x\ndemo_002 Q0 y 2\n")
    res = harness("retriever=run_file", f"retriever.path={run}", cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, f"{run}:2: expected 6 fields")


def test_run_for_another_benchmark_is_refused(tmp_path):
    harness(cwd=tmp_path)
    bench = write_redqa(tmp_path / "tiny.json")
    run = tmp_path / "results/demo/bm25/run.trec"
    res = harness(
        "corpus=redqa",
        f"corpus.path={bench}",
        "retriever=run_file",
        f"retriever.path={run}",
        "results.dir=other",
        cwd=tmp_path,
        check=False,
    )
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "is it a run for another benchmark?" in res.stderr
    assert not (tmp_path / "other").exists() or not any((tmp_path / "other").rglob("*.json"))


def test_run_file_without_path(tmp_path):
    res = harness("retriever=run_file", cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, "retriever.path is required")
