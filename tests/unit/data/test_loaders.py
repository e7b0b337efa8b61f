"""RedQA and BEIR loading, and every validation error naming file, field and id."""

import json

import pytest

from harness.core.errors import BenchmarkError, ConfigError
from harness.data.benchmarks import load_beir, load_benchmark, load_redqa
from tests.conftest import write_redqa


def test_redqa_groups_and_checksum(tmp_path):
    bench = load_redqa(write_redqa(tmp_path / "b.json"), name="b")
    assert [q.query_id for q in bench.queries] == ["q1", "q2"]
    assert bench.queries[0].groups == (frozenset({"c1"}), frozenset({"c2", "c3"}))
    assert bench.queries[0].hop == 2
    assert bench.checksum.startswith("sha256:") and len(bench.corpus) == 4


def test_query_without_gold_is_kept(tmp_path):
    qs = [{"query_id": "q", "question": "x", "gold_chunk_groups": []}]
    bench = load_redqa(write_redqa(tmp_path / "b.json", queries=qs), name="b")
    assert bench.queries[0].groups == ()


def test_packaged_demo_loads():
    bench = load_benchmark({"name": "demo", "format": "redqa", "packaged": "demo.json"})
    hops = {q.hop for q in bench.queries}
    assert hops == {1, 2, 3, 4}
    assert 60 <= len(bench.corpus) <= 150 and 30 <= len(bench.queries) <= 60
    assert any(len(g) > 1 for q in bench.queries for g in q.groups)


BAD_QUERIES = [
    (
        [{"question": "x", "gold_chunk_groups": [["c1"]]}],
        r"queries\[0\] needs a non-empty string 'query_id'",
    ),
    (
        [{"query_id": "q", "gold_chunk_groups": [["c1"]]}],
        r"query 'q' \(queries\[0\]\) needs a non-empty 'question'",
    ),
    (
        [{"query_id": "q", "question": "  ", "gold_chunk_groups": [["c1"]]}],
        r"query 'q'.*non-empty 'question'",
    ),
    (
        [{"query_id": "q", "question": "x", "gold_chunk_groups": [[]]}],
        r"query 'q'.*list of non-empty lists",
    ),
    (
        [{"query_id": "q", "question": "x", "gold_chunk_groups": ["c1"]}],
        r"query 'q'.*list of non-empty lists",
    ),
    ([{"query_id": "q", "question": "x"}], r"query 'q'.*'gold_chunk_groups' must be"),
    (
        [{"query_id": "q", "question": "x", "gold_chunk_groups": [["c1"]]}] * 2,
        r"duplicate query_id 'q'",
    ),
]


@pytest.mark.parametrize("queries, message", BAD_QUERIES)
def test_bad_queries(tmp_path, queries, message):
    path = write_redqa(tmp_path / "bad.json", queries=queries)
    with pytest.raises(BenchmarkError, match=message) as info:
        load_redqa(path, name="bad")
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(BenchmarkError, match="not found"):
        load_redqa(tmp_path / "none.json", name="x")


def test_invalid_json_names_line(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{\n  "queries": [,]\n}')
    with pytest.raises(BenchmarkError, match=r"b.json: invalid JSON at line 2 column"):
        load_redqa(path, name="b")


def test_bad_corpus_entry(tmp_path):
    path = write_redqa(tmp_path / "b.json", corpus={"c1": {"text": "x"}}, queries=[])
    with pytest.raises(BenchmarkError, match="corpus chunk 'c1' needs a string 'content'"):
        load_redqa(path, name="b")


def test_a_chunk_title_is_read_and_shown_in_prompts(tmp_path):
    from harness.rag.spec import RagSpec
    from harness.utility.compute import passages_text

    corpus = {"c1": {"content": "Paris is big.", "title": "Paris"}, "c2": {"content": "x"}}
    path = write_redqa(tmp_path / "b.json", corpus=corpus)
    bench = load_redqa(path, name="b")
    assert (bench.corpus["c1"].title, bench.corpus["c2"].title) == ("Paris", "")
    spec = RagSpec.from_config({"generator": {"backend": "custom", "target": "a.B"}})
    assert passages_text(bench, ["c1", "c2"], spec) == "Doc 1(Title: Paris) Paris is big.\nDoc 2: x"
    bad = write_redqa(tmp_path / "t.json", corpus={"c1": {"content": "x", "title": 3}})
    with pytest.raises(BenchmarkError, match="corpus chunk 'c1': 'title' must be a string"):
        load_redqa(bad, name="t")


def test_unknown_format():
    with pytest.raises(ConfigError, match="corpus.format is 'csv'"):
        load_benchmark({"format": "csv", "path": "x"})


def _beir(
    tmp_path, qrels="query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq1\td3\t1\nq2\td2\t0\n"
):
    folder = tmp_path / "scifact"
    (folder / "qrels").mkdir(parents=True)
    docs = [
        {"_id": "d1", "title": "T1", "text": "one"},
        {"_id": "d2", "text": "two"},
        {"_id": "d3", "title": "", "text": "three"},
    ]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    qs = [
        {"_id": "q1", "text": "first"},
        {"_id": "q2", "text": "second"},
        {"_id": "q3", "text": "train only"},
    ]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in qs))
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


def test_beir_each_relevant_doc_is_a_group_and_grades_are_kept(tmp_path):
    bench = load_beir(_beir(tmp_path), name="scifact")
    q1, q2 = bench.queries
    assert q1.groups == (frozenset({"d1"}), frozenset({"d3"}))
    assert dict(q1.qrels) == {"d1": 2, "d2": 0, "d3": 1}
    assert q2.groups == ()  # all judgments 0: NaN for recall-type metrics
    assert bench.corpus["d1"].index_text == "T1 one"
    assert bench.metadata["queries_without_judgments_in_split"] == 1


def test_beir_errors(tmp_path):
    # (a judged chunk absent from corpus.jsonl is kept: tests/unit/data/test_absent_gold.py)
    _beir(tmp_path)
    with pytest.raises(
        BenchmarkError, match=r"splits found: test \(set corpus.split, or corpus.qrels=FILE\)"
    ):
        load_beir(tmp_path / "scifact", name="s", split="dev")


def test_packaged_demo_is_what_the_generator_writes():
    import importlib.util

    from tests.conftest import ROOT

    spec = importlib.util.spec_from_file_location("make_demo", ROOT / "scripts" / "make_demo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert json.loads(mod.OUT.read_text()) == mod.build()


def test_beir_qrels_with_a_byte_order_mark(tmp_path):
    plain = load_beir(_beir(tmp_path / "a"), name="scifact")
    bom = _beir(tmp_path / "b", qrels="\ufeffq1\td1\t2\nq1\td2\t0\nq1\td3\t1\nq2\td2\t0\n")
    marked = load_beir(bom, name="scifact")
    assert [dict(q.qrels) for q in marked.queries] == [dict(q.qrels) for q in plain.queries]


def test_a_benchmark_with_nothing_to_score_is_refused(tmp_path):
    from harness.core.errors import BenchmarkError
    from harness.data.relevance import judge

    zeros = "query-id\tcorpus-id\tscore\nq1\td1\t0\nq2\td2\t0\n"
    bench = load_beir(_beir(tmp_path, qrels=zeros), name="scifact")
    with pytest.raises(BenchmarkError, match="no query has a relevant chunk"):
        judge(bench)


@pytest.mark.parametrize("grade", ["99999999999999999999999", "-4294967296"])
def test_an_out_of_range_grade_is_one_error(tmp_path, grade):
    from harness.core.errors import BenchmarkError

    qrels = f"query-id\tcorpus-id\tscore\nq1\td1\t{grade}\n"
    with pytest.raises(BenchmarkError, match=r"test.tsv:2: grade .* is out of range"):
        load_beir(_beir(tmp_path, qrels=qrels), name="scifact")
