"""GaRAGe's measures of end-to-end RAG (docs/rag.md#garage) on a four-query fixture whose
answers and judge labels follow rules a reader can apply by hand (tests/helpers/rag_stub.py:
GarageStub, GarageJudge): eligibility, unadjusted factuality, factuality, uRAF and RAF with
an unreadable label kept unknown (never guessed) and support claimed from no passage not
believed; attribution precision, recall and F1 from [n] markers; deflection by the judge with
its agreement with the phrase detector and GaRAGe's true/false-positive split; the CLI, the
API and the judge checks."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from tests.helpers.cli import assert_one_line_error, harness, leaderboard
from tests.helpers.markdown import squeeze
from tests.helpers.rag_stub import GarageJudge, GarageStub, same, write_fixture

CORPUS = {
    "p1": {"content": "Paris is the capital of France."},
    "p2": {"content": "The Eiffel Tower stands in Paris."},
    "p3": {"content": "Berlin is the capital of Germany."},
    "p4": {"content": "Rome is the capital of Italy."},
    "p5": {"content": "Madrid is the capital of Spain."},
}
QUERIES = [
    {"query_id": "q1", "question": "What is the capital of France?", "answer": "Paris",
     "gold_chunk_groups": [["p1"]], "citations": ["p1"]},
    {"query_id": "q2", "question": "What is the capital of Germany?", "answer": "Berlin",
     "gold_chunk_groups": [["p3"]], "citations": ["p3"]},
    {"query_id": "q3", "question": "What is the capital of Spain?", "answer": "Madrid",
     "gold_chunk_groups": [["p5"]], "citations": ["p5"]},
    {"query_id": "q4", "question": "What is the capital of Atlantis?", "answerable": False,
     "gold_chunk_groups": []},
]  # fmt: skip
RUN = {"q1": ["p2", "p1"], "q2": ["p3", "p4"], "q3": ["p4", "p2"], "q4": ["p1", "p2"]}
NAN = math.nan
# By hand. The answers (GarageStub), at K=1 and K=2:
#   q1: "The Eiffel Tower stands in Paris [1]." (+ " Paris is the capital of France [2].")
#   q2: "Berlin is the capital of Germany [1]." (+ " Rome is the capital of Italy [2].")
#       + " Enjoy your trip!"
#   q3: "Rome is the capital of Italy [1]." (+ " The Eiffel Tower stands in Paris [2].")
#       + " Spain is in Europe."
#   q4: declines (unanswerable: every GaRAGe value and attribution NaN).
# eligibility: q1 none; q2 minor at 1, unreadable at 2 (Berlin and Rome); q3 major (no Madrid).
# ufactuality (every shown passage may support): q1, q2 every sentence supported or no_rad;
#   q3 "Spain is in Europe." unsupported.
# uraf (only the gold passage may support): q1@1 has none shown, its Eiffel sentence
#   unreadable -> unknown; q1@2 the Eiffel sentence is not in p1 -> 0; q2@1 Berlin in p3,
#   Enjoy no_rad -> 1; q2@2 Rome not in p3 -> 0; q3: nothing relevant shown, the judge claims
#   Rome "supported" from no passage, taken as unsupported -> 0.
# factuality, raf: eligible AND that (0 wins over unknown).
# attribution: cited [n] -> the n-th passage shown, against the query's citations.
WANT = {
    "eligibility@1": [1, 1, 0, NAN], "eligibility@2": [1, NAN, 0, NAN],
    "ufactuality@1": [1, 1, 0, NAN], "ufactuality@2": [1, 1, 0, NAN],
    "factuality@1": [1, 1, 0, NAN], "factuality@2": [1, NAN, 0, NAN],
    "uraf@1": [NAN, 1, 0, NAN], "uraf@2": [0, 0, 0, NAN],
    "raf@1": [NAN, 1, 0, NAN], "raf@2": [0, 0, 0, NAN],
    "attribution_precision@1": [0, 1, 0, NAN], "attribution_precision@2": [0.5, 0.5, 0, NAN],
    "attribution_recall@1": [0, 1, 0, NAN], "attribution_recall@2": [1, 1, 0, NAN],
    "attribution_f1@1": [0, 1, 0, NAN], "attribution_f1@2": [2 / 3, 2 / 3, 0, NAN],
    "deflected@1": [0, 0, 0, 1], "deflected@2": [0, 0, 0, 1],
}  # fmt: skip
FAMILIES = (
    "[eligibility,ufactuality,factuality,uraf,raf,attribution_precision,attribution_recall,"
    "attribution_f1,deflected]"
)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path]:
    return write_fixture(tmp_path_factory.mktemp("garage"), "garage", QUERIES, CORPUS, RUN)


def cli_args(bench: Path, run: Path, cache: Path, *extra: str) -> list[str]:
    return [
        "corpus=redqa",
        f"corpus.path={bench}",
        "corpus.name=garage",
        "retriever=run_file",
        f"retriever.path={run}",
        "+rag=e2e",
        f"metrics.names={FAMILIES}",
        "metrics.k=[1,2]",
        "stats.bootstrap=0",
        "strata.permutations=0",
        "rag.generator.backend=custom",
        "rag.generator.model=null",
        "rag.generator.target=tests.helpers.rag_stub.GarageStub",
        "rag.judge=custom",
        "rag.judge_model.target=tests.helpers.rag_stub.GarageJudge",
        f"rag.cache={cache}",
        *extra,
    ]


@pytest.fixture(scope="module")
def cli_cell(files, tmp_path_factory):
    bench, run = files
    cwd = tmp_path_factory.mktemp("garage-cli")
    done = harness(*cli_args(bench, run, cwd / "cache"), cwd=cwd)
    return done, cwd / "results" / "garage" / "stub"


def test_cli_values_are_the_hand_computed_ones(cli_cell):
    done, cell = cli_cell
    assert done.returncode == 0, done.stderr
    with (cell / "per_query.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["query_id"] for r in rows] == ["q1", "q2", "q3", "q4"]
    for name, want in WANT.items():
        got = [float(r[name]) if r[name] else NAN for r in rows]
        assert same(got, want), (name, got)
    overall = json.loads((cell / "metrics.json").read_text())["results"]["overall"]["mean"]
    for name, want in WANT.items():
        known = [x for x in want if not math.isnan(x)]
        assert math.isclose(overall[name], sum(known) / len(known)), name


def test_the_judging_report_counts_labels_unreadable_and_unbelieved_support(cli_cell):
    done, cell = cli_cell
    block = json.loads((cell / "metrics.json").read_text())["rag"]
    judging = block["judging"]
    assert judging["eligibility@2"] == {
        "answers": 3, "unreadable": 1, "labels": {"none": 1, "minor": 0, "major": 1},
    }  # fmt: skip
    # at K=1: q1 one sentence, q2 two (Berlin, Enjoy), q3 two (Rome, Spain)
    assert judging["ufactuality@1"] == {
        "answers": 3, "sentences": 5, "unreadable": 0,
        "labels": {"supported": 3, "unsupported": 1, "contradictory": 0, "no_rad": 1},
        "supported_without_passage": 0,
    }  # fmt: skip
    assert judging["uraf@1"] == {
        "answers": 3, "sentences": 5, "unreadable": 1,
        "labels": {"supported": 1, "unsupported": 2, "contradictory": 0, "no_rad": 1},
        "supported_without_passage": 1,
    }  # fmt: skip
    # the judge's deflection agrees with the phrase detector on all four answers
    agree = judging["deflection@1"]["agreement_with_phrases"]["declines"]
    assert (judging["deflection@1"]["unreadable"], agree["n"], agree["share"]) == (0, 4, 1.0)
    # GaRAGe's split: the top K held no gold passage (q1@1, q3, q4) or some
    split = {k: {side: (v["n"], v["deflected"]) for side, v in by.items()}
             for k, by in block["deflection"].items()}  # fmt: skip
    assert split == {
        "1": {"insufficient": (3, 1 / 3), "sufficient": (1, 0.0)},
        "2": {"insufficient": (2, 0.5), "sufficient": (2, 0.0)},
    }
    # the cost line counts the unreadable labels, per metric
    assert "3 unreadable (eligibility@2: 1, uraf@1: 1, uraf@2: 1; NaN)" in done.stderr


def test_api_gives_the_same_values_with_objects_handed_in(files, tmp_path):
    import harness

    bench, run = files
    names = [f"{f}@{k}" for f in FAMILIES.strip("[]").split(",") for k in (1, 2)]
    result = harness.evaluate(
        str(bench),
        harness.Run.from_trec(run),
        metrics=names,
        rag={"cache": str(tmp_path / "cache")},
        generator=GarageStub(),
        judge=GarageJudge(),
    )
    frame = result.per_query
    for name, want in WANT.items():
        assert same(list(frame[name]), want), name


def test_a_judge_that_cannot_read_eligibility_is_one_line_before_anything_runs(files, tmp_path):
    bench, run = files
    done = harness(
        *cli_args(bench, run, tmp_path / "cache", "rag.judge=lexical"), cwd=tmp_path, check=False
    )
    assert_one_line_error(done, tmp_path, "eligibility@1 needs a judge that reads eligibility")
    assert "rag.judge=llm" in done.stderr


def test_a_benchmark_without_citations_has_no_attribution(files, tmp_path):
    bench, run = files
    data = json.loads(bench.read_text())
    for q in data["queries"]:
        q.pop("citations", None)
    bare = tmp_path / "garage.json"
    bare.write_text(json.dumps(data))
    done = harness(
        *cli_args(bare, run, tmp_path / "cache", "metrics.names=[attribution_f1]"),
        cwd=tmp_path,
        check=False,
    )
    assert_one_line_error(done, tmp_path, "no query listing the passages its reference answer")


def test_leaderboard_garage_table(cli_cell):
    """The garage_<corpus> table in GaRAGe's Table 2 shape, with attribution F1 since the
    cell holds it: the means of WANT in percent."""
    _, cell = cli_cell
    cwd = cell.parent.parent.parent
    board = leaderboard("--no-significance", "--table", "rag", cwd=cwd)
    assert board.returncode == 0, board.stderr
    lines = squeeze((cwd / "leaderboard" / "garage_garage.md").read_text(encoding="utf-8"))
    lines = lines.splitlines()
    head = (
        "| Retriever | @1 Eligibility | @1 Unadj. Fact. | @1 Factuality | @1 uRAF | @1 RAF "
        "| @1 Attr. F1 | @2 Eligibility |"
    )
    assert lines[2].startswith(head), lines
    rows = {line.split("|")[1].strip(): line for line in lines if line.startswith("| ")}
    # @1: eligibility 2/3, ufactuality 2/3, factuality 2/3, uRAF 1/2, RAF 1/2, F1 1/3
    assert (
        rows["stub"]
        .replace("**", "")
        .startswith(  # one row: every value is the best
            "| stub | 66.67 | 66.67 | 66.67 | 50.00 | 50.00 | 33.33 | 50.00 |"
        )
    ), rows["stub"]
    assert not (cwd / "leaderboard" / "rag_garage.md").exists()  # no e2e@K: no Table 4


def test_a_forced_rerun_writes_the_same_bytes(cli_cell, files):
    """force=true recomputes the cell from the cached answers and labels: the same files,
    columns in the order asked for."""
    _, cell = cli_cell
    bench, run = files
    cwd = cell.parent.parent.parent
    before = {f: (cell / f).read_bytes() for f in ("metrics.json", "per_query.csv")}
    again = harness(*cli_args(bench, run, cwd / "cache", "force=true", "report=full"), cwd=cwd)
    assert "models loaded: none" in again.stderr
    assert {f: (cell / f).read_bytes() for f in before} == before
    # report=full prints GaRAGe's deflection split and what the judge read
    lines = again.stdout.splitlines()
    assert any(line.split() == ["@1", "33.33", "(3)", "0.00", "(1)"] for line in lines)
    assert any(line.startswith("uraf@1 ") and "1 'supported' with no passage" in line
               for line in lines)  # fmt: skip


def test_report_full_shows_the_cutoffs_asked_for(cli_cell, files):
    """The cell holds @1 and @2; a run that asks for @2 is shown from disk, and report=full
    prints the deflection split and the judging rows of @2 alone."""
    _, cell = cli_cell
    bench, run = files
    cwd = cell.parent.parent.parent
    again = harness(*cli_args(bench, run, cwd / "cache", "metrics.k=[2]", "report=full"), cwd=cwd)
    assert again.returncode == 0, again.stderr
    assert "is up to date" in again.stderr
    rows = [line.split()[0] for line in again.stdout.splitlines() if "@" in line.split(" ")[0]]
    assert "@2" in rows and "uraf@2" in rows and "deflection@2" in rows, rows
    assert not [r for r in rows if r.endswith("@1")], rows


class OnlyGarage(GarageJudge):
    """GaRAGe's questions, no verdict: enough for eligibility, not for e2e."""

    judge = None


def test_a_judge_for_garage_alone_and_the_attribution_notes(files, tmp_path):
    import harness as h
    from harness.core.errors import HarnessError

    bench, run = files
    trec, cache = h.Run.from_trec(run), {"cache": str(tmp_path / "cache")}
    ev = h.evaluate(str(bench), trec, ["eligibility@1"], rag=cache, generator=GarageStub(),
                    judge=OnlyGarage())  # fmt: skip
    assert same(list(ev.per_query["eligibility@1"]), WANT["eligibility@1"])
    with pytest.raises(HarnessError, match=r"e2e@1 needs a judge with judge\(\.\.\.\)"):
        h.evaluate(str(bench), trec, ["e2e@1"], rag=cache, generator=GarageStub(),
                   judge=OnlyGarage())  # fmt: skip
    # a generator that cites nothing (the e2e prompt asks for no citations), and a
    # reference citation the corpus lacks: each is a note, the values stay as computed
    data = json.loads(bench.read_text())
    data["queries"][0]["citations"] = ["p1", "gone"]
    odd = tmp_path / "garage.json"
    odd.write_text(json.dumps(data))
    from tests.helpers.rag_stub import RagStub

    ev = h.evaluate(str(odd), trec, ["attribution_f1@1"], rag=cache, generator=RagStub())
    notes = " ".join(ev.notes)
    assert "none of the 3 answers scored for attribution cites a passage" in notes
    assert "1 chunk id(s) the reference answers cite are not in the corpus (e.g. 'gone')" in notes
    assert list(ev.per_query["attribution_f1@1"])[:3] == [0.0, 0.0, 0.0]
