"""Judged or gold chunk ids the corpus lacks are kept (relevant; only a run file can rank them),
counted in the metadata and noted, as trec_eval keeps qrels of any document."""

import json
import logging

from harness.data.benchmarks import load_beir, load_redqa
from tests.conftest import write_redqa


def _beir(tmp_path, qrels):
    folder = tmp_path / "b"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"}\n')
    (folder / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b"}\n'
    )
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


def test_beir_qrels_of_chunks_the_corpus_lacks_are_kept(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="harness")
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tzz\t2\nq1\tyy\t0\nq2\tzz\t1\n"
    bench = load_beir(_beir(tmp_path, qrels), name="b")
    q1, q2 = bench.queries
    assert dict(q1.qrels) == {"d1": 1, "zz": 2, "yy": 0}
    assert q1.groups == (frozenset({"d1"}), frozenset({"zz"}))  # zz: a group never covered
    assert q2.groups == (frozenset({"zz"}),)
    assert bench.metadata["judged_not_in_corpus"] == {
        "judgments": 3,
        "relevant": 2,
        "chunks": 2,
        "examples": ["zz", "yy"],
    }
    assert "3 judgment(s) (2 with grade > 0) name 2 chunk(s) not in corpus.jsonl" in caplog.text
    assert "kept as trec_eval keeps them (graded as judged), and only a run file" in caplog.text


def test_beir_without_such_qrels_has_no_entry_and_no_note(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="harness")
    bench = load_beir(_beir(tmp_path, "q1\td1\t1\n"), name="b")
    assert "judged_not_in_corpus" not in bench.metadata and caplog.text == ""


def test_redqa_gold_the_corpus_lacks_is_kept(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="harness")
    queries = [
        {"query_id": "q1", "question": "x", "gold_chunk_groups": [["c1", "z1"], ["z2", "z1"]]},
        {"query_id": "q2", "question": "y", "gold_chunk_groups": [["c2"]]},
    ]
    bench = load_redqa(write_redqa(tmp_path / "r.json", queries=queries), name="r")
    assert bench.queries[0].groups == (frozenset({"c1", "z1"}), frozenset({"z1", "z2"}))
    assert bench.queries[0].judgments == {"c1": 1, "z1": 1, "z2": 1}  # R = 3, as qrels.trec
    assert bench.metadata["judged_not_in_corpus"] == {
        "gold_members": 3,
        "chunks": 2,
        "groups_without_corpus_member": 1,
        "examples": ["z1", "z2"],
    }
    assert "2 gold chunk id(s) are not in the corpus (e.g. 'z1', 'z2')" in caplog.text
    assert json.loads(json.dumps(bench.metadata)) == bench.metadata  # metrics.json can hold it
