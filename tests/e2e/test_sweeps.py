"""Sweeps finish: every cell runs when another fails, a line per finished cell, a summary
printed and written to results/.sweeps/<date>/summary.{md,json}, exit 1 on a failure; the
same with the basic, joblib and submitit_local launchers."""

import json

import pytest

from tests.helpers.cli import assert_one_line_error, harness
from tests.helpers.markdown import squeeze

LAUNCHERS = {
    "basic": (),
    "joblib": ("hydra/launcher=joblib", "hydra.launcher.n_jobs=2"),
    "submitit_local": ("hydra/launcher=submitit_local",),
}


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_a_failing_cell_does_not_stop_the_sweep(tmp_path, launcher):
    out = harness(
        "-m",
        "retriever=openai-large,bm25-simple",
        "corpus=demo",
        "stats.bootstrap=0",
        *LAUNCHERS[launcher],
        cwd=tmp_path,
        env={"OPENAI_API_KEY": None},
        check=False,
    )
    assert out.returncode == 1, out.stderr
    assert (tmp_path / "results" / "demo" / "bm25-simple" / "metrics.json").is_file()
    assert not (tmp_path / "results" / "demo" / "openai-large").exists()
    # a line per finished cell, on the console, whichever process ran it
    assert "sweep [2/2] demo/bm25-simple: done" in out.stderr
    assert "sweep [1/2] retriever=openai-large corpus=demo" in out.stderr
    assert "OPENAI_API_KEY" in out.stderr
    (summary_md,) = (tmp_path / "results" / ".sweeps").glob("*/summary.md")
    summary = json.loads((summary_md.parent / "summary.json").read_text())
    assert summary["counts"] == {"done": 1, "up to date": 0, "failed": 1, "no record": 0}
    failed = summary["jobs"][0]
    assert failed["status"] == "failed" and "OPENAI_API_KEY" in failed["error"]
    assert summary["jobs"][1]["cell"].endswith("demo/bm25-simple")
    text = squeeze(summary_md.read_text())
    assert "| 1 | demo/bm25-simple | done |" in text
    assert "2 cells (1 done, 0 up to date, 1 failed)" in out.stdout


def test_sweep_of_up_to_date_cells_exits_0(tmp_path):
    args = ("-m", "retriever=bm25,bm25-simple", "corpus=demo", "stats.bootstrap=0")
    harness(*args, cwd=tmp_path)
    out = harness(*args, cwd=tmp_path)
    assert "2 cells (0 done, 2 up to date, 0 failed)" in out.stdout
    assert "sweep [1/2] demo/bm25: up to date" in out.stderr


def test_readme_experiment_lines_work_as_printed(tmp_path):
    # overrides on both sides of -m, as the README prints them
    out = harness(
        "+experiment=rare-table3",
        "-m",
        "hydra/launcher=submitit_local",
        "retriever=bm25",
        "corpus=demo",
        "stats.bootstrap=0",
        cwd=tmp_path,
    )
    assert "sweep [1/1] demo/bm25: done" in out.stderr
    (sweep,) = (tmp_path / "results" / ".sweeps").iterdir()
    assert not (sweep / ".submitit" / "%j").exists()
    assert list((sweep / ".submitit").glob("*_0_log.out"))
    # without SLURM, the cluster line says so in one line
    elsewhere = tmp_path / "no-slurm"
    elsewhere.mkdir()
    out = harness(
        "+experiment=rare-table3",
        "-m",
        "hydra/launcher=submitit_slurm",
        "hydra.launcher.partition=gpu",
        cwd=elsewhere,
        env={"PATH": str(elsewhere)},  # a folder without srun (a machine with SLURM has it)
        check=False,
    )
    assert_one_line_error(out, elsewhere, "needs SLURM, and srun is not on PATH")
