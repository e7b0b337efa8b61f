"""One command line: `harness VERB ...` (`python -m harness VERB ...`), unknown flags and
verbs as one error line with a did-you-mean, and API names never shadowed by the starters."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.helpers.cli import assert_one_line_error, harness, run_module, spawn


def test_a_verb_runs_its_command_and_no_verb_is_run(tmp_path):
    plain = harness(cwd=tmp_path)
    verb = harness("run", cwd=tmp_path)
    assert plain.stdout == verb.stdout and "demo · bm25 · 48 queries" in verb.stdout
    usage = harness("compare", "--help", cwd=tmp_path).stdout
    assert usage.startswith("usage: python -m harness.compare")
    assert "Commands, first (harness VERB" in harness("--help", cwd=tmp_path).stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ful"], "unknown flag '--ful' (did you mean '--full'?)"),
        (["stratify", "--reprot"], "unknown flag '--reprot' (did you mean '--report'?)"),
        (["encode", "--forse"], "unknown flag '--forse' (did you mean '--force'?)"),
        (["leaderboard", "--chek"], "--chek (did you mean '--check'?)"),
        (["compre", "a", "b"], "unknown command 'compre' (did you mean 'compare'?)"),
        (["--full", "run"], "the command goes first: harness run --full"),
    ],
)
def test_unknown_flags_and_verbs_are_one_error_line(tmp_path, args, message):
    res = harness(*args, cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, message)


def test_importing_a_starter_does_not_shadow_the_api(tmp_path):
    code = (
        "import harness.compare, harness.leaderboard\n"
        "from harness import compare\n"
        "import harness, types\n"
        "assert isinstance(compare, types.FunctionType), compare\n"
        "assert harness.compare is compare\n"
        "assert dir(harness) == sorted([*harness.__all__, '__version__']), dir(harness)\n"
    )
    res = run_module("tests.helpers.exec_code", code, cwd=tmp_path, check=False)
    assert res.returncode == 0, res.stderr


def _into_closed_pipe(module: str, *args: str, cwd, unbuffered: bool) -> tuple[int, str]:
    """Run with stdout a pipe nobody reads any more (`... | head -1` once head has quit)."""
    read, write = os.pipe()
    os.close(read)
    env = {"PYTHONUNBUFFERED": "1" if unbuffered else None}
    try:
        with spawn(module, *args, cwd=cwd, env=env, stdout=write, stderr=subprocess.PIPE,
                   text=True) as proc:  # fmt: skip
            _, err = proc.communicate()
    finally:
        os.close(write)
    return proc.returncode, err


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_reader_that_stops_early_is_a_quiet_exit(tmp_path, unbuffered):
    """`python -m harness ... | head -1`: no traceback, the status of a program SIGPIPE
    stopped (141), whichever way the command is started; the cell is written in full."""
    harness("stats.bootstrap=0", cwd=tmp_path)
    harness("stats.bootstrap=0", "retriever=bm25-simple", cwd=tmp_path)
    cell = tmp_path / "results" / "demo" / "bm25"
    files = [str(cell / "qrels.trec"), str(cell / "run.trec")]
    for module, args in (
        ("harness", ["stats.bootstrap=0", "force=true"]),
        ("harness", ["leaderboard"]),
        ("harness.leaderboard", []),
        ("harness.trec_eval", ["-q", *files]),
        ("harness.compare", [str(cell), str(cell.with_name("bm25-simple"))]),
    ):
        status, err = _into_closed_pipe(module, *args, cwd=tmp_path, unbuffered=unbuffered)
        said = (status, "Traceback" in err, "Broken pipe" in err)
        assert said == (141, False, False), f"{module} {args}: {err}"
    assert (cell / "metrics.json").is_file() and not list(cell.parent.glob(".*"))
