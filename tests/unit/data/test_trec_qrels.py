"""TREC qrels (`qid iter docid rel`) wherever a qrels file is read: a BEIR folder's
qrels/<split>.txt, `corpus.qrels=FILE`, and a DataFrame; the same judgments as BEIR's TSV."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import harness
from harness.core.errors import BenchmarkError, HarnessError
from harness.data.benchmarks import data_files, files_checksum, load_benchmark

JUDGED = [("q1", "d1", 2), ("q1", "d2", 0), ("q1", "d3", 1), ("q2", "d2", 1)]
TSV = "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in JUDGED)
TREC = "".join(f"{q} 0 {d} {g}\n" for q, d, g in JUDGED)


def _folder(tmp_path, qrels_name="test.tsv", text=TSV):
    folder = tmp_path / "b"
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i}", "text": f"text {i}"} for i in (1, 2, 3)]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    qs = [{"_id": "q1", "text": "first"}, {"_id": "q2", "text": "second"}]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in qs))
    if qrels_name:
        (folder / "qrels" / qrels_name).write_text(text)
    return folder


def _judgments(bench):
    return {q.query_id: dict(q.qrels) for q in bench.queries}


@pytest.fixture
def want(tmp_path_factory):
    return _judgments(harness.load_benchmark(_folder(tmp_path_factory.mktemp("tsv"))))


def test_a_trec_qrels_file_in_the_folder_reads_as_the_tsv(tmp_path, want):
    folder = _folder(
        tmp_path, "test.txt", "\ufeff" + TREC.replace(" ", "\t", 1)
    )  # BOM, mixed space
    cfg = {"format": "beir", "path": str(folder)}
    bench = load_benchmark(cfg)
    assert _judgments(bench) == want
    # the up-to-date check hashes the file the loader reads
    assert files_checksum(data_files(cfg)[1]) == bench.checksum


def test_corpus_qrels_names_a_file_outside_the_folder(tmp_path, want):
    folder = _folder(tmp_path, qrels_name=None)
    path = tmp_path / "run.qrels"
    path.write_text(TREC)
    cfg = {"format": "beir", "path": str(folder), "qrels": str(path)}
    bench = load_benchmark(cfg)
    assert _judgments(bench) == want
    assert files_checksum(data_files(cfg)[1]) == bench.checksum
    assert _judgments(harness.load_benchmark(folder, qrels=path)) == want


@pytest.mark.parametrize(
    "columns",
    [("qid", "docno", "label"), ("query_id", "doc_id", "relevance"),
     ("query-id", "corpus-id", "score")],
    ids=["pyterrier", "ir_measures", "beir"],
)  # fmt: skip
def test_a_qrels_dataframe_reads_as_the_file(tmp_path, want, columns):
    folder = _folder(tmp_path, qrels_name=None)
    df = pd.DataFrame(JUDGED, columns=columns)
    assert _judgments(harness.load_benchmark(folder, qrels=df)) == want
    assert data_files({"format": "beir", "path": str(folder), "qrels": df}) is None


@pytest.mark.parametrize("missing", [float("nan"), None, pd.NA])
def test_a_qrels_dataframe_row_without_a_grade_is_refused_when_loaded(tmp_path, missing):
    folder = _folder(tmp_path, qrels_name=None)
    df = pd.DataFrame(JUDGED, columns=("query_id", "doc_id", "relevance")).astype(
        {"relevance": object}
    )
    df.loc[1, "relevance"] = missing
    qid, doc = df.loc[1, "query_id"], df.loc[1, "doc_id"]
    with pytest.raises(
        BenchmarkError, match=rf"^qrels DataFrame row 1: query '{qid}', chunk '{doc}' has no grade"
    ):
        harness.load_benchmark(folder, qrels=df)


@pytest.mark.parametrize(
    "text,message",
    [
        (TREC + "q2 d3 1\n", r"test.txt:5: expected 'qid iter docid rel' \(TREC qrels\), the lay"),
        ("q1 0 d1 1 extra\n", r"test.txt:1: expected 'query-id corpus-id score' \(BEIR, tab-"),
        ("q1 d1 1\n", r"test.txt:1: 'q1 d1 1' has 3 fields apart by spaces; BEIR's qrels are tab"),
    ],
)
def test_a_line_of_another_layout_is_one_error(tmp_path, text, message):
    folder = _folder(tmp_path, "test.txt", text)
    with pytest.raises(HarnessError, match=message):
        harness.load_benchmark(folder)


def test_corpus_qrels_errors(tmp_path):
    folder = _folder(tmp_path, qrels_name=None)
    with pytest.raises(
        HarnessError, match=r"qrels file not found: .*nope.qrels \(from corpus.qrels\)"
    ):
        load_benchmark(
            {"format": "beir", "path": str(folder), "qrels": str(tmp_path / "nope.qrels")}
        )
    with pytest.raises(
        HarnessError, match=r"splits found: none \(set corpus.split, or corpus.qrels"
    ):
        load_benchmark({"format": "beir", "path": str(folder)})
    with pytest.raises(HarnessError, match=r"corpus.qrels applies to BEIR folders"):
        load_benchmark({"format": "redqa", "packaged": "demo.json", "qrels": "x"})
