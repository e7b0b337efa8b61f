"""Result files: atomic replacement, deterministic JSON, TREC export."""

import math

import pytest

from harness.cell.store import run_trec, write_cell
from harness.core.errors import HarnessError
from harness.core.files import check_writable, to_json
from harness.core.types import Benchmark, Chunk, Query, Run


def test_write_cell_replaces_whole_directory(tmp_path):
    cell = tmp_path / "corpus" / "bm25"
    write_cell(cell, {"a.txt": "1", "old.txt": "x"})
    write_cell(cell, {"a.txt": "2"})
    assert sorted(p.name for p in cell.iterdir()) == ["a.txt"]
    assert (cell / "a.txt").read_text() == "2"
    assert [p.name for p in cell.parent.iterdir()] == ["bm25"]  # no temp dirs left


def test_failed_write_keeps_old_cell(tmp_path):
    cell = tmp_path / "bm25"
    write_cell(cell, {"a.txt": "1"})
    with pytest.raises(OSError):
        write_cell(cell, {"a.txt": "2", "sub/b.txt": "x"})  # sub/ does not exist
    assert (cell / "a.txt").read_text() == "1"
    assert [p.name for p in tmp_path.iterdir()] == ["bm25"]


def test_to_json_nan_is_null_and_stable():
    doc = {"b": math.nan, "a": [1.0, 0.1 + 0.2]}
    assert to_json(doc) == to_json(doc)
    assert '"b": null' in to_json(doc) and "0.30000000000000004" in to_json(doc)


def test_check_writable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(HarnessError, match="not writable.*set results.dir"):
        check_writable(blocker / "results")


def test_run_trec_format_and_whitespace_ids():
    bench = Benchmark("t", {"a": Chunk("a", "")}, (Query("q1", "x", ()),), "s", "m")
    run = Run.from_scores("bm25", {"q1": [("a", 1.5)]}, 10)
    assert run_trec(bench, run) == "q1 Q0 a 1 1.5 bm25\n"
    bad = Benchmark("t", {"a b": Chunk("a b", "")}, (Query("q1", "x", ()),), "s", "m")
    with pytest.raises(HarnessError, match="'a b' contains white space"):
        run_trec(bad, Run.from_scores("bm25", {"q1": [("a b", 1.0)]}, 10))
