"""corpus=irds: a dataset registered with ir_datasets (a small local one: no network) loads as
the same data written as a BEIR folder and scores identically."""

from __future__ import annotations

import json
from typing import NamedTuple

import pytest

import harness
from harness.core.errors import HarnessError

ir_datasets = pytest.importorskip("ir_datasets")

DOCS = [
    ("d1", "Cats", "cats purr softly"),
    ("d2", "", "dogs bark loudly"),
    ("d3", "Birds", "birds sing"),
]
QUERIES = [("q1", "purring cats"), ("q2", "barking dogs"), ("q3", "no judgments")]
QRELS = [("q1", "d1", 2), ("q1", "d3", 0), ("q2", "d2", 1), ("q2", "d9", 1)]


class TitledDoc(NamedTuple):
    doc_id: str
    title: str
    text: str


def _register(tmp_path, name, docs_file="docs.tsv"):
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    (tmp_path / "docs.tsv").write_text("".join(f"{d}\t{t}\t{x}\n" for d, t, x in DOCS))
    (tmp_path / "queries.tsv").write_text("".join(f"{q}\t{x}\n" for q, x in QUERIES))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS))
    dataset = Dataset(
        TsvDocs(LocalDownload(tmp_path / docs_file), doc_cls=TitledDoc),
        TsvQueries(LocalDownload(tmp_path / "queries.tsv")),
        TrecQrels(LocalDownload(tmp_path / "qrels.txt"), {0: "no", 1: "yes", 2: "very"}),
    )
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(name, dataset)
    return name


def _beir_folder(tmp_path):
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    rows = [{"_id": d, "title": t, "text": x} for d, t, x in DOCS]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (folder / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": q, "text": x}) for q, x in QUERIES)
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in QRELS)
    )
    return folder


def test_an_ir_datasets_dataset_is_the_same_benchmark_as_its_beir_folder(tmp_path):
    name = _register(tmp_path, "harness-test/tiny")
    bench = harness.load_benchmark(f"irds:{name}")
    folder = harness.load_benchmark(_beir_folder(tmp_path))
    assert bench.corpus == folder.corpus
    assert [(q.query_id, q.text, dict(q.qrels), q.groups) for q in bench.queries] == [
        (q.query_id, q.text, dict(q.qrels), q.groups) for q in folder.queries
    ]
    version = ir_datasets.__version__
    assert bench.checksum == f"irds:{name}@ir_datasets-{version}"
    assert bench.metadata["judged_not_in_corpus"] == folder.metadata["judged_not_in_corpus"]
    assert bench.metadata["queries_without_judgments_in_split"] == 1
    run = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 3.0, "d2": 1.0}}
    metrics = ["coverage", "ndcg_cut", "recall", "map"]
    a = harness.evaluate(bench, run, metrics=metrics, k=[1, 2], name="r")
    b = harness.evaluate(folder, run, metrics=metrics, k=[1, 2], name="r")
    assert a.per_query.equals(b.per_query)


def test_the_cli_reads_corpus_irds(tmp_path):
    from harness.core.confs import named_config
    from harness.data.benchmarks import load_benchmark

    name = _register(tmp_path, "harness-test/tiny")
    bench = load_benchmark(named_config("corpus", "irds", {"id": name}))
    assert bench.name == "harness-test-tiny" and len(bench.queries) == 2


def test_unknown_ids_and_unreadable_data_are_one_line(tmp_path):
    with pytest.raises(
        HarnessError, match=r"ir_datasets has no dataset 'beir/scifact/tst'.*did you mean"
    ):
        harness.load_benchmark("irds:beir/scifact/tst")
    with pytest.raises(HarnessError, match=r"ir_datasets beir/scifact has no qrels; pick an id"):
        harness.load_benchmark("irds:beir/scifact")
    name = _register(tmp_path, "harness-test/absent", docs_file="gone.tsv")
    with pytest.raises(
        HarnessError, match=r"its docs \(FileNotFoundError.*once online with: ir_datasets export"
    ):
        harness.load_benchmark(f"irds:{name}")
    with pytest.raises(HarnessError, match=r"corpus=irds needs corpus.id"):
        harness.load_benchmark("irds:")
