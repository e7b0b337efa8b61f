"""A full leaderboard removes what the previous one wrote and it does not, and nothing else."""

import json
import os

from harness.report.leaderboard.publish import MANIFEST, _forget_earlier


def _write(out, names):
    files = []
    for name in names:
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"table {name}")
        files.append(path)
    return files


def test_only_unchanged_files_of_the_last_full_run_are_removed(tmp_path, caplog):
    out, outside = tmp_path / "lb", tmp_path / "outside"
    _forget_earlier(out, _write(out, ["a.md", "b.md", "plots/p.png", "mine.md", "l/x.md"]), True)
    assert (out / MANIFEST).is_file()
    (out / "mine.md").write_text("the user's own version")  # replaced since
    outside.mkdir()
    (outside / "x.md").write_text("table l/x.md")  # the same bytes, but behind a link
    (out / "l" / "x.md").unlink()
    (out / "l").rmdir()
    os.symlink(outside, out / "l")
    caplog.set_level("INFO", logger="harness.report")
    _forget_earlier(out, _write(out, ["a.md"]), True)
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "a.md", "l", "mine.md"]
    assert (outside / "x.md").is_file()  # never through a link
    assert "removed 2 file(s)" in caplog.text and "b.md, plots/p.png" in caplog.text


def test_a_partial_run_removes_nothing_and_adds_its_files_to_the_list(tmp_path):
    out = tmp_path / "lb"
    _forget_earlier(out, _write(out, ["a.md", "b.md"]), True)
    _forget_earlier(out, _write(out, ["a.tex"]), False)
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "a.md", "a.tex", "b.md"]
    assert sorted(json.loads((out / MANIFEST).read_text())["files"]) == ["a.md", "a.tex", "b.md"]
