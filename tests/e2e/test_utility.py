"""Retrieval utility (ΔSePer) end to end on the protocols fixture: through the CLI and the API
with the stub models (tests/helpers/utility_stub.py) and with tiny random-weight transformers
models; a cached rerun loads no model; stored cells keep their utility values; a second
retriever reuses the closed-book baseline; bad settings are one line with exit 2."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import utility_stub
from tests.helpers.cli import assert_one_line_error, compare, harness, leaderboard
from tests.helpers.markdown import squeeze

STUB = "tests.helpers.utility_stub"
UTILITY = ["dseper@5", "dseper_hard@5", "seper@5"]


def stub_args(path: Path, cache: Path, *extra: str) -> list[str]:
    return [
        "corpus=redqa",
        f"corpus.path={path}",
        "corpus.name=protocols",
        "metrics=utility",
        "stats.bootstrap=0",
        "strata.permutations=0",
        "utility.generator.backend=custom",
        "utility.generator.model=null",
        f"utility.generator.target={STUB}.StubGenerator",
        "utility.nli.backend=custom",
        "utility.nli.model=null",
        f"utility.nli.target={STUB}.StubNLI",
        "utility.samples=4",
        f"utility.cache={cache}",
        *extra,
    ]


def per_query(cell: Path) -> dict[str, dict[str, str]]:
    with (cell / "per_query.csv").open(encoding="utf-8", newline="") as fh:
        return {row["query_id"]: row for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def stub_cell(protocols_benchmark_path, tmp_path_factory):
    cwd = tmp_path_factory.mktemp("utility")
    cache = cwd / "utility-cache"
    first = harness(*stub_args(protocols_benchmark_path, cache), cwd=cwd)
    cell = cwd / "results" / "protocols" / "bm25"
    files = {f: (cell / f).read_bytes() for f in ("metrics.json", "per_query.csv")}
    again = harness(*stub_args(protocols_benchmark_path, cache, "force=true"), cwd=cwd)
    return cwd, cache, cell, first, again, files


def test_cli_reports_the_utility_metrics(stub_cell, protocols_benchmark_path):
    _, _, cell, first, _, _ = stub_cell
    doc = json.loads((cell / "metrics.json").read_text(encoding="utf-8"))
    for name in UTILITY:
        assert name in doc["metrics"]
        assert doc["results"]["overall"]["mean"][name] is not None
    assert doc["config"]["utility"]["generator"]["target"] == f"{STUB}.StubGenerator"
    # unanswerable queries have nothing to believe in: NaN, excluded, reported per stratum
    assert doc["results"]["answerable"]["no"]["excluded"]["dseper@5"] == 10
    assert doc["results"]["answerable"]["yes"]["mean"]["dseper@5"] is not None
    data = json.loads(protocols_benchmark_path.read_text(encoding="utf-8"))
    rows = per_query(cell)
    for q in data["queries"]:
        value = float(rows[q["query_id"]]["dseper@5"])
        assert math.isnan(value) == (q.get("answerable") is False), q["query_id"]
    for name in UTILITY:  # shown in the terminal table like every metric
        assert name in first.stdout
    assert "models loaded: " in first.stderr and "models loaded: none" not in first.stderr


def test_cached_rerun_loads_no_model_and_writes_the_same_bytes(stub_cell):
    _, _, cell, _, again, files = stub_cell
    assert "models loaded: none" in again.stderr
    for name, data in files.items():
        assert (cell / name).read_bytes() == data, name


def test_api_gives_the_cli_numbers(stub_cell, protocols_benchmark_path, tmp_path):
    from harness import evaluate

    _, _, cell, _, _, _ = stub_cell
    utility_stub.reset()
    ev = evaluate(
        str(protocols_benchmark_path),
        "bm25",
        ["coverage", "group_ndcg", "dseper", "dseper_hard", "seper"],
        k=[5],
        bootstrap=0,
        permutations=0,
        utility={"samples": 4, "cache": str(tmp_path / "cache")},
        generator=utility_stub.StubGenerator(),
        nli=utility_stub.StubNLI(),
    )
    assert utility_stub.StubGenerator.calls  # the objects given were used
    rows = per_query(cell)
    frame = ev.per_query
    for name in UTILITY:
        api = frame[name].to_numpy(dtype=float)
        cli = np.array([float(rows[q][name]) for q in frame.index], dtype=float)
        np.testing.assert_array_equal(api, cli)
    assert ev.config["utility"]["generator"]["backend"] == "python"


def test_stored_cell_keeps_its_utility_values(stub_cell, protocols_benchmark_path, tmp_path):
    """A later run asking only for other metrics rescores the cell without any model: the
    stored ΔSePer values and the settings they were made with stay."""
    cwd, cache, cell, _, _, _ = stub_cell
    before = per_query(cell)
    res = harness(
        "corpus=redqa",
        f"corpus.path={protocols_benchmark_path}",
        "corpus.name=protocols",
        "metrics.names=[coverage,group_ndcg,group_mrr]",
        "metrics.k=[5]",
        "stats.bootstrap=0",
        "strata.permutations=0",
        cwd=cwd,
    )
    assert "scored its stored ranked list" in res.stderr and "utility:" not in res.stderr
    doc = json.loads((cell / "metrics.json").read_text(encoding="utf-8"))
    assert set(UTILITY) <= set(doc["metrics"]) and "group_mrr@5" in doc["metrics"]
    assert doc["config"]["utility"]["generator"]["target"] == f"{STUB}.StubGenerator"
    after = per_query(cell)
    for qid, row in before.items():
        for name in UTILITY:
            assert after[qid][name] == row[name]


def test_recomputed_cell_without_models_drops_its_utility_values(
    stub_cell, protocols_benchmark_path, tmp_path
):
    """A cell recomputed (force=true) by a run without the utility section has no models to
    score the new ranked list with: its ΔSePer values go, with one note naming the fix,
    instead of being carried over to a list they were not made from."""
    cwd = stub_cell[0]
    shutil.copytree(cwd / "results", tmp_path / "results")
    res = harness(
        "corpus=redqa",
        f"corpus.path={protocols_benchmark_path}",
        "corpus.name=protocols",
        "metrics.names=[coverage]",
        "metrics.k=[5]",
        "stats.bootstrap=0",
        "strata.permutations=0",
        "force=true",
        cwd=tmp_path,
    )
    notes = [line for line in res.stderr.splitlines() if "not recomputed" in line]
    assert len(notes) == 1 and "(no utility section in this run; add +utility=seper" in notes[0]
    assert all(name in notes[0] for name in UTILITY), notes
    doc = json.loads((tmp_path / "results/protocols/bm25/metrics.json").read_text("utf-8"))
    assert not set(UTILITY) & set(doc["metrics"]) and "utility" not in doc["config"]
    assert "coverage@5" in doc["metrics"]


def test_second_retriever_reuses_the_closed_book_baseline(stub_cell, protocols_benchmark_path):
    cwd, cache, _, _, _, _ = stub_cell
    res = harness(*stub_args(protocols_benchmark_path, cache, "retriever.k1=0.9"), cwd=cwd)
    note = next(line for line in res.stderr.splitlines() if "utility:" in line)
    # 50 answerable queries: each closed-book prompt comes from the first cell's cache
    hits = int(note.split("samples (")[1].split(" from the cache")[0])
    assert hits >= 50, note
    left = cwd / "results" / "protocols" / "bm25"
    right = cwd / "results" / "protocols" / "bm25[k1=0.9]"
    out = compare(str(left), str(right), cwd=cwd)
    assert "dseper@5" in out.stdout
    board = leaderboard(cwd=cwd)
    assert board.returncode == 0, board.stderr
    lines = squeeze((cwd / "leaderboard" / "utility_protocols.md").read_text(encoding="utf-8"))
    lines = lines.splitlines()
    assert lines[2] == "| Retriever | @5 ΔSePer | @5 ΔSePer hard | @5 SePer | @5 Cov |", lines
    rows = [line for line in lines if line.startswith("| BM25")]
    assert len(rows) == 2, lines  # both cells, the same generator noted once
    assert any("generator: " + STUB in line for line in lines)
    assert "dseper@5" in (cwd / "leaderboard" / "leaderboard.csv").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "override, where",
    [
        ("utility.samples=0", "utility.samples"),
        ("utility.threshold=2", "utility.threshold"),
        ("utility.prompt=no fields", "utility.prompt"),
        ("utility.nli.backend=openai", "utility.nli.backend"),
    ],
)
def test_bad_settings_are_one_line(protocols_benchmark_path, tmp_path, override, where):
    args = stub_args(protocols_benchmark_path, tmp_path / "c")
    res = harness(*args, override, cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, where)


def test_utility_metric_without_models_names_the_fix(protocols_benchmark_path, tmp_path):
    res = harness(
        "corpus=redqa",
        f"corpus.path={protocols_benchmark_path}",
        "metrics.names=[dseper]",
        cwd=tmp_path,
        check=False,
    )
    assert_one_line_error(res, tmp_path, "+utility=seper")


def test_tiny_transformers_models_end_to_end(protocols_benchmark_path, tiny_models, tmp_path):
    """The hf backends on tiny random-weight models, through the CLI and the API: the same
    per-query values; the API's rerun is all cache hits."""
    from harness import evaluate

    gen, nli = tiny_models
    common = {
        "samples": 2,
        "max_new_tokens": 4,
        "cache": str(tmp_path / "cache"),
        "generator": {"backend": "hf", "model": str(gen), "device": "cpu"},
        "nli": {"backend": "hf", "model": str(nli), "device": "cpu"},
    }
    res = harness(
        "corpus=redqa",
        f"corpus.path={protocols_benchmark_path}",
        "corpus.name=protocols",
        "metrics=utility",
        "stats.bootstrap=0",
        "strata.permutations=0",
        "utility.samples=2",
        "utility.max_new_tokens=4",
        f"utility.cache={tmp_path / 'cache'}",
        f"utility.generator.model={gen}",
        "utility.generator.device=cpu",
        f"utility.nli.model={nli}",
        "utility.nli.device=cpu",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    rows = per_query(tmp_path / "results" / "protocols" / "bm25")
    ev = evaluate(
        str(protocols_benchmark_path),
        "bm25",
        ["dseper", "dseper_hard", "seper"],
        k=[5],
        bootstrap=0,
        permutations=0,
        utility=common,
    )
    assert "models loaded: none" in " ".join(ev.notes)  # the CLI filled the cache
    for name in UTILITY:
        api = ev.per_query[name].to_numpy(dtype=float)
        cli = np.array([float(rows[q][name]) for q in ev.per_query.index], dtype=float)
        np.testing.assert_array_equal(api, cli)
        finite = api[~np.isnan(api)]
        assert len(finite) == 50 and np.all(np.abs(finite) <= 1)


def test_compare_refuses_other_utility_settings(stub_cell, protocols_benchmark_path):
    """ΔSePer made with another τ does not compare: compare names the setting; a rescore of
    the stored cell with the new τ loads nothing but the models it needs."""
    cwd, cache, _, _, _, _ = stub_cell
    args = stub_args(protocols_benchmark_path, cache, "retriever.k1=0.5", "utility.threshold=0.2")
    harness(*args, cwd=cwd)
    left = cwd / "results" / "protocols" / "bm25"
    right = cwd / "results" / "protocols" / "bm25[k1=0.5]"
    res = compare(str(left), str(right), cwd=cwd, check=False)
    assert res.returncode == 2 and "utility.threshold: 0.5 vs 0.2" in res.stderr, res.stderr
    again = harness(*stub_args(protocols_benchmark_path, cache, "retriever.k1=0.5"), cwd=cwd)
    assert "scored with the new utility settings" in again.stderr
    assert compare(str(left), str(right), cwd=cwd).returncode == 0
