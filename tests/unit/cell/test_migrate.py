"""Cells written by an earlier version (schema metrics/1) are read in the current layout in one
place (harness.cell.store.migrate): a complete one is shown as it is, one that lacks what
metrics/2 guarantees is recomputed by a run with one note, and an unknown schema is refused."""

from __future__ import annotations

import json
import logging

import pytest

from harness.cell import execute
from harness.cell.result import Evaluation
from harness.core.errors import HarnessError
from tests.unit.cell.test_up_to_date import _config

EARLIER = "retrieval-harness/metrics/1"


def _rewrite(cell, **change):
    path = cell / "metrics.json"
    doc = json.loads(path.read_text()) | {"schema": EARLIER, "timings_file": "timings.json"}
    for key, value in change.items():
        if value is None:
            doc.pop(key)
        else:
            doc[key] = value
    path.write_text(json.dumps(doc))
    return doc


def test_a_complete_earlier_cell_is_read_as_it_is(tmp_path):
    cfg = _config(tmp_path, "corpus=demo", "stats.bootstrap=0")
    first = execute.run_cell(cfg)
    _rewrite(first.path)
    old = Evaluation.from_disk(first.path)
    assert old.earlier is None and old.doc["schema"] == "retrieval-harness/metrics/2"
    assert "timings_file" not in old.doc
    assert old.means.equals(first.means)
    shown = execute.run_cell(cfg)
    assert shown.skipped  # nothing to recompute: its file stays as it was
    assert json.loads((first.path / "metrics.json").read_text())["schema"] == EARLIER


def test_an_earlier_cell_without_diagnostics_is_recomputed_with_one_note(tmp_path, caplog):
    cfg = _config(tmp_path, "corpus=demo", "stats.bootstrap=0")
    first = execute.run_cell(cfg)
    _rewrite(first.path, diagnostics=None)
    old = Evaluation.from_disk(first.path)
    assert old.earlier == "metrics/1: no corpus diagnostics" and old.doc["diagnostics"] == {}
    with caplog.at_level(logging.INFO, logger="harness"):
        again = execute.run_cell(cfg)
    assert not again.skipped
    said = [n for n in again.notes if "earlier version" in n]
    assert said == [f"{first.path} was written by an earlier version ({old.earlier}); recomputed"]
    doc = json.loads((first.path / "metrics.json").read_text())
    assert doc["schema"] == "retrieval-harness/metrics/2" and doc["diagnostics"]
    assert doc["results"] == first.doc["results"]


def test_an_earlier_cell_lacking_tie_ranges_still_reads(tmp_path):
    cfg = _config(tmp_path, "corpus=demo", "stats.bootstrap=0")
    first = execute.run_cell(cfg)
    results = first.doc["results"]
    results["overall"].pop("ties")
    _rewrite(first.path, results=results)
    old = Evaluation.from_disk(first.path)
    assert old.earlier == "metrics/1: no tie ranges"
    assert old.mean("ndcg@10") == first.mean("ndcg@10")


def test_an_unknown_schema_is_one_error(tmp_path):
    cfg = _config(tmp_path, "corpus=demo", "stats.bootstrap=0")
    first = execute.run_cell(cfg)
    _rewrite(first.path, schema="retrieval-harness/metrics/9")
    with pytest.raises(HarnessError, match="schema is 'retrieval-harness/metrics/9', which"):
        Evaluation.from_disk(first.path)
    # a run never replaces a cell of a schema it does not know (a newer version's) unasked
    with pytest.raises(HarnessError, match="does not read .*; force=true replaces it$"):
        execute.run_cell(cfg)
    assert json.loads((first.path / "metrics.json").read_text())["schema"].endswith("/9")
    again = execute.run_cell(_config(tmp_path, "corpus=demo", "stats.bootstrap=0", "force=true"))
    assert again.doc["schema"] == "retrieval-harness/metrics/2"


def test_a_result_read_back_keeps_its_gold_counts_and_can_be_scored_again(tmp_path):
    import harness

    ev = harness.evaluate("demo", "bm25", k=10, bootstrap=0)
    back = Evaluation.from_disk(ev.to_disk(tmp_path / "cell"))
    assert back.per_query.equals(ev.per_query)
    table = harness.Experiment([back, ev.run], "demo", k=10, names=["disk", "memory"])
    assert table.loc[0, "ndcg@10"] == table.loc[1, "ndcg@10"] == ev.means.loc["overall", "ndcg@10"]


def test_to_disk_and_back_is_the_same_result(tmp_path):
    import numpy as np

    import harness

    ev = harness.evaluate("demo", "bm25", k=10, bootstrap=50)
    folder = ev.to_disk(tmp_path / "cell")
    back = harness.Evaluation.from_disk(folder)
    assert type(back) is type(ev) and back.earlier is None
    assert (back.name, back.corpus, back.checksum, back.depth) == (
        ev.name,
        ev.corpus,
        ev.checksum,
        ev.depth,
    )
    assert back.query_ids == ev.query_ids and back.metrics == ev.metrics
    for m in ev.metrics:
        assert np.array_equal(back.values[m], ev.values[m], equal_nan=True)
    assert back.summary.equals(ev.summary) and back.means.equals(ev.means)
    assert back.ties.equals(ev.ties)
    with pytest.raises(HarnessError, match="already holds files"):
        back.to_disk(folder)
    with pytest.raises(HarnessError, match="per-query tie ranges are not stored"):
        back.per_query_ties  # noqa: B018


def test_a_cell_never_replaces_what_the_harness_did_not_write(tmp_path):
    import harness

    ev = harness.evaluate("demo", "bm25", k=10, bootstrap=0)
    mine = tmp_path / "notes.txt"
    mine.write_text("my notes")
    with pytest.raises(HarnessError, match="is a file, not a result folder"):
        ev.to_disk(mine, overwrite=True)
    assert mine.read_text() == "my notes" and sorted(p.name for p in tmp_path.iterdir()) == [
        "notes.txt"
    ]
    folder = tmp_path / "cell"
    ev.to_disk(folder)
    (folder / "plot.png").write_bytes(b"mine")
    with pytest.raises(HarnessError, match="holds 'plot.png', which is not a cell file"):
        ev.to_disk(folder, overwrite=True)
    assert (folder / "plot.png").read_bytes() == b"mine"


def test_a_per_query_file_missing_a_named_metric_is_refused(tmp_path):
    import harness

    folder = harness.evaluate("demo", "bm25", k=10, bootstrap=0).to_disk(tmp_path / "cell")
    path = folder / "per_query.csv"
    rows = [line.split(",") for line in path.read_text().splitlines()]
    drop = rows[0].index("mrr@10")
    path.write_text("\n".join(",".join(r[:drop] + r[drop + 1 :]) for r in rows) + "\n")
    with pytest.raises(HarnessError, match="no column for mrr@10, which metrics.json names"):
        Evaluation.from_disk(folder)
