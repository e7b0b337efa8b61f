"""Reading TREC and JSON runs: validation with file and line, unknown ids reported."""

import json

import pytest

from harness.core.errors import BenchmarkError, ConfigError
from harness.core.types import Chunk, Query
from retrievers.run_file import RunFile, read_run

CORPUS = {c: Chunk(c, c) for c in ("c1", "c2", "c3")}
QUERIES = (
    Query("q1", "x", (frozenset({"c1"}),)),
    Query("q2", "y", (frozenset({"c2"}),)),
)


def _write(tmp_path, text, name="run.trec"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_trec_and_json_read_the_same(tmp_path):
    trec = _write(tmp_path, "q1 Q0 c1 1 2.5 sys\nq1 Q0 c2 2 1 sys\n\nq2 Q0 c3 1 -0.5 sys\n")
    js = _write(tmp_path, json.dumps({"q1": {"c1": 2.5, "c2": 1}, "q2": {"c3": -0.5}}), "r.json")
    assert read_run(trec) == read_run(js) == {"q1": {"c1": 2.5, "c2": 1.0}, "q2": {"c3": -0.5}}


@pytest.mark.parametrize(
    "text,message",
    [
        ("q1 Q0 c1 1 2.5 sys\nq1 Q0 c2 2 1.0\n", r"run.trec:2: expected 6 fields .* found 5"),
        ("q1 Q0 c1 1 high sys\n", r"run.trec:1: score 'high' is not a number"),
        ("q1 Q0 c1 one 2 sys\n", r"run.trec:1: rank 'one' is not an integer"),
        ("q1 Q0 c1 1 nan sys\n", r"run.trec:1: score 'nan' is not finite"),
        (
            "q1 Q0 c1 1 2 s\nq1 Q0 c1 2 1 s\n",
            r"run.trec:2: chunk 'c1' appears twice for query "
            r"'q1' \(first at line 1\)",
        ),
        ("\n\n", r"holds no results"),
    ],
)
def test_malformed_trec(tmp_path, text, message):
    with pytest.raises(BenchmarkError, match=message):
        read_run(_write(tmp_path, text))


@pytest.mark.parametrize(
    "text,message",
    [
        ('{"q1": {"c1": 1}', r"r.json:1: not valid JSON"),
        ('["q1"]', r"expected a JSON object"),
        ('{"q1": [1, 2]}', r"query 'q1' maps to list"),
        ('{"q1": {"c1": true}}', r"query 'q1', chunk 'c1': score True is not a number"),
        ('{"q1": {"c1": "x"}}', r"score 'x' is not a number"),
        ('{"q1": {}, "q2": {}}', r"r.json: the run holds no results"),
    ],
)
def test_malformed_json(tmp_path, text, message):
    with pytest.raises(BenchmarkError, match=message):
        read_run(_write(tmp_path, text, "r.json"))


def test_unknown_ids_reported_unknown_chunks_kept_in_place(tmp_path):
    path = _write(tmp_path, "q1 Q0 zz 1 3 s\nq1 Q0 c1 2 2 s\nq9 Q0 c1 1 1 s\n")
    r = RunFile(path=str(path))
    r.index(CORPUS)
    run = r.search(QUERIES, depth=10)
    # an unknown query is left out; an unknown chunk keeps its rank, with code -1
    assert run["q1"].ids == ("zz", "c1") and run["q1"].codes.tolist() == [-1, 0]
    assert "q9" not in run and "q2" not in run
    assert r.notes["unknown_query_ids"] == {"count": 1, "examples": ["q9"]}
    assert r.notes["unknown_chunk_ids"] == {"entries": 1, "distinct": 1, "examples": ["zz"]}
    text = " | ".join(r.messages())
    assert "1 query id(s) in the run are not queries the benchmark scores" in text


def test_lists_longer_than_depth_are_cut_and_counted(tmp_path):
    path = _write(tmp_path, "".join(f"q1 Q0 c{i} {i} {10 - i} s\n" for i in (1, 2, 3)))
    r = RunFile(path=str(path))
    r.index(CORPUS)
    assert r.search(QUERIES, depth=2)["q1"].ids == ("c1", "c2")
    assert r.notes["queries_cut_at_depth"] == 1


def test_run_for_another_benchmark(tmp_path):
    r = RunFile(path=str(_write(tmp_path, "x1 Q0 c1 1 2 s\n")))
    r.index(CORPUS)
    with pytest.raises(BenchmarkError, match="none of its 1 query ids is in the benchmark"):
        r.search(QUERIES, depth=10)
    r = RunFile(path=str(_write(tmp_path, "q1 Q0 other 1 2 s\n")))
    r.index(CORPUS)
    with pytest.raises(BenchmarkError, match="none of its chunk ids is in the corpus"):
        r.search(QUERIES, depth=10)


def test_name_from_file_and_bad_format(tmp_path):
    assert RunFile(path="/runs/my system.v2.trec").name == "my_system.v2"
    assert RunFile(path="/runs/x.trec", name="prod").name == "prod"
    with pytest.raises(ConfigError, match="retriever.format is 'csv'"):
        RunFile(path="/runs/x.trec", format="csv")
    with pytest.raises(BenchmarkError, match="run file not found"):
        read_run(tmp_path / "missing.trec")
