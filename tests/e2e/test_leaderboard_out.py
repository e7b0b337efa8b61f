"""The leaderboard replaces only what a leaderboard wrote: a file in --out that it did not
write, or that was edited since, stops it before anything is written. In this process."""

from __future__ import annotations

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
