"""One command line: `harness VERB ...` (`python -m harness VERB ...`), unknown flags and
verbs as one error line with a did-you-mean, and API names never shadowed by the starters."""

from __future__ import annotations

import pytest

from tests.helpers.cli import assert_one_line_error, harness, run_module


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
