"""Canonical ranking: score descending, ties by chunk id descending (byte order), cut at depth."""

import pytest

from harness.core.errors import BenchmarkError
from harness.core.run import Run, canonical


def test_ties_break_by_id_descending_in_byte_order():
    r = canonical([("b", 1.0), ("é", 1.0), ("a", 1.0), ("z", 0.5)], depth=10)
    assert r.ids == ("é", "b", "a", "z")  # U+00E9 sorts after ASCII, as its UTF-8 bytes do


def test_depth_cut_and_duplicate_ids_keep_best_score():
    r = canonical([("a", 1.0), ("b", 3.0), ("a", 5.0), ("c", 2.0)], depth=2)
    assert r.ids == ("a", "b")
    assert r.scores == (5.0, 3.0)


def test_nan_score_is_rejected():
    with pytest.raises(ValueError, match="NaN"):
        canonical([("a", float("nan"))], depth=1)


def test_missing_query_has_empty_ranking():
    run = Run.from_scores("r", {"q1": [("a", 1.0)]}, depth=5)
    assert run["q2"].ids == ()
    assert "q1" in run and "q2" not in run


@pytest.mark.parametrize(
    ("bad", "said"),
    [(float("inf"), "inf is not finite"), (float("-inf"), "-inf is not finite"),
     (float("nan"), "nan is not finite"), ("high", "'high' is text, not a number"),
     (__import__("numpy").float32("inf"), r"np.float32\(inf\) is not finite")],
)  # fmt: skip
def test_from_dict_refuses_what_from_trec_refuses(bad, said):
    from harness.core.errors import HarnessError

    with pytest.raises(HarnessError, match=rf"^run query 'q2', chunk 'c': score {said}"):
        Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 2.0, "c": bad}})


@pytest.mark.parametrize("size", [1, 200_000])  # the line-by-line reader and the compiled one
def test_a_byte_order_mark_is_not_part_of_the_first_query_id(tmp_path, size):
    lines = [f"q{i} Q0 c{i} 1 {1.0 + i} r" for i in range(size)]
    path = tmp_path / "run.trec"
    path.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    run = Run.from_trec(path)
    assert "q0" in run and not any(q.startswith("\ufeff") for q in run.query_ids())
    assert run["q0"].ids == ("c0",)


@pytest.mark.parametrize("size", [3, 200_000])  # under and over the compiled reader's size
def test_a_gzipped_run_reads_as_the_plain_file(tmp_path, size):
    import gzip

    text = "".join(f"q{i % 7} Q0 c{i} {i} {(i * 37) % 101 / 7} r\n" for i in range(size))
    plain, packed = tmp_path / "run.trec", tmp_path / "run.trec.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    assert Run.from_trec(packed).to_dict() == Run.from_trec(plain).to_dict()
    assert Run.from_trec(packed).name == "run"  # as run.trec's
    json_run = tmp_path / "run.json.gz"
    json_run.write_bytes(gzip.compress(b'{"q1": {"c1": 2.5}}'))
    assert Run.from_trec(json_run).to_dict() == {"q1": {"c1": 2.5}}


def test_a_damaged_gzip_run_is_one_error(tmp_path):
    import gzip

    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(b"q1 Q0 c1 1 2.0 r\n" * 50)[:30])
    with pytest.raises(BenchmarkError, match=r"run.trec.gz: a damaged gzip file .*; gunzip -t it"):
        Run.from_trec(path)


class _Retriever:
    name = "mine"

    def __init__(self, found):
        self.found = found

    def index(self, corpus):
        pass

    def search(self, queries, depth):
        return self.found


@pytest.mark.parametrize(
    "found,message",
    [
        ([("a", 1.0)], r"^retriever 'mine' search\(\): a run must be a harness.Run or a mapping"),
        ({"q1": 3}, r"^retriever 'mine' search\(\): run query 'q1' maps to int"),
        ({"q1": {"a": float("inf")}}, r"^retriever 'mine' search\(\): run query 'q1', chunk 'a'"),
    ],
)
def test_what_a_retriever_returns_goes_through_run_of(found, message):
    import harness
    from harness.core.errors import HarnessError
    from harness.core.types import Benchmark, Chunk, Query

    bench = Benchmark(
        "b", {"a": Chunk("a", "x")}, (Query("q1", "x", (frozenset({"a"}),)),), "c", "s"
    )
    with pytest.raises(HarnessError, match=message):
        harness.evaluate(bench, _Retriever(found))


def test_run_of_takes_pairs_renames_and_cuts():
    run = Run.of({"q1": [("a", 1.0), ("b", 2.0), ("a", 3.0)]}, name="x")
    assert (run.name, run["q1"].ids, run["q1"].scores) == ("x", ("a", "b"), (3.0, 2.0))
    cut = Run.of(run, name="y", depth=1)
    assert (cut.name, cut["q1"].ids, run.name) == ("y", ("a",), "x")
    assert Run.of(run) is run
