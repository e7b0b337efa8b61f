"""Vectorised runs (harness.core.run.store): the same rankings, dicts, notes and error lines as
the per-query `canonical` and the line-by-line TREC reader, on both builders (numpy for small
inputs, compiled kernels for large ones; the size thresholds are lowered here to reach both).
"""

from __future__ import annotations

import copy
import math
import random
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from harness.core.errors import BenchmarkError
from harness.core.run import Ranking, Run, canonical
from harness.core.run import store as runstore
from harness.core.run.files import apply_unknown_ids, read_run
from harness.core.types import Chunk, Query
from metrics import standard
from retrievers.run_file import RunFile

# ids whose code point order differs from naive expectations: accents, astral characters,
# prefixes, a lone surrogate (dicts only: a file cannot hold one)
IDS = ["a", "b", "ab", "B", "é", "e\u0301", "z", "ÿ", "€", "𝄞", "d1", "d10", "d9", "\U0010fffd"]
SCORES = [0.0, -0.0, 1.0, 1.0, 2.5, -3.0, 1e-300, 7.0, math.inf, -math.inf]


@pytest.fixture(params=["numpy", "compiled", "compiled-parts"])
def builder(request, monkeypatch):
    """Which builder runs: numpy below the thresholds, compiled kernels above (in three
    parallel parts of the file and of the rows)."""
    if request.param != "numpy":
        monkeypatch.setattr(runstore, "FAST_ROWS", 0)
        monkeypatch.setattr(runstore, "FAST_BYTES", 0)
    if request.param == "compiled-parts":  # and little room: the parser fills it, re-runs
        monkeypatch.setattr(runstore, "_threads", lambda rows: 3)
        monkeypatch.setattr(runstore, "_ROOM", 2)
    return request.param


def _slow(monkeypatch):
    monkeypatch.setattr(runstore, "FAST_ROWS", 1 << 60)
    monkeypatch.setattr(runstore, "FAST_BYTES", 1 << 60)


def _random_scores(rng: random.Random, n_queries: int, pairs: bool, ids=IDS):
    out = {}
    for q in range(n_queries):
        docs = rng.sample(ids, rng.randint(0, len(ids)))
        if pairs:  # pairs may repeat a chunk: the best score counts
            items = [(d, rng.choice(SCORES)) for d in docs + rng.sample(docs, len(docs) // 2)]
            rng.shuffle(items)
            out[f"q{q}"] = items
        else:
            out[f"q{q}"] = {d: rng.choice(SCORES) for d in docs}
    return out


def _same(a: Run, b: dict[str, Ranking]) -> None:
    assert a.query_ids() == list(b)
    for q, r in b.items():
        got = a[q]
        assert got.ids == r.ids and got.scores == r.scores, q
        assert [math.copysign(1, s) for s in got.scores] == [math.copysign(1, s) for s in r.scores]
        if r.codes is None:
            assert got.codes is None
        else:
            assert got.codes.tolist() == r.codes.tolist()


@pytest.mark.parametrize("pairs", [False, True])
@pytest.mark.parametrize("depth", [1, 3, 100])
def test_from_scores_equals_canonical_per_query(builder, pairs, depth):
    rng = random.Random(depth * 2 + pairs)
    for trial in range(20):
        scores = _random_scores(rng, rng.randint(1, 12), pairs, IDS + ["\ud800"])
        vocab = {d: i for i, d in enumerate(IDS[::2])} if trial % 2 else None
        want = {q: canonical(p, depth, vocab) for q, p in scores.items()}
        _same(Run.from_scores("r", scores, depth, vocab), want)


def test_from_dict_default_depth_and_empty_queries(builder):
    run = Run.from_dict({"q1": {}, "q2": {"b": 1.0, "a": 1.0, "c": 2.0}})
    assert run.depth == 3 and run.query_ids() == ["q1", "q2"]
    assert run["q1"].ids == () and run["q2"].ids == ("c", "b", "a")


def test_nan_is_refused_naming_the_first(builder):
    scores = {"q1": {"a": 1.0}, "q2": {"b": 2.0, "c": math.nan}, "q3": {"d": math.nan}}
    with pytest.raises(ValueError, match="^score of 'c' is NaN$"):
        Run.from_scores("r", scores, 10)


def _trec_text(rng: random.Random, scores: dict[str, dict[str, float]]) -> str:
    """A TREC file of `scores` in shuffled line order, with the spacing, line ends and number
    spellings the line-by-line reader accepts."""
    lines = []
    for q, docs in scores.items():
        for rank, (d, s) in enumerate(docs.items(), start=1):
            text = rng.choice([repr(s), f"{s:.3f}", f"{s:e}", f"{s:+.1f}", str(s)])
            if s == int(s) and abs(s) < 1e6 and rng.random() < 0.3:
                text = str(int(s))
            sep = rng.choice([" ", " ", "\t", "  ", " \t"])
            lines.append(sep.join([q, "Q0", d, str(rank), text, "sys"]) + rng.choice(["", " "]))
    rng.shuffle(lines)
    out = ""
    for line in lines:
        out += line + rng.choice(["\n", "\n", "\r\n", "\n\n"])
    return out if rng.random() < 0.5 else out.rstrip("\r\n")


def _finite_scores(rng, n_queries):
    finite = [s for s in SCORES if math.isfinite(s)] + [0.1, 1 / 3, 123456.789, 1e-7]
    out = {}
    for _ in range(n_queries):
        docs = rng.sample(IDS, rng.randint(1, len(IDS)))
        out[f"q{rng.randint(0, 99)}"] = {d: rng.choice(finite) for d in docs}
    return out


def test_trec_files_read_to_the_same_run_and_dict(builder, tmp_path, monkeypatch):
    rng = random.Random(7)
    for trial in range(15):
        path = tmp_path / f"r{trial}.trec"
        path.write_bytes(_trec_text(rng, _finite_scores(rng, 8)).encode("utf-8"))
        if builder != "numpy":  # the compiled parser reads these files itself
            assert runstore.Rows.read_trec(path) is not None
        got_dict, got_run = read_run(path), Run.from_trec(path, depth=rng.choice([None, 2]))
        with monkeypatch.context() as m:
            _slow(m)
            want_dict, want_run = read_run(path), Run.from_trec(path, depth=got_run.depth)
        # same queries, chunks and scores, in the same order (file order)
        assert [(q, list(d.items())) for q, d in got_dict.items()] == [
            (q, list(d.items())) for q, d in want_dict.items()
        ]
        _same(got_run, {q: want_run[q] for q in want_run.query_ids()})
        assert got_run.name == want_run.name == f"r{trial}"


def test_score_spellings_read_as_float_reads_them(builder, tmp_path):
    rng = random.Random(3)
    tokens = ["0", "-0", "+0.0", "-0.000", ".5", "5.", "1e5", "1E-5", "-2.5e+3", "007", "1e-400"]
    tokens += ["1" * 25, "0." + "0" * 30 + "1", "9007199254740993", "1e22", "1e23", "4.35"]
    for _ in range(300):
        x = rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
        tokens += [repr(x), f"{x:.{rng.randint(0, 20)}f}", f"{x:.{rng.randint(0, 18)}e}"]
    path = tmp_path / "s.trec"
    path.write_text("".join(f"q Q0 d{i} 1 {t} s\n" for i, t in enumerate(tokens)))
    if builder != "numpy":
        assert runstore.Rows.read_trec(path) is not None
    got = read_run(path)["q"]
    for i, t in enumerate(tokens):
        value = got[f"d{i}"]
        assert value == float(t) and math.copysign(1, value) == math.copysign(1, float(t)), t


@pytest.mark.parametrize(
    "data",
    [
        b"q1 Q0 c1 1 2.5 sys\nq1 Q0 c2 2 1.0\n",  # 5 fields
        b"q1 Q0 c1 1 high sys\n",
        b"q1 Q0 c1 one 2 sys\n",
        b"q1 Q0 c1 1.0 2 sys\n",
        b"q1 Q0 c1 1 nan sys\n",
        b"q1 Q0 c1 1 -inf sys\n",
        b"q1 Q0 c1 1 1e400 sys\n",
        b"q1 Q0 c1 1 2 s\nq2 Q0 c1 1 1 s\nq1 Q0 c9 3 1 s\nq1 Q0 c1 2 1 s\n",  # duplicate
        b"q1 Q0 c\xe9 1 2 s\n",  # not UTF-8
        b"q1 Q0 c\xed\xa0\x80 1 2 s\n",  # an encoded surrogate: not UTF-8 either
        "q1 Q0 c\u00a01 1 2 s\n".encode(),  # NBSP: white space to str.split()
        b"q1 Q0 c1 1 2 s\x0bq1 Q0 c1 2 1 s\n",  # a vertical tab ends a line: duplicate
        b"\n \n\t\n",
        b"",
    ],
)
def test_malformed_files_give_the_line_by_line_error(builder, tmp_path, monkeypatch, data):
    path = tmp_path / "bad.trec"
    path.write_bytes(data)
    with monkeypatch.context() as m:
        _slow(m)
        with pytest.raises(BenchmarkError) as want:
            read_run(path)
    with pytest.raises(BenchmarkError) as got:
        read_run(path)
    assert str(got.value) == str(want.value)
    with pytest.raises(BenchmarkError) as got:
        Run.from_trec(path)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    "data",
    [
        b"q1 Q0 c1 1_0 1_5.2_5 s\n",  # int() and float() take underscores
        "\ufeffq1 Q0 c1 +1 2 s\n".encode(),  # a byte order mark belongs to the first id
        b"q1\x1fQ0 c1 1 2 s\n",  # unit separator: white space inside a line
        b"q1 Q0 c1\x00 1 2 s\nq1 Q0 c2 2 Infinity0 s\n".replace(b"Infinity0", b"3"),
        "q1 Q0 c\u0661 \u0661 \u0662 s\n".encode(),  # Arabic-Indic digits: int() reads them
        b'{"q1": {"c1": 1}}',  # JSON, found by its first character
        "q1 Q0 c1 1 2 s\u2028q1 Q0 c2 2 1 s\n".encode(),  # a Unicode line break
        b"q1 Q0 c1 1 2 s\rq1 Q0 c2 2 1 s\r",  # old Mac line ends
        b"q1 Q0 c1 1 2.5 sys extra fields\nq1 Q0 c2 2 1 s\n",  # ignored, as trec_eval does
        b"# a comment\n#q1 Q0 c9 1 9 s\nq1 Q0 c1 1 2 s\n",  # comment lines are skipped
    ],
)
def test_unusual_but_valid_files_read_the_same(builder, tmp_path, monkeypatch, data):
    path = tmp_path / "odd.trec"
    path.write_bytes(data)
    with monkeypatch.context() as m:
        _slow(m)
        want = read_run(path)
    assert read_run(path) == want
    assert Run.from_trec(path).to_dict() == Run.from_dict(want).to_dict()


CORPUS = {c: Chunk(c, c) for c in ("c1", "c2", "c3", "c4", "é")}
QUERIES = tuple(Query(q, "x", (frozenset({"c1"}),)) for q in ("q1", "q2", "q3"))


def test_run_file_notes_and_rankings_are_the_same(builder, tmp_path, monkeypatch):
    lines = [
        "q2 Q0 zz 1 3 s",
        "q1 Q0 c1 1 3 s",
        "q9 Q0 c1 1 1 s",
        "q1 Q0 yy 2 2 s",
        "q2 Q0 c2 2 2 s",
        "q1 Q0 é 3 2 s",
        "q2 Q0 yy 3 1 s",
        "q1 Q0 xx 4 0.5 s",
        "q8 Q0 c3 1 1 s",
        "q1 Q0 c4 5 0.1 s",
    ]
    path = tmp_path / "messy.trec"
    path.write_text("\n".join(lines) + "\n")

    def search():
        r = RunFile(path=str(path))
        r.index(CORPUS)
        run = r.search(QUERIES, depth=3)
        return r.notes, [
            (q, run[q].ids, run[q].scores, run[q].codes.tolist()) for q in run.query_ids()
        ]

    with monkeypatch.context() as m:
        _slow(m)
        want = search()
    assert search() == want
    notes = want[0]
    # in query order (first appearance), then file order
    assert notes["unknown_chunk_ids"] == {
        "entries": 4,
        "distinct": 3,
        "examples": ["zz", "yy", "xx"],
    }
    assert notes["unknown_query_ids"] == {"count": 2, "examples": ["q9", "q8"]}
    assert notes["queries_cut_at_depth"] == 1


def test_standard_metrics_are_the_same_from_a_large_run(builder, tmp_path, monkeypatch):
    rng = random.Random(11)
    scores = _finite_scores(rng, 30)
    path = tmp_path / "m.trec"
    path.write_text(_trec_text(rng, scores))
    qids = sorted(scores)
    judgments = [{d: rng.randint(0, 3) for d in rng.sample(IDS, 4)} for _ in qids]
    wanted = [("map", None), ("ndcg", 5), ("recall", 10), ("P", 5), ("recip_rank", 100)]
    run = Run.from_trec(path)
    got = standard.evaluate([run[q] for q in qids], judgments, wanted)
    with monkeypatch.context() as m:
        _slow(m)
        slow_run = Run.from_trec(path)
    want = standard.evaluate([slow_run[q] for q in qids], judgments, wanted)
    for key in wanted:
        np.testing.assert_array_equal(got[key], want[key])
    judged = standard.prepare(judgments)
    for q, codes in zip(qids, runstore.id_codes([run[q] for q in qids], judged.code)):
        assert codes.tolist() == [judged.code.get(d, -1) for d in slow_run[q].ids]
    if builder == "numpy":
        return
    # a store's rankings matched against their own query's judgments only: ids judged only
    # for other queries give -1 (the scan would not match them either)
    ids = [d for j in judgments for d in j]
    offsets = np.cumsum([0] + [len(j) for j in judgments])
    own = (ids, np.array([judged.code[d] for d in ids]), offsets)
    for q, j, codes in zip(qids, judgments, runstore.id_codes([run[q] for q in qids], {}, own)):
        assert codes.tolist() == [judged.code[d] if d in j else -1 for d in slow_run[q].ids]


def test_lazy_rankings_behave_like_tuples(tmp_path, monkeypatch):
    monkeypatch.setattr(runstore, "FAST_BYTES", 0)
    path = tmp_path / "r.trec"
    path.write_text("q1 Q0 b 1 1 s\nq1 Q0 é 2 1 s\nq1 Q0 a 3 0.5 s\n")
    lazy = Run.from_trec(path)["q1"]
    eager = Ranking(("é", "b", "a"), (1.0, 1.0, 0.5))
    assert lazy.place is not None and eager.place is None
    assert lazy == eager and hash(lazy) == hash(eager) and repr(lazy) == repr(eager)
    # copies go through __reduce__, as process pools and launchers do: no store behind it
    assert copy.deepcopy(lazy) == eager and copy.deepcopy(lazy).place is None
    with pytest.raises(FrozenInstanceError):
        lazy.codes = None
    vocab = {"a": 0, "b": 1}
    dropped, found = apply_unknown_ids(Run.from_trec(path), vocab, ["q1"], "drop")
    assert dropped["q1"].ids == ("b", "a") and dropped["q1"].codes.tolist() == [1, 0]
    assert found["examples"] == ["é"]
