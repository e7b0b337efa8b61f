"""End-to-end RAG on a five-query fixture whose answers a stub generator makes hand-computable
(tests/helpers/rag_stub.py): through the CLI and the API, the per-query values, the means, the
coverage types of RARE's Figure 7, a cached rerun that asks the generator nothing and writes
the same bytes, compare's paired test on e2e@K, and bad settings as one line."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from tests.helpers.cli import assert_one_line_error, compare, harness, leaderboard
from tests.helpers.markdown import squeeze
from tests.helpers.rag_stub import FirstLetterJudge, RagStub, same, write_fixture

STUB = "tests.helpers.rag_stub.RagStub"
CORPUS = {
    "p1": {"content": "Paris is the capital of France."},
    "p2": {"content": "The Eiffel Tower stands in Paris."},
    "p3": {"content": "Berlin is the capital of Germany."},
    "p4": {"content": "Rome is the capital of Italy."},
    "p5": {"content": "Madrid is the capital of Spain."},
    "p6": {"content": "Lisbon is the capital of Portugal."},
}
QUERIES = [
    {"query_id": "q1", "question": "What is the capital of France?", "answer": "Paris",
     "gold_chunk_groups": [["p1"]]},
    {"query_id": "q2", "question": "What is the capital of Germany?", "answer": "Berlin",
     "gold_chunk_groups": [["p3"]]},
    {"query_id": "q3", "question": "What is the capital of Spain?", "answer": "Madrid",
     "gold_chunk_groups": [["p5"]]},
    {"query_id": "q4", "question": "What is the capital of Portugal?", "answer": "Lisbon",
     "gold_chunk_groups": [["p6"]]},
    {"query_id": "q5", "question": "What is the capital of Atlantis?", "answerable": False,
     "gold_chunk_groups": []},
]  # fmt: skip
# The stub answers closed-book from its table (France: Paris, right; Germany: Munich, wrong;
# Spain: "Madrid, I think", right; Portugal: Porto, wrong) and with passages by the first
# word of the first one: right for q1 (p1) and q2 (p3), wrong for q3 and q4 (p4, Rome).
RUN = {
    "q1": ["p1", "p2"],
    "q2": ["p3", "p1"],
    "q3": ["p4", "p5"],
    "q4": ["p4", "p2"],
    "q5": ["p2", "p1"],
}
# per query (q1..q4; q5 is unanswerable: NaN): closed_book, e2e@K (both K), PerfRecall@1, @2
CLOSED, E2E = [1, 0, 1, 0], [1, 1, 0, 0]
PR = {1: [1, 1, 0, 0], 2: [1, 1, 1, 0]}
# RARE's coverage types: (n, accuracy) of intersection, retrieval_only, parametric_only,
# complementary, by closed-book correct x PerfRecall@K = 1, over the four answerable queries
TYPES = {
    "1": {"intersection": (1, 1.0), "retrieval_only": (1, 1.0), "parametric_only": (1, 0.0),
          "complementary": (1, 0.0)},
    "2": {"intersection": (2, 0.5), "retrieval_only": (1, 1.0), "parametric_only": (0, None),
          "complementary": (1, 0.0)},
}  # fmt: skip
METRICS = "[perfrecall,e2e,closed_book,rag_gain,parametric_gain]"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path]:
    return write_fixture(tmp_path_factory.mktemp("rag"), "capitals", QUERIES, CORPUS, RUN)


def cli_args(bench: Path, run: Path, cache: Path, *extra: str) -> list[str]:
    return [
        "corpus=redqa",
        f"corpus.path={bench}",
        "corpus.name=capitals",
        "retriever=run_file",
        f"retriever.path={run}",
        "metrics=rag",
        f"metrics.names={METRICS}",
        "metrics.k=[1,2]",
        "stats.bootstrap=0",
        "strata.permutations=0",
        "rag.generator.backend=custom",
        "rag.generator.model=null",
        f"rag.generator.target={STUB}",
        f"rag.cache={cache}",
        *extra,
    ]


def expected_per_query() -> dict[str, list[float]]:
    nan = [math.nan]
    out = {"closed_book": CLOSED + nan}
    for k in (1, 2):
        out[f"e2e@{k}"] = E2E + nan
        out[f"perfrecall@{k}"] = PR[k] + nan
        out[f"rag_gain@{k}"] = [e - c for e, c in zip(E2E, CLOSED)] + nan
        out[f"parametric_gain@{k}"] = [e - p for e, p in zip(E2E, PR[k])] + nan
    return out


@pytest.fixture(scope="module")
def cli_cell(files, tmp_path_factory):
    bench, run = files
    cwd = tmp_path_factory.mktemp("rag-cli")
    cache = cwd / "rag-cache"
    first = harness(*cli_args(bench, run, cache), cwd=cwd)
    cell = cwd / "results" / "capitals" / "stub"
    written = {f: (cell / f).read_bytes() for f in ("metrics.json", "per_query.csv", "run.trec")}
    again = harness(*cli_args(bench, run, cache, "force=true"), cwd=cwd)
    return cwd, cache, cell, first, again, written


def test_cli_values_means_and_coverage_types_are_the_hand_computed_ones(cli_cell):
    _, _, cell, first, _, _ = cli_cell
    with (cell / "per_query.csv").open(encoding="utf-8", newline="") as fh:
        rows = {r["query_id"]: r for r in csv.DictReader(fh)}
    ids = ["q1", "q2", "q3", "q4", "q5"]
    for name, want in expected_per_query().items():
        got = [float(rows[q][name]) if rows[q][name] != "" else math.nan for q in ids]
        assert same(got, [float(x) for x in want]), (name, got, want)
    doc = json.loads((cell / "metrics.json").read_text(encoding="utf-8"))
    mean = doc["results"]["overall"]["mean"]
    assert mean["e2e@1"] == mean["closed_book"] == 0.5 and mean["rag_gain@1"] == 0.0
    assert mean["parametric_gain@1"] == 0.0 and mean["parametric_gain@2"] == -0.25
    for k, types in TYPES.items():
        block = doc["rag"]["coverage_types"][k]
        assert block["queries"] == 4
        assert math.isclose(sum(block[t]["share"] for t in types), 1.0)
        for t, (n, accuracy) in types.items():
            assert (block[t]["n"], block[t]["accuracy"]) == (n, accuracy), (k, t)
            assert block[t]["share"] == n / 4
    # rag_gain = e2e - closed_book in every stratum, as the means of one set of queries
    for strat, by in doc["results"].items():
        for label, entry in by.items() if strat != "overall" else [("", by)]:
            m = entry["mean"]
            if m.get("e2e@1") is not None:
                assert math.isclose(m["rag_gain@1"], m["e2e@1"] - m["closed_book"]), label
    assert doc["config"]["rag"]["generator"]["target"] == STUB
    assert (
        "rag: 5 queries (4 with a reference answer), 12 prompts (0 answers from the cache); "
        "judge lexical: 12 verdicts;" in first.stderr
    ), first.stderr
    assert "e2e@1" in first.stdout and "closed_book" in first.stdout


def test_cached_rerun_asks_the_generator_nothing_and_writes_the_same_bytes(cli_cell):
    _, _, cell, _, again, written = cli_cell
    assert (
        "12 prompts (12 answers from the cache)" in again.stderr and "loaded: none" in again.stderr
    )
    for name, data in written.items():
        assert (cell / name).read_bytes() == data, name


def test_api_gives_the_cli_numbers_and_shares_the_closed_book_answers(cli_cell, files, tmp_path):
    import harness as h

    _, cache, cell, _, _, _ = cli_cell
    bench, run = files
    RagStub.calls.clear()
    names = METRICS.strip("[]").split(",")
    quiet = {"bootstrap": 0, "permutations": 0, "rag": {"cache": str(tmp_path / "c")}}
    ev = h.evaluate(str(bench), h.Run.from_trec(run), names, [1, 2], generator=RagStub(), **quiet)
    for name, want in expected_per_query().items():
        assert same(list(ev.per_query[name]), [float(x) for x in want]), name
    stored = json.loads((cell / "metrics.json").read_text(encoding="utf-8"))
    assert ev.scored.rag == stored["rag"]
    # the lexical judge's report: exact match and token F1 of the answers judged
    # (closed book: "Paris", "Munich", "Madrid, I think", "Porto" -> EM 1/4; F1: Paris 1,
    # "madrid i think" precision 1/3, recall 1 -> 1/2; mean (1 + 1/2) / 4)
    judging = stored["rag"]["judging"]["closed_book"]
    assert judging["answers"] == 4 and judging["unreadable"] == 0
    assert judging["exact_match"] == 0.25 and math.isclose(judging["token_f1"], (1 + 1 / 2) / 4)
    assert "agreement_with_lexical" not in judging
    types = ev.coverage_types  # the same block as a DataFrame, indexed by (K, type)
    assert (
        types.loc[(2, "intersection"), "n"] == 2
        and types.loc[(1, "retrieval_only"), "share"] == 0.25
    )
    # four closed-book prompts and one with the top K per query and K: each asked once
    assert len(RagStub.calls) == 4 + 4 * 2 and len(set(RagStub.calls)) == 12
    # another run on the same cache: the closed-book answers are not asked again
    RagStub.calls.clear()
    other = {q: {d: 1.0} for q, d in (("q1", "p6"), ("q2", "p6"), ("q3", "p6"), ("q4", "p6"))}
    h.evaluate(str(bench), other, ["e2e", "closed_book"], [1], generator=RagStub(), **quiet)
    assert len(RagStub.calls) == 4 and not any("Doc " not in p for p in RagStub.calls)


def test_compare_tests_e2e_pairwise(cli_cell, files):
    cwd, cache, left, _, _, _ = cli_cell
    bench, run = files
    flipped = run.parent / "flipped.trec"
    lines = [
        f"{q} Q0 {d} {r + 1} {2 - r} f" for q, ds in RUN.items() for r, d in enumerate(ds[::-1])
    ]
    flipped.write_text("\n".join(lines) + "\n")
    harness(*cli_args(bench, flipped, cache), cwd=cwd)
    right = cwd / "results" / "capitals" / "flipped"
    res = compare(str(left), str(right), "--metric", "e2e@1", cwd=cwd, check=False)
    # flipped answers q3 only (Madrid first): e2e@1 50 -> 25 over the four answerable queries
    assert res.returncode == 0 and "### e2e@1" in res.stdout, res.stderr
    assert "| overall | 4 | 50.00 | 25.00 | -25.00 |" in squeeze(res.stdout)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("rag.judge=oracle", "rag.judge is 'oracle'; valid: lexical"),
        ("rag.temperature=-1", "rag.temperature must be >= 0"),
        ("rag.max_new_tokens=0", "rag.max_new_tokens must be an integer >= 1"),
        ("rag.prompt=nothing", "rag.prompt lacks {passages}"),
    ],
)
def test_bad_settings_are_one_line(files, tmp_path, override, message):
    bench, run = files
    res = harness(*cli_args(bench, run, tmp_path / "c", override), cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, message)


def test_rag_metric_without_the_section_names_the_fix(files, tmp_path):
    bench, run = files
    args = [a for a in cli_args(bench, run, tmp_path / "c") if not a.startswith("rag.")]
    args[args.index("metrics=rag")] = "metrics=rare"
    res = harness(*args, cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, "e2e@1 needs a generator: add +rag=e2e")


def test_tiny_transformers_generator_greedy_end_to_end(files, tiny_models, tmp_path):
    """The hf backend on a tiny random-weight causal LM, greedy: through the CLI and the API
    the same per-query values (each 0, 1 or NaN for q5); the API's rerun builds no model."""
    import harness as h

    bench, run = files
    gen, _ = tiny_models
    cache = tmp_path / "cache"
    args = [a for a in cli_args(bench, run, cache) if not a.startswith("rag.generator.")]
    res = harness(
        *args,
        "rag.generator.backend=hf",
        f"rag.generator.model={gen}",
        "rag.generator.device=cpu",
        "rag.max_new_tokens=4",
        cwd=tmp_path,
    )
    assert "12 prompts (0 answers from the cache)" in res.stderr, res.stderr
    with (tmp_path / "results/capitals/stub/per_query.csv").open(encoding="utf-8") as fh:
        rows = {r["query_id"]: r for r in csv.DictReader(fh)}
    section = {"generator": {"backend": "hf", "model": str(gen), "device": "cpu"}}
    section.update(max_new_tokens=4, cache=str(cache))
    names = METRICS.strip("[]").split(",")
    quiet = {"bootstrap": 0, "permutations": 0, "rag": section}
    ev = h.evaluate(str(bench), h.Run.from_trec(run), names, [1, 2], **quiet)
    assert ev.notes and any(
        "12 answers from the cache" in n and "loaded: none" in n for n in ev.notes
    )
    for name in ("e2e@1", "e2e@2", "closed_book"):
        got = list(ev.per_query[name])
        assert all(v in (0.0, 1.0) for v in got[:4]) and math.isnan(got[4]), (name, got)
        assert [float(rows[q][name]) for q in ("q1", "q2", "q3", "q4")] == got[:4], name


def test_a_benchmark_without_answers_is_one_line(files, tmp_path):
    _, run = files
    bare = tmp_path / "bare.json"
    queries = [{k: v for k, v in q.items() if k != "answer"} for q in QUERIES]
    bare.write_text(json.dumps({"metadata": {}, "queries": queries, "corpus": CORPUS}))
    res = harness(*cli_args(bare, run, tmp_path / "c"), cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, "has no answerable query with a reference answer")


def test_leaderboard_table4_and_figure7(cli_cell, files):
    """The rag_<corpus> table in Table 4's shape (both cells and their average) and the
    coverage-type plot, from the cells the CLI wrote (the flipped run from the compare test
    or written here)."""
    cwd, cache, _, _, _, _ = cli_cell
    bench, run = files
    flipped = run.parent / "flipped.trec"
    if not (cwd / "results/capitals/flipped").is_dir():
        flipped.write_text(
            "".join(
                f"{q} Q0 {d} {r + 1} {2 - r} f\n"
                for q, ds in RUN.items()
                for r, d in enumerate(ds[::-1])
            )  # fmt: skip
        )
        harness(*cli_args(bench, flipped, cache), cwd=cwd)
    board = leaderboard("--no-significance", cwd=cwd)
    assert board.returncode == 0, board.stderr
    lines = squeeze((cwd / "leaderboard" / "rag_capitals.md").read_text(encoding="utf-8"))
    lines = lines.splitlines()
    head = "| Retriever | @1 E2E | @1 Param-only | @1 RAG Gain | @1 PerfRecall | @1 Param. Gain |"
    assert lines[2].startswith(head), lines
    # flipped: e2e@1 [0, 0, 1, 0], PerfRecall@1 [0, 0, 1, 0]; stub as in the tests above
    rows = {line.split("|")[1].strip(): line for line in lines if line.startswith("| ")}
    # bold: the best of each column (ties both bold); the average row is never bold
    assert rows["flipped"].startswith("| flipped | 25.00 | **50.00** | -25.00 | 25.00 | **0.00** |")
    assert rows["stub"].startswith(
        "| stub | **50.00** | **50.00** | **0.00** | **50.00** | **0.00** |"
    )
    assert rows["Average (2)"].startswith("| Average (2) | 37.50 | 50.00 | -12.50 | 37.50 | 0.00 |")
    assert any(line.startswith("generator: " + STUB) for line in lines)
    plots = cwd / "leaderboard" / "plots"
    assert not (plots / "coverage_types_at_10.png").exists()  # no cell has K = 10: no plot
    assert leaderboard("--no-significance", "--k", "2", cwd=cwd).returncode == 0
    assert (plots / "coverage_types_at_2.png").is_file()
    assert (plots / "coverage_types_at_2.svg").is_file()


def test_a_custom_judge_counts_unreadable_verdicts_and_agrees_with_lexical(files, tmp_path):
    """Verdicts of a judge handed in: a None is NaN and counted per metric, never guessed;
    its agreement with the lexical judge is reported per metric."""
    import harness as h

    bench, run = files
    quiet = {"bootstrap": 0, "permutations": 0, "rag": {"cache": str(tmp_path / "c")}}
    ev = h.evaluate(str(bench), h.Run.from_trec(run), ["e2e", "closed_book"], [1],
                    generator=RagStub(), judge=FirstLetterJudge(), **quiet)  # fmt: skip
    # closed book: Paris (P=P yes), Munich (M vs B no), "Madrid, I think" (yes), Porto (None)
    assert same(list(ev.per_query["closed_book"]), [1.0, 0.0, 1.0, math.nan, math.nan])
    judging = ev.scored.rag["judging"]
    assert judging["closed_book"]["unreadable"] == 1 and judging["e2e@1"]["unreadable"] == 1
    # e2e@1 answers Paris, Berlin, Rome (R vs M: no), Rome: judge [1, 1, 0, None], lexical
    # [1, 1, 0, 0]: 3 of 3 readable agree, kappa 1
    agree = judging["e2e@1"]["agreement_with_lexical"]
    assert agree["n"] == 3 and agree["share"] == 1.0 and agree["kappa"] == 1.0
    assert any("2 unreadable (closed_book: 1, e2e@1: 1; NaN)" in n for n in ev.notes)
    recorded = ev.config["rag"]["judge_object"]  # the object, by its type and identity
    assert recorded["object"].endswith("FirstLetterJudge")
    assert recorded["identity"] == {"stub": "first-letter"}
    # a rerun reads every verdict from the cache: the judge is asked nothing
    FirstLetterJudge.calls.clear()
    h.evaluate(str(bench), h.Run.from_trec(run), ["e2e", "closed_book"], [1],
               generator=RagStub(), judge=FirstLetterJudge(), **quiet)  # fmt: skip
    assert FirstLetterJudge.calls == []


def test_a_rescore_for_other_metrics_keeps_the_rag_values_and_block(cli_cell, files, tmp_path):
    """A later run asking only for other metrics rescores the stored ranked list without any
    model: the rag values, the settings they were made with and the rag block stay."""
    import shutil

    cwd, _, cell, _, _, _ = cli_cell
    bench, run = files
    shutil.copytree(cwd / "results", tmp_path / "results")
    before = json.loads((cell / "metrics.json").read_text(encoding="utf-8"))
    args = [a for a in cli_args(bench, run, tmp_path / "none") if not a.startswith("rag.")]
    args[args.index("metrics=rag")] = "metrics=rare"
    args[args.index(f"metrics.names={METRICS}")] = "metrics.names=[group_ndcg]"
    res = harness(*args, cwd=tmp_path)
    assert "scored its stored ranked list" in res.stderr and "rag:" not in res.stderr
    doc = json.loads((tmp_path / "results/capitals/stub/metrics.json").read_text("utf-8"))
    assert "group_ndcg@1" in doc["metrics"] and "e2e@1" in doc["metrics"]
    assert doc["rag"] == before["rag"] and doc["config"]["rag"] == before["config"]["rag"]


def test_a_custom_judge_class_from_the_command_line(files, tmp_path):
    bench, run = files
    res = harness(
        *cli_args(bench, run, tmp_path / "c"),
        "rag.judge=custom",
        "rag.judge_model.target=tests.helpers.rag_stub.FirstLetterJudge",
        cwd=tmp_path,
    )
    assert "3 unreadable (closed_book: 1, e2e@1: 1, e2e@2: 1; NaN)" in res.stderr
    doc = json.loads((tmp_path / "results/capitals/stub/metrics.json").read_text("utf-8"))
    assert doc["rag"]["judging"]["e2e@1"]["agreement_with_lexical"]["kappa"] == 1.0
    # the leaderboard's default K (10) is not held: no plot, and a note saying which K is
    board = leaderboard("--no-significance", "--table", "rag", cwd=tmp_path)
    assert "no coverage-types plot at K = 10 for capitals" in board.stderr
    assert "--k 2 draws it" in board.stderr


def test_report_full_prints_the_coverage_types_of_the_cutoffs_shown(cli_cell, files):
    """report=full prints RARE's coverage types (Figure 7) per K asked for: n, share and E2E
    accuracy within each type; a run asking for @2 of a cell holding @1 and @2 shows @2."""
    cwd, cache, _, _, _, _ = cli_cell
    bench, run = files
    for ks, shown in (("[1,2]", TYPES), ("[2]", {"2": TYPES["2"]})):
        res = harness(*cli_args(bench, run, cache, f"metrics.k={ks}", "report=full"), cwd=cwd)
        assert res.returncode == 0 and "is up to date" in res.stderr, res.stderr
        names = set(TYPES["1"])
        rows = [r for r in map(str.split, res.stdout.splitlines()) if r[1:2] and r[1] in names]
        want = [
            [f"@{k}", t, str(n), f"{100 * n / 4:.2f}", "-" if acc is None else f"{100 * acc:.2f}"]
            for k, types in shown.items()
            for t, (n, acc) in types.items()
        ]
        assert rows == want, res.stdout


def test_the_rag_table_says_when_verdicts_were_unknown_on_one_side():
    from types import SimpleNamespace

    import numpy as np

    from harness.report.leaderboard.rag import _uneven

    def cell(closed, e2e):
        return SimpleNamespace(values={"closed_book": np.array(closed), "e2e@1": np.array(e2e)})

    nan = math.nan
    pair = [("closed_book", "e2e@1")]
    even, odd = cell([1.0, nan], [0.0, nan]), cell([1.0, nan], [0.0, 1.0])
    assert not _uneven({"a": even}, pair)
    assert _uneven({"a": even, "b": odd}, pair)


def test_the_rag_table_says_when_perfrecall_and_e2e_cover_other_queries(files, tmp_path):
    """A query with gold groups and no reference answer has a PerfRecall and no E2E: the
    table's note says why Param. Gain is not E2E - PerfRecall there."""
    bench, run = files
    data = json.loads(bench.read_text("utf-8"))
    for key in ("answer", "answers"):
        data["queries"][0].pop(key, None)
    odd = tmp_path / "capitals.json"
    odd.write_text(json.dumps(data), encoding="utf-8")
    done = harness(*cli_args(odd, run, tmp_path / "c"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    board = leaderboard("--no-significance", "--table", "rag", cwd=tmp_path)
    assert board.returncode == 0, board.stderr
    text = squeeze((tmp_path / "leaderboard" / "rag_capitals.md").read_text(encoding="utf-8"))
    assert "so Param. Gain, the mean of the per-query gains where both are known" in text
    assert "Some verdicts could not be read" not in text


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("raise", "the generator (Broken.sample) failed: RuntimeError: CUDA error"),
        ("none-text", "the generator returned (None, [0.0]) as an answer"),
        ("bare-string", "the generator returned 'an answer' as an answer"),
    ],
)
def test_a_broken_generator_is_one_line(files, tmp_path, mode, message):
    bench, run = files
    args = [a for a in cli_args(bench, run, tmp_path / "c") if "generator.target" not in a]
    extra = [
        "rag.generator.target=tests.helpers.rag_stub.Broken",
        f"+rag.generator.options.mode={mode}",
    ]
    res = harness(*args, *extra, cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, message)


def test_an_llm_judge_that_reads_nothing_is_an_error(files, tmp_path):
    """The llm judge pointed at a generator that never says CORRECT or INCORRECT (the stub
    answers with a passage's first word): every verdict unreadable is an error, not a table
    of dashes."""
    bench, run = files
    res = harness(
        *cli_args(bench, run, tmp_path / "c"),
        "rag.judge=llm",
        "rag.judge_model.backend=custom",
        f"rag.judge_model.target={STUB}",
        cwd=tmp_path,
        check=False,
    )
    assert_one_line_error(res, tmp_path, "the judge gave no readable verdict for any of the 12")


def test_compare_checks_rag_settings_only_for_rag_metrics(cli_cell, files):
    cwd, cache, left, _, _, _ = cli_cell
    bench, run = files
    args = cli_args(bench, run, cache, "retriever.name=v2", "+rag.generator.options.version=2")
    harness(*args, cwd=cwd)
    right = cwd / "results" / "capitals" / "v2"
    ok = compare(str(left), str(right), "--metric", "perfrecall@1", cwd=cwd, check=False)
    assert ok.returncode == 0, ok.stderr
    refused = compare(str(left), str(right), "--metric", "e2e@1", cwd=cwd, check=False)
    assert refused.returncode == 2
    assert (
        'their rag settings differ (rag.generator.options: none vs {"version": 2})'
        in refused.stderr
    )


def test_api_inputs_for_the_rag_section_are_checked(files):
    import harness as h
    from harness.core.errors import ConfigError

    bench, run = files
    trec = h.Run.from_trec(run)
    with pytest.raises(ConfigError, match="rag must be a shipped config's name"):
        h.evaluate(str(bench), trec, ["e2e"], [1], rag=["e2e"])
    with pytest.raises(ConfigError, match="rag= is given but no rag metric is asked for"):
        h.evaluate(str(bench), trec, ["perfrecall"], [1], rag="garage")
    with pytest.raises(ConfigError, match="rag= is given but no rag metric is asked for"):
        h.evaluate(str(bench), trec, ["perfrecall"], [1], rag={"judge": "nli"})
    with pytest.raises(ConfigError, match="judge= is given but no metric asked for uses one"):
        h.evaluate(str(bench), trec, ["perfrecall"], [1], judge=FirstLetterJudge())


def test_deflection_and_clarification_per_query_and_per_answerable_stratum(files, tmp_path):
    """deflected@K and clarified@K are read from the answer with the top K on every query,
    answerable or not: their means on answerable=no are GaRAGe's deflection true-positive
    rate and CRUMQs' unanswered / clarification ratios, on answerable=yes the false
    positives. The stub declines the Atlantis question (q5, unanswerable) with passages and,
    with two passages, asks which capital the Portugal question (q4) means."""
    import harness as h

    bench, run = files
    quiet = {"bootstrap": 0, "permutations": 0, "rag": {"cache": str(tmp_path / "c")}}
    ev = h.evaluate(str(bench), h.Run.from_trec(run), ["deflected", "clarified"], [1, 2],
                    generator=RagStub(), **quiet)  # fmt: skip
    pq = ev.per_query
    assert list(pq["deflected@1"]) == [0, 0, 0, 0, 1] == list(pq["deflected@2"])
    assert list(pq["clarified@1"]) == [0, 0, 0, 0, 0]
    assert list(pq["clarified@2"]) == [0, 0, 0, 1, 0]
    means = ev.means
    assert means.loc["answerable=no", "deflected@1"] == 1.0  # true positives
    assert means.loc["answerable=yes", "deflected@1"] == 0.0  # false positives
    assert means.loc["answerable=yes", "clarified@2"] == 0.25
    # no reference answer is needed: a benchmark without any scores them too
    bare = tmp_path / "bare.json"
    queries = [{k: v for k, v in q.items() if k != "answer"} for q in QUERIES]
    bare.write_text(json.dumps({"metadata": {}, "queries": queries, "corpus": CORPUS}))
    again = h.evaluate(str(bare), h.Run.from_trec(run), ["deflected"], [1],
                       generator=RagStub(), **quiet)  # fmt: skip
    assert list(again.per_query["deflected@1"]) == [0, 0, 0, 0, 1]
