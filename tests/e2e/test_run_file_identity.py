"""A run-file cell is its file's content: an edited file never shows the old numbers, the same
file by another path is the same cell, and a cell's data never changes under it unasked.
Run in this process (harness.cli.main), as the in-process bad-input cases are."""

from __future__ import annotations

import json
import shutil

import pytest

import harness
from harness.cli.main import main
from tests.conftest import write_redqa


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        main(["run", *args])
        code = 0
    except SystemExit as stop:
        code = stop.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """Two different demo runs as TREC files (bm25's and bm25-simple's), cwd tmp_path."""
    monkeypatch.chdir(tmp_path)
    for name in ("bm25", "bm25-simple"):
        harness.evaluate("demo", name, bootstrap=0).run.to_trec(tmp_path / f"{name}.trec")
    return tmp_path


def _sha(folder) -> str:
    return json.loads((folder / "metrics.json").read_text())["config"]["retriever"]["sha256"]


def test_an_edited_run_file_is_refused_not_shown_from_disk(runs, capsys):
    shutil.copy(runs / "bm25.trec", runs / "mine.trec")
    code, out, _ = _cli(
        capsys, "retriever=run_file", "retriever.path=mine.trec", "stats.bootstrap=0"
    )
    assert code == 0 and "demo · mine · 48 queries" in out
    cell = runs / "results/demo/mine"
    first = (cell / "metrics.json").read_bytes()
    assert _sha(cell).startswith("sha256:")

    # the same file by another path: the same cell, up to date
    code, _, err = _cli(
        capsys, "retriever=run_file", f"retriever.path={runs / 'mine.trec'}", "stats.bootstrap=0"
    )
    assert code == 0 and "is up to date" in err

    # another run in the same file: refused, the stored cell untouched
    shutil.copy(runs / "bm25-simple.trec", runs / "mine.trec")
    code, _, err = _cli(
        capsys, "retriever=run_file", "retriever.path=mine.trec", "stats.bootstrap=0"
    )
    assert code == 2
    assert "results/demo/mine holds a cell of another version of this run file" in err
    assert "force=true" in err and err.count("\n") == 1
    assert (cell / "metrics.json").read_bytes() == first

    code, _, err = _cli(
        capsys, "retriever=run_file", "retriever.path=mine.trec", "stats.bootstrap=0", "force=true"
    )
    assert code == 0 and _sha(cell) != json.loads(first)["config"]["retriever"]["sha256"]
    want = harness.evaluate("demo", "bm25-simple", bootstrap=0).means
    assert harness.Evaluation.from_disk(cell).means.equals(want)


def test_a_pinned_checksum_must_match_the_file(runs, capsys):
    code, _, err = _cli(
        capsys, "retriever=run_file", "retriever.path=bm25.trec", "retriever.sha256=sha256:00"
    )
    assert code == 2 and "its checksum is sha256:" in err and "retriever.sha256 is sha256:00" in err
    assert not (runs / "results").exists()


def test_a_cell_written_without_the_checksum_is_recomputed_with_one_note(runs, capsys, monkeypatch):
    args = ("retriever=run_file", "retriever.path=bm25.trec", "stats.bootstrap=0")
    assert _cli(capsys, *args)[0] == 0
    meta = runs / "results/demo/bm25/metrics.json"
    doc = json.loads(meta.read_text())
    del doc["config"]["retriever"]["sha256"]  # as cells were written before
    meta.write_text(json.dumps(doc, indent=2))
    (runs / "sub").mkdir()
    monkeypatch.chdir(runs / "sub")  # its recorded path no longer names the file from here
    args = ("retriever=run_file", "retriever.path=../bm25.trec", "results.dir=../results")
    code, _, err = _cli(capsys, *args, "stats.bootstrap=0")
    assert code == 0
    assert "was written by an earlier version (metrics/3: no run file checksum); recomputed" in err
    assert _sha(runs / "results/demo/bm25").startswith("sha256:")


def test_a_cell_of_other_data_is_refused_not_replaced(runs, capsys):
    # two benchmarks under one name: two RedQA files both called tiny.json
    (runs / "a").mkdir()
    (runs / "b").mkdir()
    write_redqa(runs / "a" / "tiny.json")
    other = {c: {"content": t} for c, t in [("c1", "alpha"), ("c2", "beta"), ("c3", "gamma")]}
    write_redqa(runs / "b" / "tiny.json", corpus=other)
    assert _cli(capsys, "corpus=redqa", "corpus.path=a/tiny.json", "stats.bootstrap=0")[0] == 0
    stored = (runs / "results/tiny/bm25/metrics.json").read_bytes()
    code, _, err = _cli(capsys, "corpus=redqa", "corpus.path=b/tiny.json", "stats.bootstrap=0")
    assert code == 2
    assert "results/tiny/bm25 holds a cell computed on other data" in err
    assert "two benchmarks share the name 'tiny'; give this one its own corpus.name" in err
    assert (runs / "results/tiny/bm25/metrics.json").read_bytes() == stored
    code, _, err = _cli(
        capsys, "corpus=redqa", "corpus.path=b/tiny.json", "corpus.name=tiny-b", "stats.bootstrap=0"
    )
    assert code == 0 and (runs / "results/tiny-b/bm25/metrics.json").is_file()
