"""Fault injection (docs/reliability.md): a run killed with SIGKILL while encoding, while
writing the strata file, or while writing a cell loses nothing that was already there, and
the rerun's files are byte-identical to those of a run that was never interrupted. Also: a
full disk (a small tmpfs where the machine allows mounting one, else a read-only folder) is
one error line with nothing half-written; and result files are byte-identical across
processes and hash seeds."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import harness, leaderboard, run_module, stratify

NO_STATS = ("stats.bootstrap=0",)
DENSE = ("retriever=minilm", "retriever.shard_size=16", "device=cpu", *NO_STATS)


def _files(cell: Path) -> dict[str, bytes]:
    """A cell's files but timings.json (wall-clock times and the date differ by nature)."""
    return {p.name: p.read_bytes() for p in sorted(cell.iterdir()) if p.name != "timings.json"}


def _killed(res: subprocess.CompletedProcess) -> bool:
    return res.returncode == -signal.SIGKILL


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_kill_during_encoding_then_rerun_is_identical(tmp_path):
    pytest.importorskip("sentence_transformers")
    clean, hurt = tmp_path / "clean", tmp_path / "hurt"
    clean.mkdir(), hurt.mkdir()
    harness(*DENSE, "cache_dir=cache", cwd=clean)
    res = harness(*DENSE, "cache_dir=cache", cwd=hurt, env={"HARNESS_FAULT": "encode"}, check=False)
    assert _killed(res), res.stderr[-2000:]
    assert not (hurt / "results").exists()  # killed before any result: none half-written
    shards = list((hurt / "cache").rglob("*.npy"))
    assert len(shards) == 1  # the first shard was saved before the kill
    rerun = harness(*DENSE, "cache_dir=cache", cwd=hurt)
    assert "resuming, 1 of" in rerun.stderr
    assert _files(hurt / "results/demo/minilm") == _files(clean / "results/demo/minilm")


def test_kill_while_writing_the_strata_file_then_rerun_is_identical(tmp_path):
    pytest.importorskip("leidenalg")
    clean, hurt = tmp_path / "clean", tmp_path / "hurt"
    clean.mkdir(), hurt.mkdir()
    stratify(cwd=clean)
    res = stratify(cwd=hurt, env={"HARNESS_FAULT": "stratify"}, check=False)
    assert _killed(res), res.stderr[-2000:]
    folder = hurt / "results/strata/demo"
    assert [p.name for p in folder.glob("*.json")] == []  # no strata file, not a partial one
    assert any(p.name.endswith(".tmp") for p in folder.iterdir())  # the kill's leftover
    stratify(cwd=hurt)
    assert not any(p.name.endswith(".tmp") for p in folder.iterdir())  # tidied
    built = sorted(folder.glob("*.json"))
    assert [p.read_bytes() for p in built] == [
        p.read_bytes() for p in sorted((clean / "results/strata/demo").glob("*.json"))
    ]


def test_kill_while_swapping_a_cell_keeps_the_old_one_visible(tmp_path):
    harness(*NO_STATS, "retriever.name=bm25x", cwd=tmp_path)
    cell = tmp_path / "results/demo/bm25x"
    old = _files(cell)
    # the same cell recomputed with force=true, killed after its files are written and
    # before they are swapped in
    res = harness(
        *NO_STATS,
        "retriever.name=bm25x",
        "force=true",
        cwd=tmp_path,
        env={"HARNESS_FAULT": "cell.write"},
        check=False,
    )
    assert _killed(res), res.stderr[-2000:]
    assert _files(cell) == old  # the old result is still there, whole
    assert any(p.name.startswith(".bm25x.new-") for p in cell.parent.iterdir())
    board = leaderboard("--no-significance", "--check", cwd=tmp_path, check=False)
    assert "1 cell on 1 corpus" in board.stdout, board.stdout + board.stderr
    harness(*NO_STATS, "retriever.name=bm25x", "force=true", cwd=tmp_path)
    assert [p.name for p in cell.parent.iterdir()] == ["bm25x"]  # leftovers removed
    assert _files(cell) == old  # same inputs, same bytes


def test_kill_before_the_first_write_leaves_no_cell_and_the_rerun_makes_it(tmp_path):
    res = harness(*NO_STATS, cwd=tmp_path, env={"HARNESS_FAULT": "cell.write"}, check=False)
    assert _killed(res)
    assert not (tmp_path / "results/demo/bm25").exists()
    harness(*NO_STATS, cwd=tmp_path)
    assert sorted(p.name for p in (tmp_path / "results/demo").iterdir()) == ["bm25"]


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_stop_signal_is_one_line_and_leaves_nothing_half_written(tmp_path, name):
    env = {"HARNESS_FAULT": "cell.write", "HARNESS_FAULT_SIGNAL": name}
    res = harness(*NO_STATS, cwd=tmp_path, env=env, check=False)
    assert res.returncode == 128 + getattr(signal, name), res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and f"interrupted ({name})" in errors[0]
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "results").exists()  # no cell, no temp folder, no lock left
    harness(*NO_STATS, cwd=tmp_path)
    assert sorted(p.name for p in (tmp_path / "results/demo").iterdir()) == ["bm25"]


@pytest.mark.parametrize("seed_a, seed_b", [("0", "1")])
def test_result_files_are_identical_across_processes_and_hash_seeds(tmp_path, seed_a, seed_b):
    """Two processes with different PYTHONHASHSEEDs writing to different folders, semantic
    strata included (set iteration order must not reach a float sum): metrics.json,
    per_query.csv, run.trec and the strata file are byte-identical."""
    pytest.importorskip("leidenalg")
    out = {}
    for seed in (seed_a, seed_b):
        folder = tmp_path / f"seed{seed}"
        folder.mkdir()
        env = {"PYTHONHASHSEED": seed}
        where = f"results.dir={folder}/results"  # other folders, as in two checkouts
        stratify(where, cwd=folder, env=env)
        harness(where, cwd=folder, env=env)
        cell = folder / "results/demo/bm25"
        strata = sorted((folder / "results/strata/demo").glob("*.json"))
        out[seed] = {**_files(cell), **{p.name: p.read_bytes() for p in strata}}
        del out[seed]["config.yaml"]  # the full resolved config: it names the folders
        assert "semantic" in (cell / "metrics.json").read_text()
    assert out[seed_a].keys() == out[seed_b].keys()
    for name in out[seed_a]:
        assert out[seed_a][name] == out[seed_b][name], name


@contextlib.contextmanager
def _small_disk(path: Path):
    """A 200 KiB tmpfs at `path` when this machine lets us mount one (root, no container
    policy against it); else a read-only folder (a non-root user cannot write there either).
    Yields what the disk is."""
    path.mkdir()
    mounted = False
    if os.geteuid() == 0 and shutil.which("mount"):
        res = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(path)],
            capture_output=True,
        )
        mounted = res.returncode == 0
    if not mounted:
        if os.geteuid() == 0:
            pytest.skip("cannot mount a tmpfs, and root writes to read-only folders")
        path.chmod(0o555)
    try:
        yield "tmpfs" if mounted else "read-only"
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], check=False)
        else:
            path.chmod(0o755)


def test_full_disk_is_one_error_line_and_nothing_half_written(tmp_path):
    disk = tmp_path / "disk"
    with _small_disk(disk) as kind:
        res = harness(*NO_STATS, f"results.dir={disk}/results", cwd=tmp_path, check=False)
        assert res.returncode == 2, res.stderr[-2000:]
        assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
        want = "No space left on device" if kind == "tmpfs" else "not writable"
        assert want in res.stderr
        assert _tree(disk) == []  # no partial cell, no temp folder, no empty results/


def test_full_disk_keeps_the_previous_cell(tmp_path):
    disk = tmp_path / "disk"
    with _small_disk(disk) as kind:
        if kind != "tmpfs":
            pytest.skip("needs a small tmpfs to fill")
        args = (*NO_STATS, f"results.dir={disk}/results", "retrieval.depth=10")
        harness(*args, cwd=tmp_path)
        cell = disk / "results/demo/bm25[depth=10]"
        before = _files(cell)
        free = shutil.disk_usage(disk).free
        (disk / "filler").write_bytes(b"x" * max(0, free - 8 * 1024))  # the rewrite cannot fit
        res = harness(*args, "force=true", cwd=tmp_path, check=False)
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert "the previous result (if any) is kept" in res.stderr
        assert _files(cell) == before
        assert sorted(p.name for p in cell.parent.iterdir()) == ["bm25[depth=10]"]


def test_full_disk_leaderboard_writes_nothing(tmp_path):
    harness(*NO_STATS, cwd=tmp_path)
    disk = tmp_path / "disk"
    with _small_disk(disk) as kind:
        if kind != "tmpfs":
            pytest.skip("needs a small tmpfs to fill")
        (disk / "filler").write_bytes(b"x" * 180 * 1024)  # ~20 KiB left: tables fit, plots not
        res = run_module(
            "harness.leaderboard", "--out", str(disk / "board"), cwd=tmp_path, check=False
        )
        assert res.returncode == 2, res.stderr[-2000:]
        assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
        assert "No space left on device" in res.stderr
        assert _tree(disk) == ["filler"]  # no partial file, no staging folder
