"""Hub benchmarks (harness.data.hub), offline: small datasets built with `datasets` in the Hub
layout, placed as snapshots in a fake Hub cache, load into the same Benchmark and score exactly
the same as that data written as a BEIR folder or RedQA JSON."""

from __future__ import annotations

import json
import socket
import sys
from datetime import date
from pathlib import Path

import numpy as np
import pytest

import harness
from harness.core.errors import BenchmarkError, ConfigError
from harness.core.run import Run
from harness.data.benchmarks import load_beir, load_benchmark, load_redqa

datasets = pytest.importorskip("datasets")

COMMIT = "0123456789abcdef0123456789abcdef01234567"
QRELS_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
MISSING = "b" * 40


@pytest.fixture(autouse=True)
def offline_cache(monkeypatch, tmp_path) -> Path:
    """An empty Hub cache under tmp_path, the Hub offline, and no socket beyond loopback."""
    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    connect = socket.socket.connect

    def loopback_only(sock, address):
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost") and sock.family != socket.AF_UNIX:
            raise OSError(f"the tests never touch the network (tried {address!r})")
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    return home / "hub"


# ---------------------------------------------------------------- building datasets


def parquet(path: Path, columns: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_dict(columns).to_parquet(str(path))


def readme(root: Path, configs: dict[str, dict[str, str]]) -> None:
    """README.md with a `configs:` header: {config: {split: path pattern}}."""
    lines = ["---", "configs:"]
    for name, splits in configs.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        for split, path in splits.items():
            lines += [f"  - split: {split}", f"    path: {path}"]
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("\n".join(lines + ["---", "", "# a test dataset", ""]))


def snapshot(cache: Path, repo: str, commit: str = COMMIT) -> Path:
    """The snapshot folder of `repo` at `commit` in the Hub cache, with refs/main -> commit."""
    base = cache / f"datasets--{repo.replace('/', '--')}"
    (base / "refs").mkdir(parents=True, exist_ok=True)
    (base / "refs" / "main").write_text(commit)
    snap = base / "snapshots" / commit
    snap.mkdir(parents=True)
    return snap


def rows_to_columns(rows: list[dict]) -> dict:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return {k: [r.get(k) for r in rows] for k in keys}


# ---------------------------------------------------------------- BEIR data

BEIR_CORPUS = [
    {"_id": "d1", "title": "A", "text": "alpha beta gamma", "date": date(2024, 5, 1)},
    {"_id": "d2", "title": "", "text": "beta delta", "date": None},
    {"_id": "d3", "title": "C", "text": "gamma epsilon", "date": date(2023, 1, 1)},
    {"_id": "d4", "title": "", "text": "zeta eta", "date": None},
    {"_id": "d5", "title": "", "text": "theta alpha", "date": date(2024, 4, 1)},
]
BEIR_QUERIES = [
    {
        "_id": "q1",
        "text": "alpha beta",
        "metadata": {"dynamism": "fast", "popularity": "head"},
        "date": date(2024, 5, 5),
        "answer": "gamma",
    },
    {
        "_id": "q2",
        "text": "gamma",
        "metadata": {"dynamism": "slow", "popularity": None},
        "date": None,
        "answer": None,
    },
    {
        "_id": "q3",
        "text": "judged only in train",
        "metadata": {"dynamism": None, "popularity": None},
        "date": None,
        "answer": None,
    },
    {
        "_id": "q4",
        "text": "theta",
        "metadata": {"dynamism": "static", "popularity": "tail"},
        "date": date(2024, 5, 2),
        "answer": "theta",
    },
]
QRELS = {
    "test": [
        ("q1", "d1", "1"),
        ("q1", "d2", "2"),
        ("q2", "d3", "1"),
        ("q2", "d4", "0"),
        ("q4", "d5", "RELATED"),
        ("q4", "d1", "IRRELEVANT"),
    ],
    "train": [("q3", "d2", "1")],
}
BEIR_RUN = {
    "q1": {"d2": 0.9, "d1": 0.5, "d3": 0.4},
    "q2": {"d4": 0.8, "d3": 0.7},
    "q4": {"d1": 0.9, "d5": 0.3},
}
METRICS = ["group_ndcg", "recall", "coverage", "group_mrr", "answer_recall", "outdated"]


def jsonable(row: dict) -> dict:
    return {k: v.isoformat() if isinstance(v, date) else v for k, v in row.items()}


def tsv(triples) -> str:
    return "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{c}\t{s}\n" for q, c, s in triples)


def beir_folder(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    for name, rows in (("corpus", BEIR_CORPUS), ("queries", BEIR_QUERIES)):
        text = "".join(json.dumps(jsonable(r)) + "\n" for r in rows)
        (root / f"{name}.jsonl").write_text(text)
    for split, triples in QRELS.items():
        (root / "qrels" / f"{split}.tsv").write_text(tsv(triples))
    return root


def beir_corpus_queries(root: Path) -> None:
    """The BeIR/<name> layout: configs corpus and queries, each one split named after it."""
    readme(
        root,
        {"corpus": {"corpus": "corpus/corpus-*"}, "queries": {"queries": "queries/queries-*"}},
    )
    parquet(root / "corpus" / "corpus-00000-of-00001.parquet", rows_to_columns(BEIR_CORPUS))
    parquet(root / "queries" / "queries-00000-of-00001.parquet", rows_to_columns(BEIR_QUERIES))


def mteb_layout(root: Path) -> None:
    """The mteb/<name> layout: corpus, queries and a `default` qrels config in one repo."""
    readme(
        root,
        {
            "corpus": {"corpus": "corpus/*.parquet"},
            "queries": {"queries": "queries/*.parquet"},
            "default": {"train": "qrels/train.parquet", "test": "qrels/test.parquet"},
        },
    )
    parquet(root / "corpus" / "corpus.parquet", rows_to_columns(BEIR_CORPUS))
    parquet(root / "queries" / "queries.parquet", rows_to_columns(BEIR_QUERIES))
    for split, triples in QRELS.items():
        cols = {
            "query-id": [q for q, _, _ in triples],
            "corpus-id": [c for _, c, _ in triples],
            "score": [s for _, _, s in triples],
        }
        parquet(root / "qrels" / f"{split}.parquet", cols)


def assert_same_benchmark(got, want) -> None:
    assert list(got.corpus) == list(want.corpus)
    assert got.corpus == want.corpus
    assert got.queries == want.queries


def assert_same_scores(got, want, run: dict, metrics=METRICS, k=(1, 2, 3)):
    """Both benchmarks scored by harness.evaluate: every per-query value identical."""
    a = harness.evaluate(got, Run.from_dict(run), metrics, list(k), bootstrap=0, permutations=0)
    b = harness.evaluate(want, Run.from_dict(run), metrics, list(k), bootstrap=0, permutations=0)
    assert a.metrics == b.metrics
    for name in a.metrics:
        np.testing.assert_array_equal(a.values[name], b.values[name], err_msg=name)
    return a


def hf(dataset, **kw) -> dict:
    return {"format": "hf", "dataset": str(dataset), **kw}


# ---------------------------------------------------------------- beir layout


def test_beir_with_a_separate_qrels_repo_is_the_beir_folder(offline_cache, tmp_path):
    beir_corpus_queries(snapshot(offline_cache, "BeIR/tiny"))
    qrels = snapshot(offline_cache, "BeIR/tiny-qrels", QRELS_COMMIT)  # no README, as BeIR's
    for split, triples in QRELS.items():
        (qrels / f"{split}.tsv").write_text(tsv(triples))

    got = load_benchmark(hf("BeIR/tiny", revision=COMMIT, qrels_revision=QRELS_COMMIT))
    want = load_beir(beir_folder(tmp_path / "tiny"), name="tiny")
    assert_same_benchmark(got, want)
    assert [q.query_id for q in got.queries] == ["q1", "q2", "q4"]  # q3: judged in train only
    assert got.name == "BeIR-tiny"
    assert got.checksum == f"hf:BeIR/tiny@{COMMIT}+hf:BeIR/tiny-qrels@{QRELS_COMMIT}"
    assert got.source == f"hf://datasets/BeIR/tiny@{COMMIT}"
    meta = got.metadata
    assert (meta["dataset"], meta["revision"], meta["commit"]) == ("BeIR/tiny", COMMIT, COMMIT)
    assert meta["configs"] == {"corpus": "corpus", "queries": "queries", "qrels": "default"}
    assert (meta["layout"], meta["split"]) == ("beir", "test")
    assert (meta["qrels_dataset"], meta["qrels_commit"]) == ("BeIR/tiny-qrels", QRELS_COMMIT)

    ev = assert_same_scores(got, want, BEIR_RUN)
    # by hand: q1 ranks d2 (grade 2) first of {d1, d2}; q2's first, d4, is grade 0 and d3
    # second; q4's d1 is IRRELEVANT, its only relevant passage d5 (RELATED) comes second
    np.testing.assert_array_equal(ev.values["R@1"], [0.5, 0.0, 0.0])
    np.testing.assert_array_equal(ev.values["R@2"], [1.0, 1.0, 1.0])

    train = load_benchmark(
        hf("BeIR/tiny", revision=COMMIT, qrels_revision=QRELS_COMMIT, split="train")
    )
    assert [q.query_id for q in train.queries] == ["q3"]


def test_mteb_layout_keeps_qrels_in_the_same_repo(offline_cache, tmp_path):
    mteb_layout(snapshot(offline_cache, "mteb/tiny"))
    got = load_benchmark(hf("mteb/tiny", revision="main"))  # a branch: resolved, both kept
    want = load_beir(beir_folder(tmp_path / "tiny"), name="tiny")
    assert_same_benchmark(got, want)
    assert_same_scores(got, want, BEIR_RUN)
    assert got.checksum == f"hf:mteb/tiny@{COMMIT}"
    assert (got.metadata["revision"], got.metadata["commit"]) == ("main", COMMIT)
    assert "qrels_dataset" not in got.metadata


def test_a_local_folder_in_the_hub_layout_is_named_by_its_files(tmp_path):
    folder = tmp_path / "tiny"
    mteb_layout(folder)
    got = load_benchmark(hf(folder))  # no revision needed
    assert_same_benchmark(got, load_beir(beir_folder(tmp_path / "beir"), name="tiny"))
    assert got.name == "tiny" and got.checksum.startswith("sha256:")
    assert load_benchmark(hf(folder)).checksum == got.checksum
    changed = [dict(r) for r in BEIR_CORPUS]
    changed[3]["text"] = "zeta eta theta"
    parquet(folder / "corpus" / "corpus.parquet", rows_to_columns(changed))
    assert load_benchmark(hf(folder)).checksum != got.checksum


def test_a_local_folder_reads_its_qrels_from_the_sibling_qrels_folder(tmp_path):
    folder = tmp_path / "tiny"
    beir_corpus_queries(folder)
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf(folder))
    assert f"no folder {folder}-qrels; set corpus.configs.qrels" in one_line(exc)
    (tmp_path / "tiny-qrels").mkdir()
    for split, triples in QRELS.items():
        (tmp_path / "tiny-qrels" / f"{split}.tsv").write_text(tsv(triples))
    got = load_benchmark(hf(folder))
    assert_same_benchmark(got, load_beir(beir_folder(tmp_path / "beir"), name="tiny"))
    main, qrels = got.checksum.split("+")
    assert main.startswith("sha256:") and qrels.startswith("sha256:") and main != qrels


def test_column_mappings_override_the_layout_defaults(offline_cache, tmp_path):
    root = snapshot(offline_cache, "acme/renamed")
    readme(
        root,
        {
            "corpus": {"corpus": "corpus.parquet"},
            "queries": {"queries": "queries.parquet"},
            "default": {"test": "qrels.parquet"},
        },
    )
    corpus = rows_to_columns(BEIR_CORPUS)
    corpus["doc"] = corpus.pop("_id")
    parquet(root / "corpus.parquet", corpus)
    queries = rows_to_columns(BEIR_QUERIES)
    queries["query"] = queries.pop("text")
    parquet(root / "queries.parquet", queries)
    triples = QRELS["test"]
    parquet(
        root / "qrels.parquet",
        {
            "qid": [t[0] for t in triples],
            "pid": [t[1] for t in triples],
            "rel": [t[2] for t in triples],
        },
    )
    columns = {
        "question": "query",
        "chunk_id": "doc",
        "qrels_query_id": "qid",
        "qrels_chunk_id": "pid",
        "score": "rel",
    }
    got = load_benchmark(hf("acme/renamed", revision=COMMIT, columns=columns))
    assert_same_benchmark(got, load_beir(beir_folder(tmp_path / "tiny"), name="tiny"))


def test_hub_config_through_the_named_config(offline_cache, tmp_path):
    mteb_layout(snapshot(offline_cache, "mteb/tiny"))
    got = harness.load_benchmark("hf", dataset="mteb/tiny", revision=COMMIT)
    assert_same_benchmark(got, load_beir(beir_folder(tmp_path / "tiny"), name="tiny"))


# ---------------------------------------------------------------- errors


def one_line(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_a_revision_missing_from_the_cache_is_one_line_with_the_fetch_command(offline_cache):
    beir_corpus_queries(snapshot(offline_cache, "BeIR/tiny"))
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf("BeIR/tiny", revision=MISSING))
    text = one_line(exc)
    assert "not in the Hugging Face cache" in text and "offline" in text
    assert text.endswith(f"hf download BeIR/tiny --repo-type dataset --revision {MISSING}")
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf("BeIR/absent", revision="main"))
    assert "hf download BeIR/absent --repo-type dataset --revision main" in one_line(exc)


def test_a_cached_snapshot_without_the_data_files_says_how_to_fetch_them(offline_cache):
    root = snapshot(offline_cache, "mteb/tiny")
    mteb_layout(root)
    (root / "corpus" / "corpus.parquet").unlink()  # as after fetching the README alone
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf("mteb/tiny", revision=COMMIT))
    text = one_line(exc)
    assert "config 'corpus' split 'corpus' names no file that is here (corpus/*.parquet)" in text
    assert text.endswith(
        f"fetch it with: hf download mteb/tiny --repo-type dataset --revision {COMMIT}"
    )


def test_a_missing_qrels_repo_names_its_fetch_command(offline_cache):
    beir_corpus_queries(snapshot(offline_cache, "BeIR/tiny"))
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf("BeIR/tiny", revision=COMMIT, qrels_revision=QRELS_COMMIT))
    text = one_line(exc)
    assert f"hf download BeIR/tiny-qrels --repo-type dataset --revision {QRELS_COMMIT}" in text


def test_a_hub_dataset_needs_a_revision(offline_cache):
    with pytest.raises(ConfigError) as exc:
        load_benchmark(hf("BeIR/tiny"))
    text = one_line(exc)
    assert "corpus.revision is not set" in text and "corpus.revision=<commit>" in text


def test_a_bad_column_mapping_names_the_column_and_the_columns_there(offline_cache):
    mteb_layout(snapshot(offline_cache, "mteb/tiny"))
    with pytest.raises(ConfigError) as exc:
        load_benchmark(hf("mteb/tiny", revision=COMMIT, columns={"question": "query"}))
    text = one_line(exc)
    assert "has no column 'query' (corpus.columns.question)" in text
    assert "its columns: _id, text, metadata, date, answer" in text
    with pytest.raises(ConfigError) as exc:  # a layout default the data lacks
        load_benchmark(hf("mteb/tiny", revision=COMMIT, layout="redqa"))
    text = one_line(exc)
    assert "has no column 'chunk_id'" in text and "the redqa layout's default" in text
    with pytest.raises(ConfigError) as exc:
        load_benchmark(hf("mteb/tiny", revision=COMMIT, columns={"questoin": "query"}))
    assert "did you mean 'question'" in one_line(exc)


def test_a_missing_config_or_split_lists_what_the_repo_has(offline_cache):
    mteb_layout(snapshot(offline_cache, "mteb/tiny"))
    with pytest.raises(ConfigError) as exc:
        load_benchmark(hf("mteb/tiny", revision=COMMIT, configs={"corpus": "docs"}))
    assert "its configs: corpus, queries, default" in one_line(exc)
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf("mteb/tiny", revision=COMMIT, split="dev"))
    assert "has no split 'dev'; splits: train, test" in one_line(exc)


def test_the_network_failing_reads_the_cache(offline_cache, monkeypatch):
    from huggingface_hub import constants

    mteb_layout(snapshot(offline_cache, "mteb/tiny"))
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("HF_DATASETS_OFFLINE")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # refused at once
    # a branch is resolved from the cache's refs/main once the Hub proves unreachable
    got = load_benchmark(hf("mteb/tiny", revision="main"))
    assert (got.metadata["commit"], got.checksum) == (COMMIT, f"hf:mteb/tiny@{COMMIT}")
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf("mteb/tiny", revision="v2"))
    text = one_line(exc)
    assert "cannot be reached" in text
    assert text.endswith("fetch it with: hf download mteb/tiny --repo-type dataset --revision v2")


def test_a_cached_commit_is_read_without_asking_the_hub(offline_cache, monkeypatch):
    """Online, a commit whose files the cache holds never reaches the Hub."""
    from huggingface_hub import constants

    mteb_layout(snapshot(offline_cache, "mteb/tiny"))
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("HF_DATASETS_OFFLINE")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    asked = []
    monkeypatch.setattr(socket.socket, "connect", lambda sock, address: asked.append(address))
    assert load_benchmark(hf("mteb/tiny", revision=COMMIT)).checksum == f"hf:mteb/tiny@{COMMIT}"
    assert asked == []


# ---------------------------------------------------------------- redqa layout

REDQA_CORPUS = {
    "c1": {"content": "alpha text here", "date": "2024-05-01"},
    "c2": {"content": "beta text", "date": None},
    "c3": {"content": "beta gamma text", "date": "2023-02-03"},
    "c4": {"content": "old alpha news", "date": "2024-01-01"},
    "c5": {"content": "unrelated words", "date": None},
}
REDQA_QUERIES = [
    {
        "query_id": "q1",
        "question": "alpha beta",
        "gold_chunk_groups": [["c1"], ["c2", "c3"]],
        "group_present": [True, True],
        "answerable": True,
        "answers": ["alpha"],
        "labels": {"c1": "ANSWER-THE-QUESTION", "c4": "OUTDATED"},
        "date": "2024-05-05",
        "metadata": {"dynamism": "fast", "popularity": "head"},
    },
    {
        "query_id": "q2",
        "question": "gamma",
        "gold_chunk_groups": [["c3"], ["c9"]],
        "group_present": [True, False],
        "answerable": "partial",
        "answers": [],
        "labels": None,
        "date": None,
        "metadata": {"dynamism": None, "popularity": "tail"},
    },
    {
        "query_id": "q3",
        "question": "delta",
        "gold_chunk_groups": [["c8"], []],
        "group_present": [False, False],
        "answerable": False,
        "answers": ["delta"],
        "labels": None,
        "date": None,
        "metadata": {"dynamism": "static", "popularity": None},
    },
]
REDQA_RUN = {
    "q1": {"c4": 0.9, "c1": 0.8, "c2": 0.3},
    "q2": {"c3": 0.5, "c5": 0.4},
    "q3": {"c5": 0.2},
}


def redqa_hub(root: Path) -> None:
    readme(root, {"corpus": {"test": "corpus/*.parquet"}, "queries": {"test": "queries/*"}})
    chunks = [{"chunk_id": k, **v} for k, v in REDQA_CORPUS.items()]
    parquet(root / "corpus" / "test.parquet", rows_to_columns(chunks))
    queries = [dict(q) for q in REDQA_QUERIES]
    for q in queries:  # a parquet column has one type: answerable as text
        q["answerable"] = {True: "true", False: "false"}.get(q["answerable"], q["answerable"])
        q["date"] = date.fromisoformat(q["date"]) if q["date"] else None
    parquet(root / "queries" / "test.parquet", rows_to_columns(queries))


def test_redqa_layout_is_the_redqa_json(offline_cache, tmp_path):
    redqa_hub(snapshot(offline_cache, "acme/redqa-tiny"))
    path = tmp_path / "redqa-tiny.json"
    path.write_text(json.dumps({"queries": REDQA_QUERIES, "corpus": REDQA_CORPUS}))
    got = load_benchmark(hf("acme/redqa-tiny", revision=COMMIT, layout="redqa"))
    want = load_redqa(path, name="redqa-tiny")
    assert_same_benchmark(got, want)
    assert [q.answerable for q in got.queries] == ["yes", "partial", "no"]
    assert got.queries[0].labels == {"c1": "ANSWER-THE-QUESTION", "c4": "OUTDATED"}
    assert got.metadata["configs"] == {"queries": "queries", "corpus": "corpus"}
    ev = assert_same_scores(got, want, REDQA_RUN)
    # by hand: q1's top 1 is c4, labelled OUTDATED; q3 is unanswerable (NaN)
    np.testing.assert_array_equal(ev.values["outdated@1"][0], 1.0)
    assert np.isnan(ev.values["coverage@1"][2])


def test_redqa_layout_notes_labels_naming_chunks_the_corpus_lacks(offline_cache, monkeypatch):
    queries = [dict(q) for q in REDQA_QUERIES]
    queries[0]["labels"] = {"c1": "ANSWER-THE-QUESTION", "c99": "OUTDATED"}
    monkeypatch.setattr(sys.modules[__name__], "REDQA_QUERIES", queries)
    redqa_hub(snapshot(offline_cache, "acme/redqa-labels"))
    got = load_benchmark(hf("acme/redqa-labels", revision=COMMIT, layout="redqa"))
    noted = got.metadata["labelled_not_in_corpus"]
    assert (noted["labels"], noted["chunks"], noted["examples"]) == (1, 1, ["c99"])


def test_redqa_layout_rows_are_checked_as_redqa_json_is(offline_cache):
    root = snapshot(offline_cache, "acme/redqa-bad")
    readme(root, {"corpus": {"test": "corpus.parquet"}, "queries": {"test": "queries.parquet"}})
    chunks = [{"chunk_id": k, **v} for k, v in REDQA_CORPUS.items()]
    parquet(root / "corpus.parquet", rows_to_columns(chunks))
    bad = {"query_id": ["q1"], "question": ["x"], "gold_chunk_groups": [[["c1"]]]}
    parquet(root / "queries.parquet", {**bad, "answerable": ["maybe"]})
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf("acme/redqa-bad", revision=COMMIT, layout="redqa"))
    text = one_line(exc)
    assert "query 'q1'" in text and "'answerable' is \"maybe\"" in text


# ---------------------------------------------------------------- garage layout

GARAGE = [
    {
        "query_id": "g1",
        "question": "who won the match",
        "answer": "Alpha",
        "answerable": "true",
        "date": "2024-05-10",
        "dynamism": "fast",
        "complexity": "simple",
        "popularity": "head",
        "source": "web",
        "category": "Sports",
        "passages": [
            {
                "id": "p1",
                "text": "Alpha won the match",
                "date": "2024-05-09",
                "label": "ANSWER-THE-QUESTION",
            },
            {"id": "p2", "text": "an old match report", "date": "2024-01-01", "label": "OUTDATED"},
            {"id": "p3", "text": "the weather today", "date": None, "label": "IRRELEVANT"},
        ],
    },
    {
        "query_id": "g2",
        "question": "what is beta",
        "answer": None,
        "answerable": "true",
        "date": None,
        "dynamism": "static",
        "complexity": "multi-hop",
        "popularity": "tail",
        "source": "private",
        "category": "Science",
        "passages": [
            {"id": "p3", "text": "the weather today", "date": None, "label": "RELATED"},
            {
                "id": "p4",
                "text": "beta is a letter",
                "date": "2020-01-01",
                "label": "ANSWER-THE-QUESTION",
            },
        ],
    },
    {
        "query_id": "g3",
        "question": "what did the board decide",
        "answer": None,
        "answerable": "false",
        "date": "2024-06-01",
        "dynamism": "slow",
        "complexity": "set",
        "popularity": "torso",
        "source": "private",
        "category": "Finance",
        "passages": [{"id": "p5", "text": "nothing useful", "date": None, "label": "IRRELEVANT"}],
    },
]
GARAGE_RUN = {
    "g1": {"p2": 0.9, "p1": 0.8, "p3": 0.1},
    "g2": {"p3": 0.5, "p4": 0.4},
    "g3": {"p5": 0.1},
}
FIELDS = ("dynamism", "complexity", "popularity", "source", "category")


def garage_as_redqa(path: Path, rows=GARAGE) -> Path:
    corpus: dict = {}
    queries = []
    for r in rows:
        for p in r["passages"]:
            corpus.setdefault(p["id"], {"content": p["text"], "date": p["date"]})
        queries.append(
            {
                "query_id": r["query_id"],
                "question": r["question"],
                "gold_chunk_groups": [],
                "answer": r["answer"],
                "answerable": r["answerable"] == "true",
                "date": r["date"],
                "labels": {p["id"]: p["label"] for p in r["passages"]},
                "metadata": {f: r[f] for f in FIELDS},
            }
        )
    path.write_text(json.dumps({"queries": queries, "corpus": corpus}))
    return path


def garage_hub(root: Path, rows=GARAGE) -> None:
    readme(root, {"default": {"test": "data/test-*.parquet"}})
    parquet(root / "data" / "test-00000-of-00001.parquet", rows_to_columns(rows))


def test_garage_layout_is_the_same_data_as_redqa_json(offline_cache, tmp_path):
    garage_hub(snapshot(offline_cache, "acme/garage-tiny"))
    got = load_benchmark(hf("acme/garage-tiny", revision=COMMIT, layout="garage"))
    want = load_redqa(garage_as_redqa(tmp_path / "garage.json"), name="garage")
    assert_same_benchmark(got, want)
    assert list(got.corpus) == ["p1", "p2", "p3", "p4", "p5"]  # p3 once, for g1 and g2
    g1, g2, g3 = got.queries
    assert g1.labels == {"p1": "ANSWER-THE-QUESTION", "p2": "OUTDATED", "p3": "IRRELEVANT"}
    assert g2.labels == {"p3": "RELATED", "p4": "ANSWER-THE-QUESTION"}
    assert g1.fields == {
        "dynamism": "fast",
        "complexity": "simple",
        "popularity": "head",
        "source": "web",
        "category": "Sports",
    }
    assert (g1.date, got.corpus["p1"].date) == (date(2024, 5, 10), date(2024, 5, 9))
    assert g1.answers == ("Alpha",) and g3.answerable == "no"
    assert got.metadata["configs"] == {"queries": "default"}
    ev = assert_same_scores(
        got, want, GARAGE_RUN, ["group_ndcg", "recall", "answer_recall", "outdated"], (1, 2)
    )
    # by hand: g1's top 1 is p2 (OUTDATED), and it holds no answer; p1 at 2 holds "alpha"
    np.testing.assert_array_equal(ev.values["outdated@1"][0], 1.0)
    np.testing.assert_array_equal(ev.values["answer_recall@2"][0], 1.0)


def test_garage_passage_id_with_two_texts_is_an_error(offline_cache):
    rows = json.loads(json.dumps(GARAGE))
    rows[1]["passages"][0]["text"] = "another text under p3"
    garage_hub(snapshot(offline_cache, "acme/garage-bad"), rows)
    with pytest.raises(BenchmarkError) as exc:
        load_benchmark(hf("acme/garage-bad", revision=COMMIT, layout="garage"))
    text = one_line(exc)
    assert "query 'g2'" in text and "passage 'p3' differs in text" in text
    assert "under query 'g1'" in text


def test_garage_published_columns_map_by_name(offline_cache):
    """GaRAGe's own jsonl names (sample_id, question_date, grounding without passage ids, the
    labels in a list beside the passages) read through corpus.columns."""
    root = snapshot(offline_cache, "acme/garage-published")
    readme(root, {"default": {"test": "data.jsonl"}})
    rows = [
        {
            "sample_id": "s1",
            "question": "who won",
            "question_date": "2024-05-10T09:00:00",
            "grounding": [{"text": "[1] Alpha won", "date": "2024-05-09"}, {"text": "[2] rain"}],
            "evidence_correct": ["ANSWER-THE-QUESTION", "IRRELEVANT"],
            "question_popularity": "Head",
        }
    ]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    columns = {
        "query_id": "sample_id",
        "date": "question_date",
        "passages": "grounding",
        "label": "evidence_correct",
    }
    got = load_benchmark(
        hf(
            "acme/garage-published",
            revision=COMMIT,
            layout="garage",
            columns=columns,
            fields=["question_popularity"],
        )
    )
    (q,) = got.queries
    assert q.date == date(2024, 5, 10) and q.fields == {"question_popularity": "Head"}
    ids = list(got.corpus)
    assert len(ids) == 2 and all(i.startswith("p") and len(i) == 17 for i in ids)
    assert q.labels == {ids[0]: "ANSWER-THE-QUESTION", ids[1]: "IRRELEVANT"}
    assert got.corpus[ids[0]].text == "[1] Alpha won"
