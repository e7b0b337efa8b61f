"""End to end: `python -m harness.compare` on real result folders, a planted regression,
an unchanged copy, and each kind of bad input."""

import csv
import functools
import io
import json
import shutil

import pytest

from tests.conftest import write_redqa
from tests.helpers import cli
from tests.helpers.cli import harness
from tests.helpers.markdown import squeeze

# the gate's exit status (0 pass, 1 regression, 2 bad input) is what these tests check
compare = functools.partial(cli.compare, check=False)


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    root = tmp_path_factory.mktemp("cells")
    harness("metrics=all", cwd=root)
    harness("retriever=bm25-simple", "metrics=all", cwd=root)
    return root


def _copy(cells, tmp_path, name="new"):
    dst = tmp_path / name
    shutil.copytree(cells / "results/demo/bm25", dst)
    return dst


def _edit_per_query(folder, metric, change):
    path = folder / "per_query.csv"
    rows = list(csv.DictReader(path.open()))
    for row in rows:
        row[metric] = repr(change(float(row[metric])))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(out.getvalue())
    # a planted cell is a consistent one: its metrics.json reports the new overall mean
    doc = json.loads((folder / "metrics.json").read_text())
    values = [float(r[metric]) for r in rows if r[metric] != "nan"]
    doc["results"]["overall"]["mean"][metric] = sum(values) / len(values) if values else None
    (folder / "metrics.json").write_text(json.dumps(doc))


def test_two_retrievers_report(cells):
    res = compare(
        "results/demo/bm25",
        "results/demo/bm25-simple",
        "--metric",
        "coverage@10,nDCG@10",
        cwd=cells,
    )
    assert res.returncode in (0, 1), res.stderr
    out = squeeze(res.stdout)
    assert out.startswith("# Retrieval comparison: demo")
    assert "## bm25-simple vs bm25" in out and "### coverage@10" in out
    assert "### nDCG@10" in out and "### group_mrr@10" not in out
    assert "| hop=4 | 12 |" in out and "not gated (n < 30)" in out
    assert "over the 2 gated tests" in out  # overall of two metrics; hop strata are too small
    assert "**Result: " in out


def test_unchanged_copy_passes(cells, tmp_path):
    same = _copy(cells, tmp_path)
    res = compare("--baseline", cells / "results/demo/bm25", "--candidate", same, cwd=cells)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "**Result: PASS.**" in res.stdout
    # same retriever name in both folders: the report labels them by folder
    assert f"## {same} vs {cells / 'results/demo/bm25'}" in res.stdout


def test_planted_regression_fails_the_gate(cells, tmp_path):
    worse = _copy(cells, tmp_path)
    _edit_per_query(worse, "coverage@10", lambda v: v * 0.5)  # every query loses half
    report = tmp_path / "out" / "report.md"
    res = compare(
        "--baseline",
        cells / "results/demo/bm25",
        "--candidate",
        worse,
        "--metric",
        "coverage@10",
        "--max-drop",
        "1.0",
        "--alpha",
        "0.05",
        "--out",
        report,
        cwd=cells,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert "**Result: FAIL.** 1 regression(s)" in res.stdout
    assert "| overall | 48 | 55.73 | 27.86 | -27.86 |" in squeeze(res.stdout)
    assert report.read_text() == res.stdout


def test_several_candidates_open_with_an_overview(cells, tmp_path):
    worse = _copy(cells, tmp_path, "worse")
    _edit_per_query(worse, "coverage@10", lambda v: v * 0.5)
    res = compare(
        "results/demo/bm25",
        "results/demo/bm25-simple",
        worse,
        "--metric",
        "coverage@10,group_ndcg@10",
        cwd=cells,
    )
    assert res.returncode == 1, res.stderr
    out = squeeze(res.stdout)
    head, details = out.split("## Overview: 2 candidates against results/demo/bm25 (overall)")
    assert "### coverage@10" not in head  # the overview comes before the details
    overview = details.split("\n## ")[0]
    rows = [ln for ln in overview.splitlines() if ln.startswith("| ")][1:]
    assert len(rows) == 4  # 2 candidates x 2 gated metrics
    assert any(
        ln.startswith(f"| {worse} | coverage@10 | -27.86 |") and "REGRESSION" in ln for ln in rows
    )
    assert "### coverage@10" in details


def test_small_drop_within_tolerance_passes(cells, tmp_path):
    worse = _copy(cells, tmp_path)
    _edit_per_query(worse, "coverage@10", lambda v: v - 0.005 if v >= 0.005 else v)
    res = compare(cells / "results/demo/bm25", worse, "--metric", "coverage@10", cwd=cells)
    assert res.returncode == 0, res.stdout
    assert "worse, within 1.00 points" in res.stdout


def _one_line(res, message):
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert message in res.stderr, res.stderr


def test_mismatched_checksum(cells, tmp_path):
    other = _copy(cells, tmp_path)
    doc = json.loads((other / "metrics.json").read_text())
    doc["benchmark"]["checksum"] = "sha256:" + "0" * 64
    (other / "metrics.json").write_text(json.dumps(doc))
    _one_line(compare(cells / "results/demo/bm25", other, cwd=cells), "benchmark checksums differ")


def test_different_benchmarks(cells, tmp_path):
    bench = write_redqa(tmp_path / "tiny.json")
    harness("corpus=redqa", f"corpus.path={bench}", cwd=tmp_path)
    _one_line(
        compare(cells / "results/demo/bm25", tmp_path / "results/tiny/bm25", cwd=cells),
        "cannot compare different benchmarks",
    )


@pytest.mark.parametrize(
    "args,message",
    [
        (["results/demo/bm25"], "give at least two result folders"),
        (["results/demo/bm25", "results/demo/nope"], "result folder not found"),
        (["results/demo/bm25", "results/demo/bm25"], "the same result is given twice"),
        (
            ["results/demo/bm25", "results/demo/bm25-simple", "--metric", "covrage@10"],
            "metric 'covrage@10' is not in",
        ),
        (["results/demo/bm25", "results/demo/bm25-simple", "--alpha", "2"], "--alpha must be"),
        (["--candidate", "results/demo/bm25"], "--candidate needs --baseline"),
        (
            ["results/demo/bm25", "results/demo/bm25-simple", "--bogus"],
            "unrecognized arguments: --bogus",
        ),
    ],
)
def test_bad_arguments(cells, args, message):
    _one_line(compare(*args, cwd=cells), message)


def test_unknown_metric_suggests(cells):
    res = compare(
        "results/demo/bm25", "results/demo/bm25-simple", "--metric", "covrage@10", cwd=cells
    )
    assert "did you mean 'coverage@10'" in res.stderr


def test_corrupt_metrics_json(cells, tmp_path):
    broken = _copy(cells, tmp_path)
    (broken / "metrics.json").write_text("{not json")
    _one_line(compare(cells / "results/demo/bm25", broken, cwd=cells), "not valid JSON")
