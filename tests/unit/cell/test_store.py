"""Result files: atomic replacement, deterministic JSON, TREC export."""

import math
import os
import threading
import time

import pytest

from harness.cell import store
from harness.cell.store import lock, run_trec, tidy, write_cell
from harness.core.errors import HarnessError
from harness.core.files import check_writable, to_json
from harness.core.run import Run
from harness.core.types import Benchmark, Chunk, Query


def test_write_cell_replaces_whole_directory(tmp_path):
    cell = tmp_path / "corpus" / "bm25"
    write_cell(cell, {"metrics.json": "1", "run.trec": "x"})
    write_cell(cell, {"metrics.json": "2"})  # a cell file the new cell lacks goes
    assert sorted(p.name for p in cell.iterdir()) == ["metrics.json"]
    assert (cell / "metrics.json").read_text() == "2"
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
    with pytest.raises(HarnessError, match=r"file where the results folder .* belongs"):
        check_writable(blocker / "results")
    check_writable(tmp_path / "a" / "b")  # fine, and creates nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_check_writable_read_only_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    if os.access(ro, os.W_OK):  # root writes anywhere
        pytest.skip("running as root: permissions do not stop writes")
    with pytest.raises(HarnessError, match="not writable.*set results.dir"):
        check_writable(ro / "results")


def test_run_trec_format_and_whitespace_ids():
    bench = Benchmark("t", {"a": Chunk("a", "")}, (Query("q1", "x", ()),), "s", "m")
    run = Run.from_scores("bm25", {"q1": [("a", 1.5)]}, 10)
    assert run_trec(bench, run) == "q1 Q0 a 1 1.5 bm25\n"
    bad = Benchmark("t", {"a b": Chunk("a b", "")}, (Query("q1", "x", ()),), "s", "m")
    with pytest.raises(HarnessError, match="'a b' contains white space"):
        run_trec(bad, Run.from_scores("bm25", {"q1": [("a b", 1.0)]}, 10))


def test_swap_never_leaves_the_cell_absent(tmp_path, monkeypatch):
    """While the new cell moves in, the folder always holds a whole cell (old or new)."""
    cell = tmp_path / "c" / "bm25"
    write_cell(cell, {"a.txt": "old"})
    seen = []
    real_exchange = store._exchange

    def watching(a, b):
        seen.append((cell / "a.txt").read_text())
        ok = real_exchange(a, b)
        seen.append((cell / "a.txt").read_text())
        return ok

    monkeypatch.setattr(store, "_exchange", watching)
    write_cell(cell, {"a.txt": "new"})
    assert seen == ["old", "new"]
    assert sorted(p.name for p in cell.parent.iterdir()) == ["bm25"]


def test_fallback_swap_without_rename_exchange(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "_exchange", lambda a, b: False)
    cell = tmp_path / "bm25"
    write_cell(cell, {"a.txt": "1"})
    write_cell(cell, {"a.txt": "2"})
    assert (cell / "a.txt").read_text() == "2"
    assert [p.name for p in tmp_path.iterdir()] == ["bm25"]


def test_tidy_restores_a_cell_moved_aside_and_removes_leftovers(tmp_path):
    cell = tmp_path / "bm25[k1=0.5]"  # brackets are glob syntax; the names must still match
    (tmp_path / ".bm25[k1=0.5].old-1234abcd").mkdir()
    (tmp_path / ".bm25[k1=0.5].old-1234abcd" / "metrics.json").write_text("{}")
    (tmp_path / ".bm25[k1=0.5].new-xyz").mkdir()
    (tmp_path / ".bm25.new-other").mkdir()  # another cell's: not ours to touch
    tidy(cell)
    assert (cell / "metrics.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".bm25.new-other", "bm25[k1=0.5]"]


def test_lock_serialises_writers_of_one_cell(tmp_path):
    cell = tmp_path / "c" / "bm25"
    order = []

    def writer(tag, pause):
        with lock(cell):
            order.append(f"{tag} in")
            time.sleep(pause)
            store._swap_in(cell, {"who.txt": tag})  # write_cell's body; it takes the lock itself
            order.append(f"{tag} out")

    first = threading.Thread(target=writer, args=("a", 0.3))
    first.start()
    while not order:
        time.sleep(0.01)
    writer("b", 0)
    first.join()
    assert order == ["a in", "a out", "b in", "b out"]
    assert (cell / "who.txt").read_text() == "b"


def test_failed_first_run_leaves_no_folders(tmp_path):
    cell = tmp_path / "results" / "corpus" / "bm25"
    with pytest.raises(RuntimeError), lock(cell):
        raise RuntimeError("retrieval failed")
    assert list(tmp_path.iterdir()) == []


def test_results_corpus_as_a_file_is_one_error(tmp_path):
    (tmp_path / "corpus").write_text("x")
    with pytest.raises(HarnessError, match=r"corpus is a file where a folder belongs"):
        with lock(tmp_path / "corpus" / "bm25"):
            pass


def test_per_query_csv_round_trips_labels_and_ids_with_commas_quotes_and_breaks(tmp_path):
    import numpy as np

    ids = ["q,1", 'q"2', "q\r3"]
    queries = [Query(q, "text", [["c1"]]) for q in ids]
    bench = Benchmark("b", {"c1": Chunk("c1", "x")}, queries, "s", "m")
    strata = {"topic": ["tax, finance", 'a "b"', "plain"], "a,b": ["x", "y", "z"]}
    values = {"coverage@10": np.array([1.0, 0.5, 0.0])}
    path = tmp_path / "per_query.csv"
    path.write_text(store.per_query_csv(bench, strata, values), encoding="utf-8")
    query_ids, labels, groups, back = store.read_per_query(path)
    assert list(query_ids) == ids and groups == [1, 1, 1]
    assert {s: list(v) for s, v in labels.items()} == strata
    assert back["coverage@10"].tolist() == [1.0, 0.5, 0.0]


def test_check_means_says_when_the_values_have_no_mean(tmp_path):
    import numpy as np

    doc = {"results": {"overall": {"mean": {"coverage@10": 0.5, "perfrecall@10": None}}}}
    store.check_means(tmp_path, {"perfrecall@10": np.array([np.nan])}, doc)  # both none: fine
    with pytest.raises(HarnessError, match="coverage@10 values hold no number but metrics.json "
                       "says 0.5; the folder is damaged"):  # fmt: skip
        store.check_means(tmp_path, {"coverage@10": np.array([np.nan, np.nan])}, doc)
    with pytest.raises(HarnessError, match="values average to 1.0 but metrics.json says none"):
        store.check_means(tmp_path, {"perfrecall@10": np.array([1.0])}, doc)


def test_a_bare_carriage_return_in_per_query_csv_is_one_error(tmp_path):
    path = tmp_path / "per_query.csv"
    path.write_bytes(b"query_id,field,n_groups,m\nq1,a\rb,1,0.5\n")
    with pytest.raises(HarnessError, match="per_query.csv: .*the folder is damaged"):
        store.read_per_query(path)
