"""The leaderboard replaces only what a leaderboard wrote: a file in --out that it did not
write, or that was edited since, stops it before anything is written. In this process."""

from __future__ import annotations

import json

import pytest

import harness
from harness.cli.main import main


def _board(capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    try:
        main(["leaderboard", "--no-significance", *args])
        code = 0
    except SystemExit as stop:
        code = stop.code or 0
    return code, capsys.readouterr().err


@pytest.fixture
def cells(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("bm25", "bm25-simple"):
        harness.evaluate("demo", name, bootstrap=0).save(tmp_path / "results" / "demo" / name)
    return tmp_path


def _snapshot(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_file_no_leaderboard_wrote_is_never_replaced(cells, capsys):
    out = cells / "lb"
    out.mkdir()
    (out / "table3.md").write_text("my own notes\n")
    code, err = _board(capsys, "--out", "lb", "--format", "markdown")
    assert code == 2 and "lb/table3.md was not written by a leaderboard" in err
    assert _snapshot(out) == {out / "table3.md": b"my own notes\n"}  # nothing written


def test_an_edited_table_stops_the_next_run_and_reruns_are_fine(cells, capsys):
    assert _board(capsys, "--out", "lb")[0] == 0
    assert _board(capsys, "--out", "lb")[0] == 0  # its own files: replaced freely
    assert _board(capsys, "--out", "lb", "--format", "latex")[0] == 0  # a partial run
    assert _board(capsys, "--out", "lb")[0] == 0  # ...whose files are listed too
    table = cells / "lb" / "table3.tex"
    table.write_text(table.read_text() + "% my edit\n")
    before = _snapshot(cells / "lb")
    code, err = _board(capsys, "--out", "lb")
    assert code == 2 and "table3.tex was not written by a leaderboard, or was edited" in err
    assert _snapshot(cells / "lb") == before


def test_a_folder_an_earlier_version_wrote_is_taken_once(cells, capsys):
    assert _board(capsys, "--out", "lb")[0] == 0
    out = cells / "lb"
    listed = json.loads((out / ".written").read_text())["files"]
    # an earlier version's flat list, and a table its partial run rewrote without listing
    (out / ".written").write_text(json.dumps({k: v for k, v in listed.items() if k != "x"}))
    (out / "table3.md").write_text("### an earlier version's table3\n")
    code, err = _board(capsys, "--out", "lb")
    assert code == 0 and "1 file(s) under" in err and "table3.md" in err
    assert json.loads((out / ".written").read_text())["format"] == 2
    (out / "table3.md").write_text("### edited now\n")
    assert _board(capsys, "--out", "lb")[0] == 2  # from now on an edit is kept


def test_an_interrupted_run_leaves_nothing_the_next_one_refuses(cells, capsys, monkeypatch):
    import os

    assert _board(capsys, "--out", "lb")[0] == 0
    harness.evaluate("demo", "bm25", bootstrap=0, name="bm25-again").save(
        cells / "results" / "demo" / "bm25-again"
    )  # the tables change
    moved = []

    def replace(src, dst):
        if ".lb.new-" in str(dst):  # written into the staging folder: as ever
            return os.rename(src, dst)
        if len(moved) == 3:  # the fourth file moved into --out: the disk is full
            raise OSError(28, "No space left on device")
        moved.append(dst)
        os.rename(src, dst)

    monkeypatch.setattr("harness.report.leaderboard.publish.os.replace", replace)
    code, _ = _board(capsys, "--out", "lb")
    assert code != 0 and len(moved) == 3  # three files are new, the rest as they were
    monkeypatch.undo()
    monkeypatch.chdir(cells)
    harness.evaluate("demo", "bm25-simple", bootstrap=0, name="simple-again").save(
        cells / "results" / "demo" / "simple-again"
    )  # and change again: the three moved files hold neither the listed nor the new bytes
    assert _board(capsys, "--out", "lb")[0] == 0


def test_notes_wait_for_success_and_an_error_is_the_one_line(cells, capsys):
    """Besides demo, a corpus of the user's: the demo note is said once the leaderboard is
    written; a run that fails (--out a file, --k no cell holds) prints its error line alone."""
    from tests.conftest import write_redqa

    mine = write_redqa(cells / "mine.json")
    harness.evaluate(mine, "bm25", bootstrap=0).save(cells / "results" / "mine" / "bm25")
    (cells / "afile").write_text("x")
    for args in (["--out", "afile"], ["--k", "7"]):
        code, err = _board(capsys, *args)
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    code, err = _board(capsys, "--out", "lb")
    assert code == 0, err
    assert "note: the packaged demo corpus is left out; --corpus demo shows it" in err
