"""Cells written by an earlier version (schemas metrics/1 and metrics/2) are read in the current
layout in one place (harness.cell.store.migrate): a complete one is shown as it is, with its
metrics under their current names, one that lacks what metrics/2 guarantees is recomputed by a
run with one note, and an unknown schema is refused."""

from __future__ import annotations

import json
import logging

import pytest

from harness.cell import execute
from harness.cell.result import Evaluation
from harness.core.errors import HarnessError
from tests.unit.cell.test_up_to_date import _config

EARLIER = "retrieval-harness/metrics/1"
# the names metrics/1 and metrics/2 wrote, for the ones that changed
OLD_NAMES = {
    "group_ndcg": "ndcg",
    "group_mrr": "mrr",
    "nDCG": "ndcg_cut",
    "R": "recall",
    "AP": "map_cut",
    "RR": "recip_rank",
    "Success": "success",
}
OLD_CONFIG_NAMES = {"group_ndcg": "ndcg", "group_mrr": "mrr"}


def _old_name(name: str) -> str:
    family, at, k = name.partition("@")
    if name == "AP":
        return "map"
    return OLD_NAMES.get(family, family) + at + k


def _rewrite(cell, schema=EARLIER, **change):
    """The cell as an earlier version wrote it: that schema, the metric names of then."""
    path = cell / "metrics.json"
    text = path.read_text()
    names = json.loads(text)["metrics"]
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(f'"{name}"', f'"{_old_name(name)}"')
    doc = json.loads(text) | {"schema": schema}
    if schema == EARLIER:
        doc["timings_file"] = "timings.json"
    asked = doc["config"]["metrics"]["names"]
    doc["config"]["metrics"]["names"] = [OLD_CONFIG_NAMES.get(n, n) for n in asked]
    for key, value in change.items():
        if value is None:
            doc.pop(key)
        else:
            doc[key] = value
    path.write_text(json.dumps(doc))
    table = cell / "per_query.csv"
    header, rest = table.read_text().split("\n", 1)
    table.write_text(",".join(map(_old_name, header.split(","))) + "\n" + rest)
    return doc


def test_a_complete_earlier_cell_is_read_as_it_is(tmp_path):
    cfg = _config(tmp_path, "corpus=demo", "stats.bootstrap=0")
    first = execute.run_cell(cfg)
    _rewrite(first.path)
    old = Evaluation.from_disk(first.path)
    assert old.earlier is None and old.doc["schema"] == "retrieval-harness/metrics/3"
    assert "timings_file" not in old.doc
    assert old.means.equals(first.means) and old.metrics == first.metrics
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
    assert doc["schema"] == "retrieval-harness/metrics/3" and doc["diagnostics"]
    assert doc["results"] == first.doc["results"]


def test_an_earlier_cell_lacking_tie_ranges_still_reads(tmp_path):
    cfg = _config(tmp_path, "corpus=demo", "stats.bootstrap=0")
    first = execute.run_cell(cfg)
    results = first.doc["results"]
    results["overall"].pop("ties")
    _rewrite(first.path, results=results)
    old = Evaluation.from_disk(first.path)
    assert old.earlier == "metrics/1: no tie ranges"
    assert old.mean("group_ndcg@10") == first.mean("group_ndcg@10")


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
    assert again.doc["schema"] == "retrieval-harness/metrics/3"


def test_a_result_read_back_keeps_its_gold_counts_and_can_be_scored_again(tmp_path):
    import harness

    ev = harness.evaluate("demo", "bm25", k=10, bootstrap=0)
    back = Evaluation.from_disk(ev.to_disk(tmp_path / "cell"))
    assert back.per_query.equals(ev.per_query)
    table = harness.Experiment([back, ev.run], "demo", k=10, names=["disk", "memory"])
    m = "group_ndcg@10"
    assert table.loc[0, m] == table.loc[1, m] == ev.means.loc["overall", m]


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
    drop = rows[0].index("group_mrr@10")
    path.write_text("\n".join(",".join(r[:drop] + r[drop + 1 :]) for r in rows) + "\n")
    with pytest.raises(HarnessError, match="no column for group_mrr@10, which metrics.json names"):
        Evaluation.from_disk(folder)


def test_a_metrics_2_cell_reads_under_the_current_names_and_is_reused(tmp_path):
    """metrics/2 named the group metrics ndcg@K / mrr@K and the standard ones as trec_eval
    does (ndcg_cut@K, map, recip_rank@K); it reads under the names of now, same values."""
    cfg = _config(
        tmp_path,
        "corpus=demo",
        "stats.bootstrap=0",
        "metrics=all",
        "metrics.names=[coverage,group_ndcg,group_mrr,ndcg_cut,recall,map_cut,success,map,RR@5,RR@10]",
    )
    first = execute.run_cell(cfg)
    old_doc = _rewrite(first.path, schema="retrieval-harness/metrics/2")
    assert {"ndcg@10", "mrr@10", "ndcg_cut@10", "recall@10", "map", "recip_rank@5"} <= set(
        old_doc["metrics"]
    )
    assert "ndcg_cut@10" in (first.path / "per_query.csv").read_text().splitlines()[0]
    old = Evaluation.from_disk(first.path)
    assert old.earlier is None and old.metrics == first.metrics
    assert {"group_ndcg@10", "nDCG@10", "R@10", "AP@10", "AP", "RR@5"} <= set(old.metrics)
    assert old.means.equals(first.means)
    assert old.doc["results"] == json.loads(json.dumps(first.doc["results"]))
    assert old.doc["variance"].keys() == first.doc["variance"].keys()
    # metrics.names as metrics/2 read them: bare ndcg / mrr were the group metrics
    assert old.config["metrics"]["names"][:3] == ["coverage", "group_ndcg", "group_mrr"]
    shown = execute.run_cell(cfg)
    assert shown.skipped  # the old cell holds every metric asked for
    assert json.loads((first.path / "metrics.json").read_text())["schema"].endswith("/2")


def test_metrics_2_config_names_keep_their_meaning():
    from harness.cell.store import _v2_config_names

    asked = ["coverage", "ndcg", "mrr", "ndcg_cut", "recip_rank", "rr", "ap", "map", "p(rel=2)"]
    assert _v2_config_names(asked, [5, 10]) == [
        "coverage",
        "group_ndcg",
        "group_mrr",
        "ndcg_cut",
        "RR@5",
        "RR@10",
        "RR@5",
        "RR@10",
        "map_cut",
        "AP",
        "P(rel=2)",
    ]
