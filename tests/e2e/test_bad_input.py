"""The bad-input campaign, rerunnable: every case runs one of the five entry points (`harness`,
`harness.stratify`, `harness.diagnose`, `harness.compare`, `harness.leaderboard`) in a fresh
folder holding the case's files, and must end with exit status 2, exactly one `error:` line on
stderr naming the offending thing, no traceback, and the folder exactly as it was: no result,
no empty `results/`, no lock or temp file (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import write_redqa
from tests.helpers.cli import harness, run_module

GOOD_QUERIES = [{"query_id": "q1", "question": "alpha", "gold_chunk_groups": [["c1"]]}]
GOOD_CORPUS = {"c1": {"content": "alpha text"}, "c2": {"content": "beta text"}}


def redqa(queries=None, corpus=None, **extra) -> str:
    doc = {"metadata": {}, "queries": GOOD_QUERIES if queries is None else queries}
    doc["corpus"] = GOOD_CORPUS if corpus is None else corpus
    return json.dumps({**doc, **extra})


BEIR_OK = {
    "b/corpus.jsonl": '{"_id": "d1", "text": "alpha"}\n{"_id": "d2", "text": "beta"}\n',
    "b/queries.jsonl": '{"_id": "q1", "text": "alpha"}\n',
    "b/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
}


def beir(**files: str | bytes) -> dict[str, str | bytes]:
    """The good BEIR folder with some files replaced: corpus=, queries=, qrels= (test split)."""
    names = {"corpus": "b/corpus.jsonl", "queries": "b/queries.jsonl", "qrels": "b/qrels/test.tsv"}
    return {**BEIR_OK, **{names[k]: v for k, v in files.items()}}


def _edit_csv(path: Path, column: str, value: str) -> None:
    """Set one per_query.csv column to `value` on every row (a hand-edited cell)."""
    lines = path.read_text().splitlines()
    at = lines[0].split(",").index(column)
    rows = [line.split(",") for line in lines[1:]]
    for row in rows:
        row[at] = value
    path.write_text("\n".join([lines[0], *(",".join(r) for r in rows)]) + "\n")


def _edit_json(path: Path, key: str, value) -> None:
    doc = json.loads(path.read_text())
    doc[key] = value
    path.write_text(json.dumps(doc))


@dataclass(frozen=True)
class Case:
    id: str
    module: str
    args: tuple[str, ...]
    expect: str  # a piece of the error line that names the offending thing
    files: dict[str, str | bytes] = field(default_factory=dict)
    cells: tuple[str, ...] = ()  # good cells copied in first: results/demo/<name>
    env: dict[str, str | None] = field(default_factory=dict)
    needs_cpu_torch: bool = False
    edit: Callable[[Path], None] | None = None  # changes the copied cells (gets the case folder)


def log_case(entry: str, id: str, args, files, message: str) -> None:
    """With HARNESS_CASE_LOG set (scripts/bad_input_table.py), one JSON line per case that
    passed: what went in and the error the user saw, for the table in docs/bad-input.md."""
    path = os.environ.get("HARNESS_CASE_LOG")
    if not path:
        return
    record = {"entry": entry, "id": id, "args": list(args), "files": sorted(files)}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({**record, "message": message.strip()}) + "\n")


def H(id, *args, expect, **kw):  # noqa: N802 -- short names keep the table readable
    return Case(id, "harness", args, expect, **kw)


def S(id, *args, expect, **kw):  # noqa: N802
    return Case(id, "harness.stratify", args, expect, **kw)


def D(id, *args, expect, **kw):  # noqa: N802
    return Case(id, "harness.diagnose", args, expect, **kw)


def C(id, *args, expect, **kw):  # noqa: N802
    return Case(id, "harness.compare", args, expect, **kw)


def L(id, *args, expect, **kw):  # noqa: N802
    return Case(id, "harness.leaderboard", args, expect, **kw)


R = ("corpus=redqa", "corpus.path=x.json")  # a RedQA file named x.json in the case folder
B = ("corpus=beir", "corpus.path=b")  # a BEIR folder named b
DEEP = "[" * 100_000 + "]" * 100_000
A, BS = "results/demo/bm25", "results/demo/bm25-simple"

CASES = [
    # ---- python -m harness: configuration
    H("unknown-corpus", "corpus=nope", expect="unknown corpus 'nope'"),
    H("unknown-retriever", "retriever=bm26", expect="unknown retriever 'bm26'"),
    H("unknown-metrics-group", "metrics=nope", expect="unknown metrics 'nope'"),
    H("unknown-key", "retriever.kk1=1", expect="unknown config key 'retriever.kk1'"),
    H("typo-top-key", "retrieval.dept=5", expect="retrieval.dept"),
    H("bad-override-syntax", "retriever=[", expect="cannot parse the overrides"),
    H("k1-not-a-number", "retriever.k1=abc", expect="k1"),
    H("depth-zero", "retrieval.depth=0", expect="depth"),
    H("cutoff-zero", "metrics.k=[0]", expect="metrics.k"),
    H("unknown-metric-name", "metrics.names=[group_ndcg@10,foo@10]", expect="unknown metric 'foo'"),
    H("strata-mode", "strata.mode=sometimes", expect="strata.mode"),
    H("unknown-ids-value", "run.unknown_ids=ignore", expect="run.unknown_ids is 'ignore'; valid"),
    H("corpus-path-missing", "corpus=redqa", expect="corpus.path is required"),
    H("run-file-path-missing", "retriever=run_file", expect="retriever.path is required"),
    H("plugin-target-missing", "retriever=custom", expect="retriever._target_"),
    H(
        "plugin-target-unimportable",
        "retriever=custom",
        "retriever._target_=no_such_pkg.Thing",
        expect="no_such_pkg",
    ),
    H("unknown-device", "retriever=minilm", "device=gpu", expect="unknown device 'gpu'"),
    H(
        "cuda-on-cpu-torch",
        "retriever=minilm",
        "device=cuda",
        expect="CPU-only build",
        needs_cpu_torch=True,
    ),
    H(
        "base-url-not-a-url",
        "retriever=openai-large",
        "retriever.base_url=notaurl",
        expect="retriever.base_url is 'notaurl', not an http(s) URL",
    ),
    H(
        "api-key-missing",
        "retriever=openai-large",
        "retriever.base_url=http://127.0.0.1:9/v1",
        expect="environment variable OPENAI_API_KEY",
        env={"OPENAI_API_KEY": None},
    ),
    H(
        "sweep-override-fits-some-options",
        "-m",
        "retriever=run_file,bm25",
        "retriever.path=x.trec",
        expect="with retriever=bm25 in this sweep",
    ),
    H("unknown-launcher", "-m", "hydra/launcher=nope", expect="unknown hydra/launcher 'nope'"),
    H("force-not-bool", "force=maybe", expect="force"),
    H("seed-negative", "stats.seed=-1", expect="stats.seed must be an integer"),
    H("bootstrap-huge", "stats.bootstrap=1000000000000", expect="stats.bootstrap is 1000000000000"),
    H("permutations-negative", "strata.permutations=-1", expect="strata.permutations must be"),
    H("permutations-huge", "strata.permutations=10000000", expect="strata.permutations is"),
    H("min-queries-zero", "strata.min_queries=0", expect="strata.min_queries must be a positive"),
    H(
        "min-cluster-entities-text",
        "strata.min_cluster_entities=two",
        expect="min_cluster_entities",
    ),
    H(
        "cache-dir-is-a-file",
        "retriever=minilm",
        "cache_dir=blocker",
        expect="blocker",
        files={"blocker": "x"},
    ),
    # ---- python -m harness: where results go
    H(
        "results-dir-is-a-file",
        "results.dir=blocker",
        expect="blocker is a file",
        files={"blocker": "x"},
    ),
    H(
        "results-corpus-is-a-file",
        expect="results/demo is a file where a folder belongs; move it away or give another "
        "results.dir",
        files={"results/demo": "not a folder"},
    ),
    # ---- python -m harness: RedQA files
    H("redqa-missing-file", *R, expect="benchmark not found: x.json"),
    H("redqa-invalid-json", *R, expect="invalid JSON", files={"x.json": "{"}),
    H("redqa-deep-json", *R, expect="nested too deeply", files={"x.json": DEEP}),
    H("redqa-not-utf8", *R, expect="not UTF-8", files={"x.json": b'{"a": "\xff"}'}),
    H("redqa-top-level-list", *R, expect="top level must be an object", files={"x.json": "[]"}),
    H(
        "redqa-empty-corpus",
        *R,
        expect="'corpus' must be a non-empty",
        files={"x.json": redqa(corpus={})},
    ),
    H(
        "redqa-blank-chunk-id",
        *R,
        expect="chunk id ''",
        files={"x.json": redqa(corpus={"": {"content": "x"}, **GOOD_CORPUS})},
    ),
    H(
        "redqa-chunk-without-content",
        *R,
        expect="chunk 'c2' needs a string 'content'",
        files={"x.json": redqa(corpus={"c1": {"content": "a"}, "c2": {"text": "b"}})},
    ),
    H("redqa-zero-queries", *R, expect="'queries' is empty", files={"x.json": redqa(queries=[])}),
    H(
        "redqa-queries-not-a-list",
        *R,
        expect="'queries' must be a list",
        files={"x.json": redqa(queries={"q1": 1})},
    ),
    H(
        "redqa-blank-query-id",
        *R,
        expect="non-empty string 'query_id'",
        files={
            "x.json": redqa(queries=[{"query_id": "", "question": "a", "gold_chunk_groups": []}])
        },
    ),
    H(
        "redqa-citations-not-ids",
        *R,
        expect="'citations' must be a list of the chunk ids the reference answer cites",
        files={"x.json": redqa(queries=[{**GOOD_QUERIES[0], "citations": "c1"}])},
    ),
    H(
        "redqa-duplicate-query-id",
        *R,
        expect="duplicate query_id 'q1'",
        files={"x.json": redqa(queries=GOOD_QUERIES * 2)},
    ),
    H(
        "redqa-no-question",
        *R,
        expect="non-empty 'question'",
        files={
            "x.json": redqa(queries=[{"query_id": "q1", "question": " ", "gold_chunk_groups": []}])
        },
    ),
    H(
        "redqa-groups-not-lists",
        *R,
        expect="'gold_chunk_groups' must be a list of non-empty lists",
        files={
            "x.json": redqa(
                queries=[{"query_id": "q1", "question": "a", "gold_chunk_groups": ["c1"]}]
            )
        },
    ),
    H(
        "redqa-empty-group",
        *R,
        expect="'gold_chunk_groups' must be a list of non-empty lists",
        files={
            "x.json": redqa(
                queries=[{"query_id": "q1", "question": "a", "gold_chunk_groups": [[]]}]
            )
        },
    ),
    H(
        "redqa-id-with-space",
        *R,
        expect="id 'q 1' contains white space",
        files={
            "x.json": redqa(
                queries=[{"query_id": "q 1", "question": "a", "gold_chunk_groups": [["c1"]]}]
            )
        },
    ),
    # ---- python -m harness: BEIR folders
    H("beir-missing-folder", *B, expect="benchmark not found: b"),
    H(
        "beir-not-utf8",
        *B,
        expect="corpus.jsonl:2: not UTF-8",
        files=beir(corpus=b'{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "caf\xe9"}\n'),
    ),
    H(
        "beir-qrels-not-utf8",
        *B,
        expect="test.tsv:2: not UTF-8",
        files=beir(qrels=b"query-id\tcorpus-id\tscore\nq\xff1\td1\t1\n"),
    ),
    H(
        "beir-invalid-json-line",
        *B,
        expect="invalid JSON at line 1",
        files=beir(queries="{oops\n"),
    ),
    H(
        "beir-deep-json-line",
        *B,
        expect="nested too deeply",
        files=beir(queries=DEEP + "\n"),
    ),
    H(
        "beir-blank-id",
        *B,
        expect="missing or blank '_id'",
        files=beir(corpus='{"_id": " ", "text": "a"}\n'),
    ),
    H(
        "beir-duplicate-doc",
        *B,
        expect="duplicate _id 'd1'",
        files=beir(corpus='{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n'),
    ),
    H(
        "beir-err-grade-past-gdeval",
        *B,
        "metrics.names=[ERR@10]",
        expect="query 'q1' grades chunk 'd1' 7, but ERR reads grades 0-4",
        files=beir(qrels="query-id\tcorpus-id\tscore\nq1\td1\t7\n"),
    ),
    H(
        "beir-duplicate-query",  # refused, as the Hub's BEIR layout refuses it
        *B,
        expect="duplicate _id 'q1'",
        files=beir(queries='{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n'),
    ),
    H("beir-missing-split", *B, "corpus.split=dev", expect="qrels file not found", files=beir()),
    H(
        "beir-score-not-int",  # a word is a label name, and this one is not a known label
        *B,
        expect="labels chunk 'd1' 'high', which relevance.grades does not list",
        files=beir(qrels="q1\td1\thigh\n"),
    ),
    H(
        "beir-qrels-unknown-query",
        *B,
        expect="query 'q9' is not in queries.jsonl",
        files=beir(qrels="q9\td1\t1\n"),
    ),
    H(
        "beir-conflicting-qrels",
        *B,
        expect="judges chunk 'd1' 2, but line 2 judged it 1",
        files=beir(qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\n"),
    ),
    H(
        "beir-no-judgments",
        *B,
        expect="no judgments",
        files=beir(qrels="query-id\tcorpus-id\tscore\n"),
    ),
    # ---- python -m harness: run files
    H(
        "run-file-missing",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="run file not found: r.trec",
    ),
    H(
        "run-file-five-fields",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="expected 6 fields",
        files={"r.trec": "demo_001 Q0 c 1 2.0\n"},
    ),
    H(
        "run-file-bad-score",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="score",
        files={"r.trec": "demo_001 Q0 c 1 high t\n"},
    ),
    H(
        "run-file-not-utf8",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="not UTF-8",
        files={"r.trec": b"demo_001 Q0 \xff 1 1.0 t\n"},
    ),
    H(
        "run-json-blank-id",
        "retriever=run_file",
        "retriever.path=r.json",
        expect="blank id ''",
        files={"r.json": '{"demo_001": {"": 1.0}}'},
    ),
    H(
        "run-json-deep",
        "retriever=run_file",
        "retriever.path=r.json",
        expect="nested too deeply",
        files={"r.json": DEEP},
    ),
    # ---- python -m harness.stratify
    S("stratify-unknown-corpus", "corpus=nope", expect="unknown corpus 'nope'"),
    S("stratify-unknown-extractor", "extractor=nope", expect="unknown extractor 'nope'"),
    S(
        "stratify-llm-without-key",
        "extractor=llm",
        expect="environment variable OPENAI_API_KEY",
        env={"OPENAI_API_KEY": None},
    ),
    S(
        "stratify-llm-base-url",
        "extractor=llm",
        "extractor.model=m",
        "extractor.base_url=notaurl",
        expect="extractor.base_url is 'notaurl', not an http(s) URL",
    ),
    S(
        "stratify-zero-queries",
        *R,
        expect="'queries' is empty",
        files={"x.json": redqa(queries=[])},
    ),
    S("stratify-deep-json", *R, expect="nested too deeply", files={"x.json": DEEP}),
    S("stratify-unknown-key", "strata.resolutoin=2", expect="strata.resolutoin"),
    S(
        "stratify-strata-dir-is-a-file",
        "strata.dir=blocker",
        expect="blocker is a file where a folder belongs; move it away or give another strata.dir",
        files={"blocker": "x"},
    ),
    # ---- python -m harness.diagnose
    D("diagnose-unknown-corpus", "corpus=nope", expect="unknown corpus 'nope'"),
    D("diagnose-unknown-embedder", "embedder=nope", expect="nope"),
    D("diagnose-not-utf8", *R, expect="not UTF-8", files={"x.json": b'{"corpus": "caf\xe9"}'}),
    D("diagnose-cuda-on-cpu-torch", "device=cuda", expect="CPU-only build", needs_cpu_torch=True),
    D("diagnose-results-is-a-file", expect="results", files={"results": "x"}),
    # ---- python -m harness.compare
    C("compare-missing-folders", "a", "b", expect="result folder not found: a"),
    C("compare-one-folder", A, expect="at least two", cells=("bm25",)),
    C(
        "compare-not-a-cell",
        A,
        "notacell",
        expect="notacell is not a result folder",
        cells=("bm25",),
        files={"notacell/x.txt": "x"},
    ),
    C(
        "compare-metrics-not-json",
        A,
        BS,
        expect="bm25-simple/metrics.json: not valid JSON",
        cells=("bm25", "bm25-simple"),
        files={f"{BS}/metrics.json": "{"},
    ),
    C(
        "compare-per-query-not-utf8",
        A,
        BS,
        expect="bm25-simple/per_query.csv: not UTF-8",
        cells=("bm25", "bm25-simple"),
        files={f"{BS}/per_query.csv": b"query_id,hop,n_groups,group_ndcg@10\n\xff,1,1,0.5\n"},
    ),
    C(
        "compare-per-query-string-value",
        A,
        BS,
        expect="value 'abc' is not a number",
        cells=("bm25", "bm25-simple"),
        files={f"{BS}/per_query.csv": "query_id,hop,n_groups,group_ndcg@10\ndemo_001,1,1,abc\n"},
    ),
    C(
        "compare-unknown-metric",
        A,
        BS,
        "--metric",
        "foo@10",
        expect="foo@10",
        cells=("bm25", "bm25-simple"),
    ),
    C(
        "compare-alpha-out-of-range",
        A,
        BS,
        "--alpha",
        "2",
        expect="--alpha",
        cells=("bm25", "bm25-simple"),
    ),
    C(
        "compare-bad-option",
        A,
        BS,
        "--max-drop",
        "lots",
        expect="--max-drop",
        cells=("bm25", "bm25-simple"),
    ),
    C(
        "compare-max-drop-nan",
        A,
        BS,
        "--max-drop",
        "nan",
        expect="--max-drop must be a finite",
        cells=("bm25", "bm25-simple"),
    ),
    C(
        "compare-max-drop-inf",
        A,
        BS,
        "--max-drop",
        "inf",
        expect="--max-drop must be a finite",
        cells=("bm25", "bm25-simple"),
    ),
    C(
        "compare-per-query-edited",
        A,
        BS,
        expect="the group_ndcg@10 values hold no number but metrics.json says",
        cells=("bm25", "bm25-simple"),
        edit=lambda root: _edit_csv(root / BS / "per_query.csv", "group_ndcg@10", "nan"),
    ),
    C(
        "compare-per-query-infinite",
        A,
        BS,
        expect="is not finite",
        cells=("bm25", "bm25-simple"),
        edit=lambda root: _edit_csv(root / BS / "per_query.csv", "group_ndcg@10", "inf"),
    ),
    C(
        "compare-metrics-config-wrong-type",
        A,
        BS,
        expect="'config' should be a dict, found 5",
        cells=("bm25", "bm25-simple"),
        edit=lambda root: _edit_json(root / BS / "metrics.json", "config", 5),
    ),
    L(
        "leaderboard-metrics-semantic-wrong-type",
        "--check",
        expect="'semantic' should be a dict",
        cells=("bm25",),
        edit=lambda root: _edit_json(root / A / "metrics.json", "semantic", [1]),
    ),
    # ---- python -m harness.leaderboard
    L("leaderboard-no-results", expect="results folder not found: results"),
    L(
        "leaderboard-empty-results",
        expect="no result cells under results",
        files={"results/demo/.keep": ""},
    ),
    L("leaderboard-unknown-format", "--format", "pdf", expect="invalid choice: 'pdf'"),
    L("leaderboard-unknown-argument", "extra", expect="unrecognized arguments: extra"),
    L("leaderboard-bad-k", "--k", "ten", expect="--k", cells=("bm25",)),
    L(
        "leaderboard-out-is-a-file",
        "--out",
        "blocker",
        expect="blocker",
        cells=("bm25",),
        files={"blocker": "x"},
    ),
    L("leaderboard-unknown-corpus", "--corpus", "nope", expect="nope", cells=("bm25",)),
    L(
        "leaderboard-out-inside-results",
        "--out",
        "results/lb",
        expect="inside the results folder",
        cells=("bm25",),
    ),
    L("leaderboard-out-empty", "--out", "", expect="--out is empty", cells=("bm25",)),
    L(
        "leaderboard-only-damaged-cells",
        expect="not a number",
        cells=("bm25",),
        files={f"{A}/per_query.csv": "query_id,hop,n_groups,group_ndcg@10\ndemo_001,1,1,abc\n"},
    ),
]


@pytest.fixture(scope="module")
def good_cells(tmp_path_factory) -> Path:
    """Two good demo cells (bm25, bm25-simple) for the compare and leaderboard cases."""
    root = tmp_path_factory.mktemp("good")
    harness("-m", "retriever=bm25,bm25-simple", "stats.bootstrap=0", cwd=root)
    return root / "results" / "demo"


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_error_line_and_writes_nothing(case: Case, tmp_path, good_cells):
    if case.needs_cpu_torch:
        torch = pytest.importorskip("torch")
        if torch.version.cuda is not None:
            pytest.skip("this torch has CUDA: the CPU-only message does not apply")
    for name in case.cells:
        shutil.copytree(good_cells / name, tmp_path / "results" / "demo" / name)
    if case.edit is not None:
        case.edit(tmp_path)
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    before = _snapshot(tmp_path)
    res = run_module(case.module, *case.args, cwd=tmp_path, env=case.env, check=False)
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr[-3000:]
    assert case.expect in res.stderr, res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    assert _snapshot(tmp_path) == before, "the failed run left files behind"
    log_case(f"python -m {case.module}", case.id, case.args, case.files, res.stderr)


def test_the_campaign_is_big_enough():
    modules = {c.module for c in CASES}
    assert len(CASES) >= 60 and len(modules) == 5
    assert len({c.id for c in CASES}) == len(CASES)


def test_write_redqa_helper_is_still_valid(tmp_path):
    """The good baseline the cases start from loads (so each case fails for its own reason)."""
    path = tmp_path / "x.json"
    path.write_text(redqa(), encoding="utf-8")
    res = harness(*R, "results.write=false", cwd=tmp_path, check=False)
    assert res.returncode == 0, res.stderr
    assert write_redqa(tmp_path / "y.json").is_file()


@pytest.mark.parametrize(
    "override, message",
    [
        ("retriever.stopwords=5", "retriever.stopwords must be true or false, got 5"),
        ("results.dir=", "results.dir is ''; give the folder cells go to"),
        ("results.write=maybe", "results.write must be true or false, got 'maybe'"),
        ("force=yes", "force must be true or false, got 'yes'"),  # OmegaConf would take it
        ("cache=1", "cache must be true or false, got '1'"),
    ],
)
def test_settings_python_would_take_for_true_are_refused(tmp_path, override, message):
    res = harness(override, "stats.bootstrap=0", cwd=tmp_path, check=False)
    assert res.returncode == 2 and message in res.stderr
    assert list(tmp_path.iterdir()) == []
