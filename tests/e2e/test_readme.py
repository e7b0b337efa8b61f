"""The README's "What you see" block is what the main job prints, character for character."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tests.helpers.cli import harness


def _what_you_see() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"What you see:\n\n```\n(.*?)```", readme, re.S)
    assert found, "README.md lost its 'What you see' block"
    return found[1]


def test_readme_shows_the_demo_jobs_real_output(tmp_path):
    res = harness(cwd=tmp_path)
    assert res.stdout.lstrip("\n") == _what_you_see()
    assert (tmp_path / "results" / "demo" / "bm25" / "metrics.json").is_file()


def test_report_full_adds_the_variance_block_and_short_does_not(tmp_path):
    short = harness(cwd=tmp_path).stdout
    full = harness("--full", cwd=tmp_path).stdout
    assert "Variance explained" not in short and "Variance explained" in full
    assert full.startswith(short.split("results:")[0])  # the same header and main table
    bad = harness("report=long", cwd=tmp_path, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: report is 'long'")
