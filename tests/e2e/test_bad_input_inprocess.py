"""Bad input through every entry point, run in this process (each case costs a tenth of a
second, not a process start): the commands' mains (`harness`, `harness trec_eval`,
`harness compare`, `harness leaderboard`, `harness stratify`, `harness diagnose`,
`harness encode`) end with exit status 2, one `error:` line naming the offending thing and
nothing written; the Python API raises a HarnessError subclass with a one-line message. The
cases and tests/e2e/test_bad_input.py's (run as subprocesses) make the table in
docs/bad-input.md (scripts/bad_input_table.py; a test keeps them in step)."""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import harness
from harness.core.errors import HarnessError
from tests.e2e.test_bad_input import _snapshot, beir, log_case, redqa
from tests.helpers.rag_stub import RagStub


@dataclass(frozen=True)
class Case:
    id: str
    entry: str  # a command verb ("run", "trec_eval", ...) or "api"
    args: tuple[str, ...]
    expect: str  # a piece of the error line that names the offending thing
    files: dict[str, str | bytes | None] = field(default_factory=dict)  # None: delete it
    call: Callable[[Path], object] | None = None  # the API call (gets the case folder)
    cells: bool = False  # the two good demo cells copied in first (results/demo/...)
    env: dict[str, str] = field(default_factory=dict)
    what: str = ""  # the input, for the table, when the arguments do not say it


def R(id, *args, expect, **kw):  # noqa: N802 -- short names keep the table readable
    return Case(id, "run", args, expect, **kw)


def T(id, *args, expect, **kw):  # noqa: N802
    return Case(id, "trec_eval", args, expect, **kw)


def C(id, *args, expect, **kw):  # noqa: N802
    return Case(id, "compare", args, expect, cells=True, **kw)


def L(id, *args, expect, **kw):  # noqa: N802
    return Case(id, "leaderboard", args, expect, cells=True, **kw)


def V(verb, id, *args, expect, **kw):  # noqa: N802 -- stratify, diagnose, encode
    return Case(id, verb, args, expect, **kw)


def A(id, call, expect, what, **kw):  # noqa: N802
    return Case(id, "api", (), expect, call=call, what=what, **kw)


QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d3 2 1.0 r\nq2 Q0 d3 1 1.5 r\n"
GOOD = {"qrels.txt": QRELS, "run.trec": RUN}
A_CELL, B_CELL = "results/demo/bm25", "results/demo/bm25-simple"


def _ev(**kw):
    return lambda tmp: harness.evaluate("demo", "bm25", **kw)


def _run_dict(run):
    return lambda tmp: harness.evaluate("demo", harness.Run.from_dict(run))


def _bad_metric(name):
    return lambda tmp: harness.evaluate("demo", "bm25", metrics=[name])


CASES = [
    # ---- python -m harness (run): settings
    R("k-negative", "metrics.k=[-1]", expect="metrics.k must hold positive integers, got -1"),
    R("k-empty", "metrics.k=[]", expect="metrics.k is empty"),
    R("k-text", "metrics.k=[a]", expect="metrics.k=[a]"),
    R("sweep-without-m", "retriever=bm25,bm25-simple", expect="a sweep: add -m (--multirun)"),
    R(
        "list-without-brackets",
        "metrics.k=5,10",
        expect="write a list in brackets: metrics.k=[5,10]",
    ),
    R("names-empty", "metrics.names=[]", expect="metrics.names is empty"),
    R("metric-typo", "metrics.names=[NumRett]", expect="unknown metric 'NumRett' (did you mean"),
    R("iprec-level", "metrics.names=[IPrec@1.5]", expect="recall level must be between 0 and 1"),
    R("err-uncut-fraction", "metrics.names=[ERR@0.5]", expect="K must be a positive integer"),
    R("judged-zero", "metrics.names=[Judged@0]", expect="K must be a positive integer"),
    R("trec-iprec-level", "metrics.names=[iprec_at_recall_2]", expect="between 0 and 1"),
    R("count-with-cutoff", "metrics.names=[NumQ@10]", expect="NumQ reads the whole list"),
    R("setp", "metrics.names=[SetP@10]", expect="is ir_measures' SetP"),
    R("ndcg-two-readings", "metrics.names=[ndcg@10]", expect="could mean two things"),
    R("mrr-two-readings", "metrics.names=[MRR@10]", expect="could mean two things"),
    R("rel-on-ndcg", 'metrics.names=["nDCG(rel=2)@10"]', expect="does not use a relevance level"),
    R("rel-zero", 'metrics.names=["P(rel=0)@10"]', expect="relevance level must be >= 1"),
    R("other-parameter", 'metrics.names=["P(judged_only=1)@10"]', expect="only the parameter rel"),
    R("unquoted-parens", "metrics.names=[NumRet(rel=2)]", expect="goes in quotes"),
    R("malformed-name", "metrics.names=[@10]", expect="is not of the form name@k"),
    R("uncut-with-k", "metrics.names=[Rprec@10]", expect="Rprec reads the whole list"),
    R("bare-iprec-level", "metrics.names=[IPrec@a]", expect="not of the form name@k"),
    R("level-zero", "metrics.relevance_level=0", expect="relevance_level"),
    R("level-text", "metrics.relevance_level=a", expect="relevance_level"),
    R("no-relevant-value", "metrics.no_relevant=maybe", expect="metrics.no_relevant is 'maybe'"),
    R("depth-negative", "retrieval.depth=-3", expect="retrieval.depth"),
    R("depth-text", "retrieval.depth=a", expect="retrieval.depth"),
    R("depth-below-k", "retrieval.depth=5", "metrics.k=[10]", expect="smaller than the largest K"),
    R("bootstrap-negative", "stats.bootstrap=-1", expect="stats.bootstrap must be an integer >= 0"),
    R("bootstrap-one", "stats.bootstrap=1", expect="stats.bootstrap is 1: a 95% interval needs at"),
    R("bootstrap-99", "stats.bootstrap=199", "stats.confidence=0.99", expect="needs at least 200"),
    R("list-given-bare", "metrics.k=10", expect="metrics.k takes a list: metrics.k=[10]"),
    R("confidence-one", "stats.confidence=1", expect="stats.confidence must be between 0 and 1"),
    R("confidence-zero", "stats.confidence=0", expect="stats.confidence must be between 0 and 1"),
    R("seed-negative", "stats.seed=-1", expect="stats.seed must be an integer in [0, 2^32)"),
    R("seed-huge", "stats.seed=5000000000", expect="stats.seed must be an integer in [0, 2^32)"),
    R("permutations-negative", "strata.permutations=-1", expect="strata.permutations"),
    R("min-queries-zero", "strata.min_queries=0", expect="strata.min_queries"),
    R("report-value", "report=long", expect="report is 'long'; valid: short"),
    R("force-value", "force=maybe", expect="force"),
    R("device-value", "device=tpu", expect="unknown device 'tpu'"),
    Case("unknown-verb", "harness", ("runn",), "unknown command 'runn' (did you mean 'run'?)"),
    R("closed-section-key", "relevance.nope=1", expect="unknown config key 'relevance.nope'"),
    R(
        "empty-mapping-key",
        "retriever=hybrid-bm25-minilm",
        "retriever.weights.bm25=0.3",
        expect="retriever.weights starts empty: add a key with +retriever.weights.bm25=...",
    ),
    R("added-closed-key", "+relevance.nope=1", expect="unknown config key 'relevance.nope'"),
    R("added-schema-typo", "+retrieval.dept=5", expect="'retrieval.dept' (did you mean 'depth'?)"),
    R("added-top-level", "+foo=1", expect="unknown config key 'foo'; keys under the top level"),
    R(
        "added-retriever-key",
        "+retriever.search.fp16=false",
        expect="retriever 'bm25' has no setting 'search'; its settings: name, k1, b",
    ),
    R("grade-negative", "relevance.grades.RELATED=-1", expect="relevance.grades.RELATED"),
    R("grades-not-a-map", "relevance.grades=5", expect="relevance.grades"),
    R("ages-not-a-map", "relevance.max_age_days=5", expect="relevance.max_age_days"),
    R("launcher-unknown", "hydra/launcher=nope", expect="nope"),
    R("retriever-key-typo", "retriever.kl=1", expect="unknown config key 'retriever.kl'"),
    R("corpus-key-typo", "corpus.nam=x", expect="unknown config key 'corpus.nam'"),
    R(
        "split-unknown",
        "corpus=beir",
        "corpus.path=b",
        "corpus.split=dev",
        expect="dev",
        files=beir(),
    ),  # fmt: skip
    R("plugin-not-a-class", "retriever=custom", "retriever._target_=math.pi", expect="math.pi"),
    R("k1-negative", "retriever.k1=-1", expect="retriever.k1"),
    R("b-above-one", "retriever.b=2", expect="retriever.b"),
    R("tokenizer-unknown", "retriever.tokenizer=nope", expect="nope"),
    R("epsilon-text", "retriever.epsilon=a", expect="epsilon"),
    R("cache-value", "cache=maybe", expect="cache"),
    R(
        "write-value",
        "results.write=maybe",
        expect="results.write must be true or false, got 'maybe'",
    ),
    R(
        "tilde-path",
        "corpus=redqa",
        "corpus.path=~/x.json",
        expect="cannot parse 'corpus.path=~/x.json': Hydra reads characters such as ~ ( ) [ ] "
        """{ } , in a value as syntax; quote the value: 'corpus.path="~/x.json"'""",
    ),
    R(
        "path-without-format",
        "corpus.path=x.json",
        expect="corpus.path belongs to corpus=beir, corpus=redqa: choose one first",
    ),
    R(
        "run-file-path-without-type",
        "retriever.path=x.trec",
        expect="retriever.path belongs to retriever=run_file: choose one first",
    ),
    R(
        "redqa-chunk-is-text",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="chunk 'c1' needs a string 'content' field (it is str, not an object: write "
        """{"c1": {"content": ...}})""",
        files={"x.json": redqa(corpus={"c1": "alpha text", "c2": {"content": "b"}})},
    ),
    R("force-yes", "force=yes", expect="force must be true or false, got 'yes'"),
    R(
        "sweep-flag-yes",
        "-m",
        "retrieval.depth=5,10",
        "cache=on",
        expect="cache must be true or false, got 'on'",
    ),
    R("fields-unknown", "strata.fields=[nope]", expect="nope"),
    R("cutoff-fraction", "metrics.k=[1.5]", expect="metrics.k"),
    R("names-not-a-list", "metrics.names=5", expect="metrics.names"),
    R("utility-without-section", "utility.samples=3", expect="+utility=seper"),
    R("utility-samples-zero", "+utility=seper", "utility.samples=0", expect="utility.samples"),
    R("utility-backend", "+utility=seper", "utility.nli.backend=nope", expect="nope"),
    R("rag-without-section", "rag.judge=lexical", expect="+rag=e2e"),
    R("rag-metric-without-section", "metrics.names=[e2e]", expect="e2e@5 needs a generator"),
    R("rag-judge", "+rag=e2e", "rag.judge=oracle", expect="rag.judge is 'oracle'"),
    R("rag-temperature", "+rag=e2e", "rag.temperature=-1", expect="rag.temperature"),
    R("rag-custom-judge", "+rag=e2e", "rag.judge=custom", expect="rag.judge_model.target"),
    R("rag-nli-judge-no-model", "+rag=e2e", "rag.judge=nli", expect="rag.judge_model.model"),
    R(
        "rag-garage-lexical-judge",
        "+rag=e2e",
        "metrics.names=[eligibility]",
        expect="eligibility@5 needs a judge that reads eligibility",
    ),
    R("rag-garage-no-judge-model", "metrics=garage", expect="rag.judge_model.model"),
    R("rag-section-unused", "+rag=e2e", expect="but no rag metric is asked for"),
    R(
        "rag-device-list-custom",
        "+rag=e2e",
        "rag.generator.backend=custom",
        "rag.generator.target=tests.helpers.rag_stub.RagStub",
        "rag.generator.device=[cpu,cpu]",
        expect="rag.generator.device is a list, but backend custom builds its own",
    ),
    R("hybrid-fusion", "retriever=hybrid-bm25-minilm", "retriever.fusion=sum", expect="sum"),
    R("hybrid-rrf-k", "retriever=hybrid-bm25-minilm", "retriever.rrf_k=-1", expect="rrf_k"),
    R(
        "hybrid-weight-part",
        "retriever=hybrid-bm25-minilm",
        "+retriever.weights.nope=1",
        expect="nope",
    ),  # fmt: skip
    R("batch-size-zero", "retriever=minilm", "retriever.batch_size=0", expect="batch_size"),
    R(
        "dimensions-negative",
        "retriever=openai-large",
        "retriever.dimensions=-1",
        expect="retriever.dimensions must be a positive integer",
        env={"OPENAI_API_KEY": "sk-test"},
    ),  # fmt: skip
    R("device-list-auto", "retriever=minilm", "device=[auto,cpu]", expect="auto"),
    R("device-empty-list", "retriever=minilm", "device=[]", expect="device list is empty"),
    R("irds-no-id", "corpus=irds", expect="corpus.id"),
    R("hf-no-name", "corpus=hf", expect="corpus"),
    R(
        "corpus-format",
        "corpus=redqa",
        "corpus.path=x.json",
        "corpus.format=xml",
        expect="xml",
        files={"x.json": redqa()},
    ),  # fmt: skip
    R(
        "qrels-on-redqa",
        "corpus=redqa",
        "corpus.path=x.json",
        "+corpus.qrels=q.tsv",
        expect="corpus.qrels applies to BEIR",
        files={"x.json": redqa()},
    ),  # fmt: skip
    R("k1-inf", "retriever.k1=inf", expect="retriever.k1 must be a finite number"),
    R("b-nan", "retriever.b=nan", expect="retriever.b must be a finite number"),
    # ---- python -m harness (run): data
    R("redqa-missing", "corpus=redqa", "corpus.path=nope.json", expect="benchmark not found"),
    R("beir-missing", "corpus=beir", "corpus.path=nope", expect="benchmark not found"),
    R(
        "run-file-missing",
        "retriever=run_file",
        "retriever.path=nope.trec",
        expect="run file not found",
    ),  # fmt: skip
    R(
        "redqa-not-json",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="x.json",
        files={"x.json": "{not json"},
    ),  # fmt: skip
    R(
        "redqa-empty-file",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="x.json",
        files={"x.json": ""},
    ),  # fmt: skip
    R("redqa-list", "corpus=redqa", "corpus.path=x.json", expect="x.json", files={"x.json": "[]"}),
    R(
        "redqa-no-queries",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="queries",
        files={"x.json": redqa(queries=[])},
    ),  # fmt: skip
    R(
        "redqa-repeated-chunk",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="x.json: the key 'c2' appears twice in one object",
        files={
            "x.json": redqa().replace(
                '"c2": {"content": "beta text"}',
                '"c2": {"content": "beta text"}, "c2": {"content": "b"}',
            )
        },
    ),  # fmt: skip
    R(
        "redqa-group-not-list",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="gold_chunk_groups",
        files={
            "x.json": redqa(
                queries=[{"query_id": "q1", "question": "a", "gold_chunk_groups": "c1"}]
            )
        },
    ),  # fmt: skip
    R(
        "redqa-query-id-number",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="query_id",
        files={
            "x.json": redqa(
                queries=[{"query_id": 7, "question": "a", "gold_chunk_groups": [["c1"]]}]
            )
        },
    ),  # fmt: skip
    R(
        "redqa-question-blank",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="q1",
        files={
            "x.json": redqa(
                queries=[{"query_id": "q1", "question": " ", "gold_chunk_groups": [["c1"]]}]
            )
        },
    ),  # fmt: skip
    R(
        "redqa-corpus-list",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="corpus",
        files={"x.json": redqa(corpus=["c1"])},
    ),  # fmt: skip
    R(
        "redqa-latin1",
        "corpus=redqa",
        "corpus.path=x.json",
        expect="UTF-8",
        files={"x.json": redqa().replace("alpha", "\u00e9").encode("latin-1")},
    ),  # fmt: skip
    R(
        "beir-qrels-grade-text",
        "corpus=beir",
        "corpus.path=b",
        expect="relevance.grades",
        files=beir(qrels="query-id\tcorpus-id\tscore\nq1\td1\tgood\n"),
    ),  # fmt: skip
    R(
        "beir-qrels-two-fields",
        "corpus=beir",
        "corpus.path=b",
        expect="test.tsv",
        files=beir(qrels="query-id\tcorpus-id\tscore\nq1\td1\n"),
    ),  # fmt: skip
    R(
        "beir-query-no-text",
        "corpus=beir",
        "corpus.path=b",
        expect="has no text",
        files=beir(queries='{"_id": "q1"}\n'),
    ),  # fmt: skip
    R(
        "beir-corpus-text-number",
        "corpus=beir",
        "corpus.path=b",
        expect="'text' must be a string",
        files=beir(corpus='{"_id": "d1", "text": 5}\n'),
    ),  # fmt: skip
    R(
        "beir-corpus-empty", "corpus=beir", "corpus.path=b", expect="corpus", files=beir(corpus="")
    ),  # fmt: skip
    R(
        "run-line-short",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="r.trec",
        files={"r.trec": "demo_001 Q0 demo_c001 1\n"},
    ),  # fmt: skip
    R(
        "run-score-text",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="r.trec",
        files={"r.trec": "demo_001 Q0 demo_c001 1 high r\n"},
    ),  # fmt: skip
    R(
        "run-score-inf",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="r.trec",
        files={"r.trec": "demo_001 Q0 demo_c001 1 inf r\n"},
    ),  # fmt: skip
    R(
        "run-score-nan",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="r.trec",
        files={"r.trec": "demo_001 Q0 demo_c001 1 nan r\n"},
    ),  # fmt: skip
    R(
        "run-empty",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="r.trec",
        files={"r.trec": ""},
    ),  # fmt: skip
    R(
        "run-duplicate-doc",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="demo_c001",
        files={"r.trec": "demo_001 Q0 demo_c001 1 2 r\ndemo_001 Q0 demo_c001 2 1 r\n"},
    ),  # fmt: skip
    R(
        "run-no-known-query",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="r.trec",
        files={"r.trec": "nope Q0 demo_c001 1 2 r\n"},
    ),  # fmt: skip
    R(
        "run-binary",
        "retriever=run_file",
        "retriever.path=r.trec",
        expect="r.trec",
        files={"r.trec": b"\xff\xfe\x00\x01"},
    ),  # fmt: skip
    R(
        "err-grade-past-4",
        "corpus=beir",
        "corpus.path=b",
        "metrics.names=[ERR@10]",
        expect="grades chunk 'd1' 9, but ERR reads grades 0-4",
        files=beir(qrels="query-id\tcorpus-id\tscore\nq1\td1\t9\n"),
    ),  # fmt: skip
    R(
        "redqa-path-is-folder",
        "corpus=redqa",
        "corpus.path=d",
        expect="d is a folder; give the file",
        files={"d/x.json": redqa()},
    ),  # fmt: skip
    R(
        "run-path-is-folder",
        "retriever=run_file",
        "retriever.path=d",
        expect="run file d is a folder",
        files={"d/r.trec": ""},
    ),  # fmt: skip
    R(
        "beir-path-is-file",
        "corpus=beir",
        "corpus.path=f",
        expect="BEIR folder f is a file",
        files={"f": "x"},
    ),  # fmt: skip
    R(
        "cache-dir-unwritable",
        "retriever=minilm",
        "cache_dir=/proc/nope",
        expect="cannot write the embedding cache /proc/nope",
    ),  # fmt: skip
    # ---- harness trec_eval
    T("no-files", expect="the following arguments are required"),
    T("one-file", "qrels.txt", expect="the following arguments are required", files=GOOD),
    T("qrels-missing", "nope.txt", "run.trec", expect="nope.txt", files=GOOD),
    T("run-missing", "qrels.txt", "nope.trec", expect="nope.trec", files=GOOD),
    T(
        "unknown-measure",
        "-m",
        "nope",
        "qrels.txt",
        "run.trec",
        expect="-m nope: 'nope' is not a trec_eval measure; measures: official",
        files=GOOD,
    ),  # fmt: skip
    T(
        "prefs-measure",
        "-m",
        "prefs_simp",
        "qrels.txt",
        "run.trec",
        expect="preference",
        files=GOOD,
    ),
    T(
        "harness-name",
        "-m",
        "nDCG@10",
        "qrels.txt",
        "run.trec",
        expect="-m nDCG@10: 'nDCG@10' is not a trec_eval measure (write ndcg_cut.10)",
        files=GOOD,
    ),
    T(
        "harness-name-level",
        "-m",
        "P(rel=2)@5",
        "qrels.txt",
        "run.trec",
        expect="(write P.5 with -l 2)",
        files=GOOD,
    ),
    T(
        "cut-zero",
        "-m",
        "P.0",
        "qrels.txt",
        "run.trec",
        expect="-m P.0: cut-offs must be positive whole numbers",
        files=GOOD,
    ),  # fmt: skip
    T(
        "cut-text",
        "-m",
        "P.a",
        "qrels.txt",
        "run.trec",
        expect="cut-offs must be positive whole numbers",
        files=GOOD,
    ),  # fmt: skip
    T(
        "iprec-level",
        "-m",
        "iprec_at_recall.0.5,.5",
        "qrels.txt",
        "run.trec",
        expect="-m iprec_at_recall.0.5,.5: a level is given twice",
        files=GOOD,
    ),  # fmt: skip
    T(
        "params-on-map",
        "-m",
        "map.5",
        "qrels.txt",
        "run.trec",
        expect="map takes no parameters",
        files=GOOD,
    ),  # fmt: skip
    T("underscore-cut", "-m", "P_10", "qrels.txt", "run.trec", expect="(write P.10)", files=GOOD),
    T("max-zero", "-M", "0", "qrels.txt", "run.trec", expect="-M", files=GOOD),
    T("max-text", "-M", "a", "qrels.txt", "run.trec", expect="-M", files=GOOD),
    T("level-zero", "-l", "0", "qrels.txt", "run.trec", expect="-l", files=GOOD),
    T("level-text", "-l", "a", "qrels.txt", "run.trec", expect="-l", files=GOOD),
    T(
        "unknown-flag",
        "-x",
        "qrels.txt",
        "run.trec",
        expect="unrecognized arguments: -x",
        files=GOOD,
    ),  # fmt: skip
    T(
        "qrels-empty", "qrels.txt", "run.trec", expect="qrels.txt", files={**GOOD, "qrels.txt": ""}
    ),  # fmt: skip
    T("run-empty", "qrels.txt", "run.trec", expect="run.trec", files={**GOOD, "run.trec": ""}),
    T(
        "qrels-five-fields",
        "qrels.txt",
        "run.trec",
        expect="qrels.txt",
        files={**GOOD, "qrels.txt": "q1 0 d1 1 extra\n"},
    ),  # fmt: skip
    T(
        "qrels-three-spaced",
        "qrels.txt",
        "run.trec",
        expect="qrels.txt",
        files={**GOOD, "qrels.txt": "q1 d1 1\n"},
    ),  # fmt: skip
    T(
        "qrels-grade-text",
        "qrels.txt",
        "run.trec",
        expect="qrels.txt",
        files={**GOOD, "qrels.txt": "q1 0 d1 high\n"},
    ),  # fmt: skip
    T(
        "qrels-grade-huge",
        "qrels.txt",
        "run.trec",
        expect="qrels.txt",
        files={**GOOD, "qrels.txt": "q1 0 d1 99999999999999999999\n"},
    ),  # fmt: skip
    T(
        "qrels-duplicate",
        "qrels.txt",
        "run.trec",
        expect="d1",
        files={**GOOD, "qrels.txt": "q1 0 d1 1\nq1 0 d1 2\n"},
    ),  # fmt: skip
    T(
        "run-five-fields",
        "qrels.txt",
        "run.trec",
        expect="run.trec",
        files={**GOOD, "run.trec": "q1 Q0 d1 1 2.0\n"},
    ),  # fmt: skip
    T(
        "run-score-text",
        "qrels.txt",
        "run.trec",
        expect="run.trec",
        files={**GOOD, "run.trec": "q1 Q0 d1 1 high r\n"},
    ),  # fmt: skip
    T(
        "run-score-inf",
        "qrels.txt",
        "run.trec",
        expect="run.trec",
        files={**GOOD, "run.trec": "q1 Q0 d1 1 inf r\n"},
    ),  # fmt: skip
    T(
        "run-duplicate-doc",
        "qrels.txt",
        "run.trec",
        expect="d1",
        files={**GOOD, "run.trec": "q1 Q0 d1 1 2 r\nq1 Q0 d1 2 1 r\n"},
    ),  # fmt: skip
    T(
        "no-common-query",
        "qrels.txt",
        "run.trec",
        expect="of the qrels has no results in the run",
        files={**GOOD, "run.trec": "q9 Q0 d1 1 2 r\n"},
    ),  # fmt: skip
    T(
        "no-common-query-v9",
        "--v9",
        "qrels.txt",
        "run.trec",
        expect="no query has both results and judgments",
        files={**GOOD, "run.trec": "q9 Q0 d1 1 2 r\n"},
    ),  # fmt: skip
    T(
        "qrels-latin1",
        "qrels.txt",
        "run.trec",
        expect="qrels.txt",
        files={**GOOD, "qrels.txt": "q1 0 d\u00e9 1\n".encode("latin-1")},
    ),  # fmt: skip
    T(
        "run-latin1",
        "qrels.txt",
        "run.trec",
        expect="run.trec",
        files={**GOOD, "run.trec": "q1 Q0 d\u00e9 1 2 r\n".encode("latin-1")},
    ),  # fmt: skip
    T("qrels-is-a-folder", "folder", "run.trec", expect="folder", files={**GOOD, "folder/x": ""}),
    T(
        "qrels-only-comments",
        "qrels.txt",
        "run.trec",
        expect="qrels.txt",
        files={**GOOD, "qrels.txt": "# nothing\n"},
    ),  # fmt: skip
    T(
        "qrels-grade-fraction",
        "qrels.txt",
        "run.trec",
        expect="qrels.txt",
        files={**GOOD, "qrels.txt": "q1 0 d1 0.5\n"},
    ),  # fmt: skip
    T(
        "run-rank-text",
        "qrels.txt",
        "run.trec",
        expect="run.trec",
        files={**GOOD, "run.trec": "q1 Q0 d1 first 2 r\n"},
    ),  # fmt: skip
    T(
        "run-score-nan",
        "qrels.txt",
        "run.trec",
        expect="run.trec",
        files={**GOOD, "run.trec": "q1 Q0 d1 1 nan r\n"},
    ),  # fmt: skip
    T("measure-empty", "-m", "", "qrels.txt", "run.trec", expect="-m", files=GOOD),
    T(
        "run-is-folder",
        "qrels.txt",
        "d",
        expect="run file d is a folder",
        files={**GOOD, "d/x": ""},
    ),  # fmt: skip
    # ---- harness compare
    C("one-folder", A_CELL, expect="give at least two result folders (baseline first)"),
    C("folder-missing", A_CELL, "results/demo/nope", expect="result folder not found"),
    L(
        "out-is-a-file",
        "--out",
        "afile",
        expect="afile is a file where a folder belongs; move it away or give another --out",
        files={"afile": "x"},
    ),
    C(
        "out-in-a-cell",
        A_CELL,
        B_CELL,
        "--out",
        f"{A_CELL}/report.md",
        expect="--out results/demo/bm25/report.md is inside the cell folder",
    ),
    C("metric-typo", A_CELL, B_CELL, "--metric", "group_ndgc@10", expect="group_ndgc@10"),
    C("metric-two-readings", A_CELL, B_CELL, "--metric", "ndcg@10", expect="could mean two"),
    C(
        "metric-not-there",
        A_CELL,
        B_CELL,
        "--metric",
        "P_10",
        expect=(
            "'P_10' (P@10) is not in results/demo/bm25, "
            "results/demo/bm25-simple; score it into the cells first"
        ),
    ),
    C(
        "metric-typo-did-you-mean",
        A_CELL,
        B_CELL,
        "--metric",
        "covrage@10",
        expect=(
            "'covrage@10' is not in results/demo/bm25, "
            "results/demo/bm25-simple (did you mean 'coverage@10'?)"
        ),
    ),
    C(
        "metric-other-family",
        A_CELL,
        B_CELL,
        "--metric",
        "nDCG@10",
        expect=(
            "'nDCG@10' is not in results/demo/bm25, "
            "results/demo/bm25-simple; score it into the cells first"
        ),
    ),
    C("alpha-two", A_CELL, B_CELL, "--alpha", "2", expect="--alpha"),
    C("alpha-zero", A_CELL, B_CELL, "--alpha", "0", expect="--alpha"),
    C("max-drop-inf", A_CELL, B_CELL, "--max-drop", "inf", expect="--max-drop"),
    C("max-drop-text", A_CELL, B_CELL, "--max-drop", "a", expect="--max-drop"),
    C("permutations-negative", A_CELL, B_CELL, "--permutations", "-1", expect="--permutations"),
    C("bootstrap-negative", A_CELL, B_CELL, "--bootstrap", "-1", expect="--bootstrap"),
    C("bootstrap-one", A_CELL, B_CELL, "--bootstrap", "1", expect="--bootstrap is 1: a 95%"),
    C(
        "out-not-ours",
        A_CELL,
        B_CELL,
        "--out",
        "notes.md",
        files={"notes.md": "my notes\n"},
        expect="--out notes.md exists and is not a report compare wrote",
    ),
    C("min-queries-zero", A_CELL, B_CELL, "--min-queries", "0", expect="--min-queries"),
    C("unknown-flag", A_CELL, B_CELL, "--nope", expect="unrecognized arguments: --nope"),
    C("file-not-folder", A_CELL, "x.txt", expect="x.txt", files={"x.txt": "x"}),
    C("folder-without-cell", A_CELL, "empty", expect="empty", files={"empty/.keep": ""}),
    C(
        "metrics-json-broken",
        A_CELL,
        B_CELL,
        expect="metrics.json",
        files={f"{B_CELL}/metrics.json": "{"},
    ),  # fmt: skip
    C("correction-unknown", A_CELL, B_CELL, "--correction", "fdr", expect="fdr"),
    C("format-unknown", A_CELL, B_CELL, "--format", "xml", expect="xml"),
    C("same-folder-twice", A_CELL, A_CELL, expect="the same result is given twice"),
    C("winrate-without-strata", "--winrate", A_CELL, B_CELL, expect="no cluster strata"),
    C(
        "per-query-missing",
        A_CELL,
        B_CELL,
        expect="per_query.csv",
        files={f"{B_CELL}/per_query.csv": None},
    ),  # fmt: skip
    C(
        "permutations-huge",
        A_CELL,
        B_CELL,
        "--permutations",
        "100000000000",
        expect="--permutations must be an integer in [1, 1000000]",
    ),  # fmt: skip
    # ---- harness leaderboard
    L("k-zero", "--k", "0", expect="--k must be a positive integer, got 0"),
    L("k-not-held", "--k", "20", expect="--k 20: no cell holds a metric at K=20 (their cutoffs"),
    L("alpha-two", "--alpha", "2", expect="--alpha"),
    L("corpus-unknown", "--corpus", "nope", expect="nope"),
    L("out-inside-results", "--out", "results/lb", expect="results"),
    L("results-missing", "--results", "nowhere", expect="nowhere"),
    L("unknown-flag", "--nope", expect="unrecognized arguments: --nope"),
    L("tolerance-nan", "--tolerance", "nan", expect="--tolerance must be a finite number"),
    # ---- harness stratify / diagnose / encode
    V("stratify", "strata-k-zero", "strata.k=0", expect="strata.k must be a positive integer"),
    V("stratify", "strata-tau", "strata.tau=2", expect="strata.tau must be a cosine in [-1, 1]"),
    V("stratify", "strata-resolution", "strata.resolution=0", expect="strata.resolution"),
    V("stratify", "extractor-unknown", "extractor=nope", expect="unknown extractor 'nope'"),
    V("stratify", "embedder-unknown", "strata.embedder=nope", expect="nope"),
    V("stratify", "corpus-unknown", "corpus=nope", expect="unknown corpus 'nope'"),
    V("stratify", "flag-typo", "--reprot", expect="--reprot"),
    V("stratify", "strata-resolution-inf", "strata.resolution=inf", expect="finite number > 0"),
    V(
        "stratify",
        "strata-seed-negative",
        "strata.seed=-1",
        expect="strata.seed must be an integer",
    ),
    V("diagnose", "corpus-unknown", "corpus=nope", expect="unknown corpus 'nope'"),
    V("diagnose", "key-typo", "retrieval.dept=3", expect="retrieval.dept"),
    V("encode", "not-dense", "retriever=bm25", expect="bm25"),
    V("encode", "corpus-unknown", "corpus=nope", expect="unknown corpus 'nope'"),
    # ---- the Python API: harness.evaluate's keywords
    A("k-zero", _ev(k=0), "k must hold positive integers, got 0", "evaluate(k=0)"),
    A("k-list-text", _ev(k=["a"]), "k must hold positive integers", "evaluate(k=['a'])"),
    A("k-empty", _ev(k=[]), "k is empty", "evaluate(k=[])"),
    A("k-bool", _ev(k=[True]), "k must hold positive integers", "evaluate(k=[True])"),
    A("metrics-empty", _ev(metrics=[]), "metrics is empty", "evaluate(metrics=[])"),
    A("depth-zero", _ev(depth=0), "depth must be a positive integer", "evaluate(depth=0)"),
    A(
        "depth-below-k",
        _ev(depth=5, k=10),
        "depth=5 is smaller than the largest K",
        "evaluate(depth=5, k=10)",
    ),  # fmt: skip
    A(
        "bootstrap-negative",
        _ev(bootstrap=-1),
        "bootstrap must be an integer >= 0",
        "evaluate(bootstrap=-1)",
    ),  # fmt: skip
    A(
        "confidence-two",
        _ev(confidence=2),
        "confidence must be between 0 and 1",
        "evaluate(confidence=2)",
    ),  # fmt: skip
    A("seed-text", _ev(seed="a"), "seed must be an integer", "evaluate(seed='a')"),
    A(
        "permutations-negative",
        _ev(permutations=-5),
        "permutations must be an integer >= 0",
        "evaluate(permutations=-5)",
    ),  # fmt: skip
    A("min-queries-zero", _ev(min_queries=0), "min_queries", "evaluate(min_queries=0)"),
    A(
        "no-relevant-value",
        _ev(no_relevant="x"),
        "no_relevant is 'x'; valid",
        "evaluate(no_relevant='x')",
    ),  # fmt: skip
    A(
        "unknown-ids-value",
        _ev(unknown_ids="x"),
        "unknown_ids is 'x'; valid",
        "evaluate(unknown_ids='x')",
    ),  # fmt: skip
    A("level-zero", _ev(relevance_level=0), "relevance_level", "evaluate(relevance_level=0)"),
    A("fields-unknown", _ev(fields=["nope"]), "nope", "evaluate(fields=['nope'])"),
    A(
        "relevance-not-a-map",
        _ev(relevance=5),
        "relevance must map settings",
        "evaluate(relevance=5)",
    ),  # fmt: skip
    A(
        "relevance-key-typo",
        _ev(relevance={"grade": {}}),
        "relevance.grade is not a setting",
        "evaluate(relevance={'grade': {}})",
    ),  # fmt: skip
    A(
        "strata-missing-label",
        lambda tmp: harness.evaluate("demo", "bm25", strata={"kind": {"demo_001": "a"}}),
        "no label for query",
        "evaluate(strata={'kind': {one query}})",
    ),  # fmt: skip
    A("strata-file-missing", _ev(strata="nope.json"), "nope.json", "evaluate(strata='nope.json')"),
    A(
        "metric-set-unknown",
        _ev(metrics="nope"),
        "unknown metric 'nope'",
        "evaluate(metrics='nope')",
    ),
    *(
        A(f"metric-{i}", _bad_metric(name), said, f"evaluate(metrics=[{name!r}])")
        for i, (name, said) in enumerate(
            [
                ("NumRett", "did you mean 'NumRet'"),
                ("IPrec@1.5", "between 0 and 1"),
                ("IPrec@", "not of the form name@k"),
                ("ERR@a", "not of the form name@k"),
                ("ERR@0.5", "K must be a positive integer"),
                ("Judged@0", "K must be a positive integer"),
                ("NumQ@10", "reads the whole list"),
                ("gm_map@10", "reads the whole list"),
                ("infAP@10", "reads the whole list"),
                ("SetP@10", "is ir_measures' SetP"),
                ("alpha_nDCG@10", "alpha_nDCG"),
                ("ndcg@10", "could mean two things"),
                ("NDCG@10", "could mean two things"),
                ("mrr", "could mean two things"),
                ("nDCG(rel=2)@10", "does not use a relevance level"),
                ("P(rel=0)@10", "relevance level must be >= 1"),
                ("P(rel=a)@10", "only the parameter rel=N"),
                ("ERR(rel=2)@10", "does not use a relevance level"),
                ("P@-1", "K must be a positive integer"),
                ("P@", "not of the form name@k"),
                ("coverage@0", "K must be a positive integer"),
                ("ndcg_cut_10@5", "unknown metric"),
                ("P_x", "unknown metric"),
                ("iprec_at_recall_1.5", "between 0 and 1"),
                ("", "not of the form name@k"),
            ]
        )
    ),
    A("level-text", _ev(relevance_level="a"), "relevance_level", "evaluate(relevance_level='a')"),
    A("confidence-zero", _ev(confidence=0), "confidence", "evaluate(confidence=0)"),
    A("seed-negative", _ev(seed=-1), "seed must be an integer", "evaluate(seed=-1)"),
    A(
        "grades-negative",
        _ev(relevance={"grades": {"RELATED": -1}}),
        "relevance.grades.RELATED",
        "evaluate(relevance={'grades': {'RELATED': -1}})",
    ),  # fmt: skip
    A(
        "distractor-unknown",
        _ev(relevance={"distractors": ["NOPE"]}),
        "NOPE",
        "evaluate(relevance={'distractors': ['NOPE']})",
    ),  # fmt: skip
    A(
        "utility-without-models",
        _ev(metrics=["dseper@10"]),
        "utility",
        "evaluate(metrics=['dseper@10']) without models",
    ),  # fmt: skip
    A(
        "rag-without-models",
        _ev(metrics=["e2e@10"]),
        "rag.generator.model",
        "evaluate(metrics=['e2e@10']) without models",
    ),  # fmt: skip
    A(
        "rag-not-a-mapping",
        _ev(metrics=["e2e@10"], rag=42),
        "rag must be a shipped config's name",
        "evaluate(rag=42)",
    ),
    A(
        "metrics-config-typo",
        _ev(metrics="garag"),
        "is neither a metric nor a metrics config (did you mean 'garage'?)",
        "evaluate(metrics='garag')",
    ),
    A(
        "rag-config-unknown",
        _ev(metrics=["e2e@10"], rag="garag"),
        "did you mean 'garage'",
        "evaluate(rag='garag')",
    ),
    A("judge-unused", _ev(judge=object()), "judge= is given", "evaluate(judge=obj), no rag metric"),
    A(
        "rag-generator-a-class",
        lambda tmp: harness.evaluate("demo", "bm25", ["e2e@5"], generator=RagStub),
        "the generator passed in is the class RagStub, not an object of it",
        "evaluate(generator=RagStub), the class",
    ),
    A(
        "strata-not-labels",
        lambda tmp: harness.evaluate("demo", "bm25", strata={"kind": 5}),
        "kind",
        "evaluate(strata={'kind': 5})",
    ),  # fmt: skip
    A(
        "strata-wrong-length",
        lambda tmp: harness.evaluate("demo", "bm25", strata={"kind": ["a"]}),
        "kind",
        "evaluate(strata={'kind': ['a']})",
    ),  # fmt: skip
    A("k-float", _ev(k=10.0), "k must be a positive integer or a list", "evaluate(k=10.0)"),
    A("metrics-int", _ev(metrics=5), "metrics must be a metric name", "evaluate(metrics=5)"),
    A(
        "experiment-baseline-name",
        lambda tmp: harness.Experiment(["bm25"], "demo", baseline="nope"),
        "baseline='nope' is not a system's name",
        "Experiment(baseline='nope')",
    ),  # fmt: skip
    A(
        "experiment-baseline-type",
        lambda tmp: harness.Experiment(["bm25"], "demo", baseline=1.5),
        "baseline=1.5 is not the index",
        "Experiment(baseline=1.5)",
    ),  # fmt: skip
    A(
        "experiment-alpha",
        lambda tmp: harness.Experiment(["bm25"], "demo", alpha=5),
        "alpha must be between 0 and 1",
        "Experiment(alpha=5)",
    ),  # fmt: skip
    A(
        "compare-same-twice",
        lambda tmp: (lambda ev: harness.compare(ev, ev))(
            harness.evaluate("demo", "bm25", bootstrap=0)
        ),
        "the same result is given twice",
        "compare(ev, ev)",
    ),  # fmt: skip
    A(
        "compare-permutations",
        lambda tmp: harness.compare(
            harness.evaluate("demo", "bm25", bootstrap=0),
            harness.evaluate("demo", "bm25-simple", bootstrap=0),
            permutations=10**11,
        ),
        "permutations must be an integer in [1, 1000000]",
        "compare(..., permutations=10**11)",
    ),  # fmt: skip
    A(
        "bm25-k1-inf",
        lambda tmp: harness.evaluate("demo", harness.get_retriever("bm25", k1=math.inf)),
        "retriever.k1 must be a finite number",
        "get_retriever('bm25', k1=inf)",
    ),
    # ---- the Python API: runs, benchmarks, retrievers
    A(
        "run-inf",
        _run_dict({"demo_001": {"demo_c001": math.inf}}),
        "chunk 'demo_c001': score inf is not finite; give finite scores",
        "Run.from_dict(score inf)",
    ),  # fmt: skip
    A(
        "run-nan",
        _run_dict({"demo_001": {"demo_c001": math.nan}}),
        "demo_c001",
        "Run.from_dict(score nan)",
    ),  # fmt: skip
    A(
        "run-text-score",
        _run_dict({"demo_001": {"demo_c001": "1.0"}}),
        "chunk 'demo_c001': score '1.0' is text, not a number; give numbers (float('1.0'))",
        "Run.from_dict(score '1.0')",
    ),  # fmt: skip
    A(
        "run-not-a-map",
        lambda tmp: harness.Run.from_dict({"demo_001": ["demo_c001"]}),
        "demo_001",
        "Run.from_dict({qid: [ids]})",
    ),  # fmt: skip
    A(
        "run-trec-missing",
        lambda tmp: harness.Run.from_trec(tmp / "nope.trec"),
        "nope.trec",
        "Run.from_trec(missing file)",
    ),  # fmt: skip
    A(
        "run-trec-bad-line",
        lambda tmp: harness.Run.from_trec(tmp / "r.trec"),
        "r.trec",
        "Run.from_trec(a four-field line)",
        files={"r.trec": "q1 Q0 d1 1\n"},
    ),  # fmt: skip
    A(
        "run-df-columns",
        lambda tmp: harness.Run.from_df(__import__("pandas").DataFrame({"a": [1]})),
        "qid",
        "Run.from_df(no qid/docno/score columns)",
    ),  # fmt: skip
    A(
        "run-df-nan",
        lambda tmp: harness.Run.from_df(
            __import__("pandas").DataFrame({"qid": ["q"], "docno": ["d"], "score": [np.nan]})
        ),
        "score",
        "Run.from_df(a NaN score)",
    ),  # fmt: skip
    A(
        "run-wrong-type",
        lambda tmp: harness.evaluate("demo", 42),
        "int does not implement the retriever protocol",
        "evaluate(run_or_retriever=42)",
    ),  # fmt: skip
    A(
        "retriever-object",
        lambda tmp: harness.evaluate("demo", object()),
        "object",
        "evaluate(an object with neither search nor encode)",
    ),  # fmt: skip
    A(
        "benchmark-unknown",
        lambda tmp: harness.load_benchmark("nope"),
        "neither a corpus config",
        "load_benchmark('nope')",
    ),  # fmt: skip
    A(
        "benchmark-bad-json",
        lambda tmp: harness.load_benchmark(tmp / "x.json"),
        "x.json",
        "load_benchmark(broken JSON)",
        files={"x.json": "{"},
    ),  # fmt: skip
    A(
        "benchmark-split",
        lambda tmp: harness.load_benchmark(tmp / "b", split="dev"),
        "dev",
        "load_benchmark(BEIR folder, split='dev')",
        files=beir(),
    ),  # fmt: skip
    A(
        "irds-without-id",
        lambda tmp: harness.load_benchmark("irds:"),
        "corpus.id",
        "load_benchmark('irds:')",
    ),  # fmt: skip
    A(
        "benchmark-beir-file",
        lambda tmp: harness.load_benchmark(tmp / "b" / "corpus.jsonl"),
        "b/corpus.jsonl is a file of the BEIR folder",
        "load_benchmark('b/corpus.jsonl')",
        files=beir(),
    ),  # fmt: skip
    A(
        "qrels-df-columns",
        lambda tmp: harness.load_benchmark(
            tmp / "b", qrels=__import__("pandas").DataFrame({"a": [1]})
        ),
        "qrels",
        "load_benchmark(qrels=DataFrame without qid/docno/label)",
        files=beir(),
    ),  # fmt: skip
    A(
        "retriever-unknown",
        lambda tmp: harness.get_retriever("bm26"),
        "unknown retriever 'bm26'",
        "get_retriever('bm26')",
    ),  # fmt: skip
    A(
        "retriever-setting",
        lambda tmp: harness.get_retriever("bm25", k2=1),
        "unknown retriever setting 'k2'",
        "get_retriever('bm25', k2=1)",
    ),  # fmt: skip
    A(
        "experiment-names-repeat",
        lambda tmp: harness.Experiment(["bm25", "bm25"], "demo"),
        "system names repeat",
        "Experiment(['bm25', 'bm25'])",
    ),  # fmt: skip
    A(
        "experiment-correction",
        lambda tmp: harness.Experiment(["bm25"], "demo", correction="fdr"),
        "correction",
        "Experiment(correction='fdr')",
    ),  # fmt: skip
    A(
        "experiment-test",
        lambda tmp: harness.Experiment(["bm25"], "demo", test="z"),
        "test",
        "Experiment(test='z')",
    ),  # fmt: skip
    A(
        "experiment-empty", lambda tmp: harness.Experiment([], "demo"), "system", "Experiment([])"
    ),  # fmt: skip
    A(
        "compare-one",
        lambda tmp: harness.compare(tmp / "nope"),
        "compare needs a baseline and at least one candidate",
        "compare(one missing folder)",
    ),  # fmt: skip
    A(
        "compare-other-benchmark",
        lambda tmp: harness.compare(
            harness.evaluate("demo", "bm25", bootstrap=0),
            harness.evaluate(tmp / "x.json", "bm25", bootstrap=0),
        ),
        "benchmark",
        "compare(results of two benchmarks)",
        files={"x.json": redqa()},
    ),  # fmt: skip
]


@pytest.fixture(scope="module")
def good_cells(tmp_path_factory) -> Path:
    """Two good demo cells (bm25, bm25-simple), saved as the command line writes them."""
    root = tmp_path_factory.mktemp("good")
    for name in ("bm25", "bm25-simple"):
        harness.evaluate("demo", name, bootstrap=0).save(root / name)
    return root


def _run(case: Case, tmp_path: Path, capsys) -> tuple[int | None, str]:
    """Exit status and stderr of the case's command, run in this process."""
    from harness.cli.main import main

    capsys.readouterr()
    argv = list(case.args) if case.entry == "harness" else [case.entry, *case.args]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return stop.value.code, capsys.readouterr().err


@pytest.mark.parametrize("case", CASES, ids=[f"{c.entry}:{c.id}" for c in CASES])
def test_bad_input_is_one_clear_error_and_writes_nothing(
    case: Case, tmp_path, good_cells, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    if case.cells:
        for name in ("bm25", "bm25-simple"):
            shutil.copytree(good_cells / name, tmp_path / "results" / "demo" / name)
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is None:  # a file of the copied cells taken away
            path.unlink()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    before = _snapshot(tmp_path)
    if case.entry == "api":
        with pytest.raises(HarnessError) as err:
            case.call(tmp_path)
        message = str(err.value)
        assert "\n" not in message, message
    else:
        code, err = _run(case, tmp_path, capsys)
        assert code == 2, err
        assert err.startswith("error: ") and err.count("\n") == 1, err
        message = err
    assert case.expect in message, message
    assert _snapshot(tmp_path) == before, "the failed call left files behind"
    entry = {"api": "harness.api", "harness": "harness"}.get(case.entry, f"harness {case.entry}")
    log_case(entry, case.id, case.args or (case.what,), case.files, message)


def test_the_campaign_reaches_every_entry_point():
    assert {c.entry for c in CASES} == {
        "harness", "run", "trec_eval", "compare", "leaderboard", "stratify", "diagnose",
        "encode", "api",
    }  # fmt: skip
    assert len({(c.entry, c.id) for c in CASES}) == len(CASES)


def test_the_table_in_the_docs_lists_every_case():
    """docs/bad-input.md (scripts/bad_input_table.py) has a row for every case of both
    campaigns and no other: regenerate it when a case is added."""
    from tests.e2e import test_bad_input as subprocess_cases

    table = (Path(__file__).parents[2] / "docs" / "bad-input.md").read_text(encoding="utf-8")
    rows = {
        tuple(cell.strip().strip("`") for cell in line.split(" | ")[1:3])
        for line in table.splitlines()
        if line.startswith("| ") and line[2:3].isdigit()
    }
    entry = {"api": "harness.api", "harness": "harness"}
    mine = {(entry.get(c.entry, f"harness {c.entry}"), c.id) for c in CASES}
    theirs = {(f"python -m {c.module}", c.id) for c in subprocess_cases.CASES}
    assert rows == mine | theirs
    assert len(rows) >= 350
