"""End to end: a real sweep writes cells, `python -m harness.leaderboard` turns them into
tables, plots and HTML; bad input (no results, a damaged cell, mixed data) as a user meets it."""

import json
import shutil

import pytest

from tests.helpers.cli import harness, leaderboard
from tests.helpers.markdown import squeeze


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """results/ from a joblib sweep of two BM25 variants on demo, plus the published numbers."""
    root = tmp_path_factory.mktemp("swept")
    harness(
        "-m",
        "retriever=bm25,bm25-simple",
        "corpus=demo",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        cwd=root,
    )
    return root


@pytest.fixture
def work(swept, tmp_path):
    shutil.copytree(swept / "results", tmp_path / "results")
    return tmp_path


def test_sweep_writes_cells_and_a_sweep_record(swept):
    res = swept / "results"
    assert sorted(p.name for p in (res / "demo").iterdir()) == ["bm25", "bm25-simple"]
    assert list((res / ".sweeps").glob("*/multirun.yaml"))


def test_leaderboard_writes_every_format(work):
    out = leaderboard(cwd=work)
    assert out.returncode == 0, out.stderr
    lb = work / "leaderboard"
    names = {p.name for p in lb.iterdir()}
    for stem in ("table3", "hops_demo", "reproduction"):
        assert {f"{stem}.md", f"{stem}.tex", f"{stem}.csv"} <= names
    assert {"leaderboard.csv", "index.html", "plots"} <= names
    plots = {p.name for p in (lb / "plots").iterdir()}
    assert {"perfrecall_by_hop.png", "perfrecall_by_hop.svg"} <= plots
    assert (lb / "plots" / "perfrecall_by_hop.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the corpus list skips results/reference/ and results/.sweeps/
    assert "2 cells on 1 corpus (demo)" in out.stdout
    assert "| Retriever | demo Cov@10 | demo Perf@10 |" in squeeze(out.stdout)
    table = squeeze((lb / "table3.md").read_text())
    assert "(published)" not in table  # nothing was published for demo: no empty rows
    hop = squeeze((lb / "hops_demo.md").read_text())
    assert "overall (n=48) Cov@10" in hop and "4-hop (n=12) MRR" in hop
    # the long CSV agrees with metrics.json at full precision
    doc = json.loads((work / "results/demo/bm25/metrics.json").read_text())
    line = next(
        ln
        for ln in (lb / "leaderboard.csv").read_text().splitlines()
        if ln.startswith("demo,bm25,overall,,48,coverage@10,")
    )
    assert float(line.split(",")[6]) == doc["results"]["overall"]["mean"]["coverage@10"]
    html = (lb / "index.html").read_text()
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html


def test_latex_hop_table_for_one_corpus(work):
    out = leaderboard("--format", "latex", "--table", "hops", "--corpus", "demo", cwd=work)
    assert out.stdout.startswith("% \\usepackage{booktabs}")
    assert "\\begin{tabular}{l" in out.stdout and "\\bottomrule" in out.stdout
    # a partial leaderboard (one table, one format) lists what it wrote and removes nothing
    assert sorted(p.name for p in (work / "leaderboard").iterdir()) == [".written", "hops_demo.tex"]
    assert "hops_demo.tex" in (work / "leaderboard" / ".written").read_text()


def test_unknown_corpus_suggests(work):
    out = leaderboard("--corpus", "dem", cwd=work, check=False)
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "error: no cells for corpus 'dem' under results (did you mean 'demo'?); "
        "corpora with results: demo"
    )


def test_empty_results_is_one_error_and_writes_nothing(tmp_path):
    (tmp_path / "results" / "reference").mkdir(parents=True)
    out = leaderboard(cwd=tmp_path, check=False)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: no result cells under")
    assert not (tmp_path / "leaderboard").exists()
    missing = leaderboard("--results", "nowhere", cwd=tmp_path, check=False)
    assert missing.returncode == 2 and "results folder not found: nowhere" in missing.stderr


def test_corrupt_cell_is_reported_and_skipped(work):
    bad = work / "results/demo/bm25-simple/metrics.json"
    bad.write_text('{"schema": "retrieval-harness/metrics/1", "results": ')
    out = leaderboard(cwd=work)
    assert out.returncode == 0
    assert f"warning: {bad.relative_to(work)}: not valid JSON" in out.stderr
    assert "1 cell on 1 corpus (demo)" in out.stdout
    assert "| BM25 |" in squeeze((work / "leaderboard/table3.md").read_text())
    assert "not valid JSON" in (work / "leaderboard/index.html").read_text()
    strict = leaderboard("--check", cwd=work, check=False)
    assert strict.returncode == 1


def test_mixed_checksums_are_flagged(work):
    f = work / "results/demo/bm25-simple/metrics.json"
    doc = json.loads(f.read_text())
    doc["benchmark"]["checksum"] = "sha256:" + "0" * 64
    f.write_text(json.dumps(doc))
    out = leaderboard(cwd=work)
    assert "demo: cells were scored on different benchmark data" in out.stderr
    table = squeeze((work / "leaderboard/table3.md").read_text())
    assert "†" in table and "scored on other benchmark data" in table


def test_strata_folder_is_not_a_corpus(work):
    (work / "results/strata/demo").mkdir(parents=True)
    (work / "results/strata/demo/offline_minilm_g1.json").write_text("{}")
    out = leaderboard("--table", "table3", "--format", "markdown", cwd=work)
    assert "2 cells on 1 corpus (demo)" in out.stdout and "warning" not in out.stderr


def test_rerun_skips_up_to_date_cells_unless_forced(swept, tmp_path):
    shutil.copytree(swept / "results", tmp_path / "results")
    cell = tmp_path / "results/demo/bm25/metrics.json"
    before = cell.stat().st_mtime_ns
    again = harness("-m", "retriever=bm25,bm25-simple", "corpus=demo", cwd=tmp_path)
    up_to_date = "is up to date (same retriever config, data checksum, metrics and strata)"
    assert again.stderr.count(up_to_date) == 2
    assert "demo · bm25 · 48 queries" in again.stdout  # the table is still shown, from disk
    assert cell.stat().st_mtime_ns == before
    forced = harness("retriever=bm25", "corpus=demo", "force=true", cwd=tmp_path)
    assert "up to date" not in forced.stderr and cell.stat().st_mtime_ns != before
    assert json.loads(cell.read_text())["config"].get("force") is None
    changed = harness("retriever=bm25", "corpus=demo", "stats.bootstrap=50", cwd=tmp_path)
    assert "up to date" not in changed.stderr


def test_acceptance_sweep_then_leaderboard(general_wiki, tmp_path):
    """The issue's acceptance: the 6-cell joblib sweep (BM25, MiniLM, hybrid x demo,
    General-Wiki), then the leaderboard with no other step; BM25 on General-Wiki reproduces
    the published row."""
    pytest.importorskip("sentence_transformers")
    env = {
        "HARNESS_DATA_DIR": str(general_wiki.parent.parent),
        "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",
    }
    run = harness(
        "-m",
        "retriever=bm25,minilm,hybrid-bm25-minilm",
        "corpus=demo,general-wiki",
        "hydra/launcher=joblib",
        # one worker: the minilm and hybrid cells would encode General-Wiki at the same time
        # (the embedding cache does not wait for a shard another process is encoding)
        "hydra.launcher.n_jobs=1",
        cwd=tmp_path,
        env=env,
    )
    cells = sorted(
        str(p.parent.relative_to(tmp_path / "results"))
        for p in (tmp_path / "results").glob("*/*/metrics.json")
    )
    assert cells == [
        f"{c}/{r}"
        for c in ("demo", "general-wiki")
        for r in ("bm25", "hybrid-bm25-minilm", "minilm")
    ], run.stderr
    out = leaderboard(cwd=tmp_path)
    assert out.returncode == 0 and "warning" not in out.stderr, out.stderr
    rep = squeeze((tmp_path / "leaderboard/reproduction.md").read_text())
    bm25 = [ln for ln in rep.splitlines() if ln.startswith("| BM25 | general-wiki |")]
    assert len(bm25) == 6 and all("| OK |" in ln for ln in bm25)
    assert (
        "| BM25 | general-wiki | coverage@10 | rare-paper-table3 | 64.58 | 64.66 | +0.08 | OK "
        "| 64.58–64.66 |" in rep
    )
    # the MiniLM cells recorded corpus Similarity, so the header row and the plot have it
    table = squeeze((tmp_path / "leaderboard/table3.md").read_text())
    # Red 3.1%: 50 of 1,600 groups (query_083 lists one redundant group twice; it counts once)
    assert "Sim 3.6% (minilm)" in table and "Red 3.1%" in table
    plots = {p.name for p in (tmp_path / "leaderboard/plots").iterdir()}
    assert {
        "perfrecall_by_hop.png",
        "coverage_vs_similarity.png",
        "coverage_vs_similarity.svg",
    } <= plots


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
@pytest.mark.parametrize("ci", [False, True])
def test_latex_tables_fit_a_two_column_page(work, ci):
    """Compiled in a plain two-column article, no table runs past the text block."""
    import subprocess

    leaderboard("--format", "latex", *(["--ci"] if ci else []), cwd=work)
    doc = work / "paper.tex"
    tables = "".join(f"\\input{{leaderboard/{stem}.tex}}\n" for stem in ("table3", "hops_demo"))
    doc.write_text(
        "\\documentclass[10pt,twocolumn]{article}\n\\usepackage{booktabs}\n"
        f"\\begin{{document}}\n{tables}text\n\\end{{document}}\n"
    )
    res = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name],
        cwd=work,
        capture_output=True,
        text=True,
        start_new_session=True,
    )
    assert res.returncode == 0, res.stdout[-2000:]
    assert "Overfull \\hbox" not in res.stdout, res.stdout[-2000:]
