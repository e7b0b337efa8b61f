"""End to end on the GaRAGe/CRUMQs-like fixture (scripts/make_protocols_fixture.py): the CLI
and the API give the same numbers, every section lands in metrics.json, the terminal and the
leaderboard, and bad values in the new keys are one line with exit 2."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import assert_one_line_error, harness, leaderboard
from tests.helpers.markdown import squeeze

FIELDS = "strata.fields=[dynamism,complexity,popularity,source,question_words]"


def cli_args(path: Path, *extra: str) -> list[str]:
    return [
        "corpus=redqa",
        f"corpus.path={path}",
        "corpus.name=protocols",
        "metrics=protocols",
        FIELDS,
        "stats.bootstrap=200",
        "strata.permutations=200",
        *extra,
    ]


@pytest.fixture(scope="module")
def cli_run(protocols_benchmark_path, tmp_path_factory):
    cwd = tmp_path_factory.mktemp("cli")
    res = harness(*cli_args(protocols_benchmark_path), cwd=cwd)
    cell = cwd / "results" / "protocols" / "bm25"
    return cwd, res, cell, json.loads((cell / "metrics.json").read_text(encoding="utf-8"))


def test_every_section_in_metrics_json(cli_run):
    _, _, _, doc = cli_run
    results = doc["results"]
    assert results["overall"]["n"] == 60
    assert {k: v["n"] for k, v in results["answerable"].items()} == {
        "yes": 40,
        "partial": 10,
        "no": 10,
    }
    for strat in ("grounding", "dynamism", "complexity", "popularity", "source", "question_words"):
        assert strat in results and strat in doc["variance"]["coverage@10"]["by"]
    assert set(results["question_words"]) == {"low", "mid", "high"}
    assert set(results["grounding"]) <= {"<33%", "33-66%", ">66%", "n/a"}
    # unanswerable queries: recall-type metrics NaN and excluded; outdated@K still defined
    no = results["answerable"]["no"]
    assert no["mean"]["coverage@10"] is None and no["excluded"]["coverage@10"] == 10
    assert no["mean"]["answer_recall@10"] is None and no["mean"]["outdated@10"] is not None
    assert results["overall"]["excluded"]["coverage@10"] == 10
    for name in ("answer_recall@10", "answer_rank", "outdated@10"):
        assert name in doc["metrics"] and results["overall"]["mean"][name] is not None
    block = doc["protocols"]["deflection"]
    assert block["n"] == {"yes": 40, "partial": 10, "no": 10}
    assert 0 <= block["auroc"]["top1"] <= 1 and "top10_mean" in block["auroc"]
    assert block["distractors"]["top10"]["n"] >= 1
    assert doc["config"]["relevance"]["outdated_for"] == ["fast"]
    assert doc["benchmark"]["metadata"]["relevance"]["outdated_zeroed"] > 0


def test_terminal_shows_the_sections(cli_run, protocols_benchmark_path):
    cwd, res, _, _ = cli_run
    out = res.stdout
    assert "answerable=partial" in out and "grounding=>66%" in out and "dynamism=fast" in out
    assert "Deflection" not in out  # the short report: the main table and where the rest is
    assert max(len(line) for line in out.splitlines()) < 200  # split per stratification
    assert "outdated passages" in res.stderr  # the note on fast questions' emptied groups
    full = harness(*cli_args(protocols_benchmark_path), "report=full", cwd=cwd).stdout
    assert "Deflection (retrieval side)" in full and "AUROC" in full


def test_per_query_values_follow_the_protocols(cli_run, protocols_benchmark_path):
    _, _, cell, _ = cli_run
    data = json.loads(protocols_benchmark_path.read_text(encoding="utf-8"))
    by_id = {q["query_id"]: q for q in data["queries"]}
    rows = list(csv.DictReader((cell / "per_query.csv").open(encoding="utf-8")))
    run: dict[str, list[str]] = {}
    for line in (cell / "run.trec").read_text(encoding="utf-8").splitlines():
        qid, _, doc, *_ = line.split()
        run.setdefault(qid, []).append(doc)
    for row in rows:
        q = by_id[row["query_id"]]
        if q.get("answerable") is False:
            assert row["answerable"] == "no"
            assert math.isnan(float(row["coverage@10"])) and math.isnan(float(row["R@10"]))
        # answer_recall@10 by hand: a top-10 chunk holds an answer (plain lowercase check
        # agrees with the normalised one on these spans, both ways)
        answers = [a for a in [q.get("answer"), *(q.get("answers") or [])] if a]
        if q.get("answerable") is False or not answers:
            continue
        texts = [data["corpus"][c]["content"].lower() for c in run[row["query_id"]][:10]]
        plain = any(a.lower() in t for a in answers for t in texts)
        if plain != (float(row["answer_recall@10"]) == 1.0):
            # the word-boundary rule may differ from a raw substring; check the normalised form
            from metrics.answers import normalize

            bounded = any(
                f" {normalize(a)} " in f" {normalize(t)} " for a in answers for t in texts
            )
            assert bounded == (float(row["answer_recall@10"]) == 1.0), row["query_id"]


def test_api_gives_the_cli_numbers(cli_run, protocols_benchmark_path):
    import harness as h

    _, _, _, doc = cli_run
    ev = h.evaluate(
        protocols_benchmark_path,
        "bm25",
        metrics="protocols",
        fields=["dynamism", "complexity", "popularity", "source", "question_words"],
        bootstrap=200,
        permutations=200,
    )
    for name, mean in doc["results"]["overall"]["mean"].items():
        got = ev.summary.loc["overall", name]
        assert (mean is None and np.isnan(got)) or got == pytest.approx(mean, abs=1e-12), name
    assert ev.summary.loc["answerable=partial", "n"] == 10
    defl = ev.deflection
    assert list(defl.index) == ["yes", "partial", "no"]
    assert defl.attrs["auroc"] == doc["protocols"]["deflection"]["auroc"]


def test_rerun_is_up_to_date_and_a_new_grade_map_rescores(cli_run, protocols_benchmark_path):
    cwd, _, cell, doc = cli_run
    again = harness(*cli_args(protocols_benchmark_path), cwd=cwd)
    assert "is up to date" in again.stderr
    res = harness(*cli_args(protocols_benchmark_path, "relevance.outdated_for=[]"), cwd=cwd)
    assert "scored its stored ranked list" in res.stderr
    new = json.loads((cell / "metrics.json").read_text(encoding="utf-8"))
    # outdated gold of fast questions is relevant again: coverage can only rise
    before = doc["results"]["dynamism"]["fast"]["mean"]["coverage@10"]
    after = new["results"]["dynamism"]["fast"]["mean"]["coverage@10"]
    assert after > before
    assert new["benchmark"]["metadata"]["relevance"]["outdated_zeroed"] == 0
    harness(*cli_args(protocols_benchmark_path), cwd=cwd)  # back, for the leaderboard test


def test_leaderboard_has_the_new_metrics_and_the_deflection_table(cli_run):
    cwd, _, _, doc = cli_run
    leaderboard(cwd=cwd)
    board = cwd / "leaderboard"
    names = {p.name for p in board.iterdir()}
    assert "deflection_protocols.md" in names, sorted(names)
    table = squeeze((board / "deflection_protocols.md").read_text(encoding="utf-8"))
    assert "| BM25 |" in table
    assert {"protocols_protocols.md", "protocols_protocols.tex"} <= names, sorted(names)
    lines = squeeze((board / "protocols_protocols.md").read_text(encoding="utf-8")).splitlines()
    per_k = ["answer_recall", "outdated", "Cov yes", "Perf yes", "Cov partial", "Perf partial"]
    head = ["Retriever", *(f"@{k} {c}" for k in (5, 10) for c in per_k), "whole list answer_rank"]
    assert lines[2] == "| " + " | ".join(head) + " |"
    row = next(line for line in lines if line.startswith("| BM25 |"))
    cells = [c.strip().strip("*") for c in row.strip("|").split("|")]
    mean, yes = doc["results"]["overall"]["mean"], doc["results"]["answerable"]["yes"]["mean"]
    assert cells[7] == f"{100 * mean['answer_recall@10']:.2f}"
    assert cells[8] == f"{100 * mean['outdated@10']:.2f}"
    assert cells[9] == f"{100 * yes['coverage@10']:.2f}"
    assert cells[-1] == f"{mean['answer_rank']:.2f}"  # a rank, not in percent


BAD = [
    ("labels", {"labels": {"X": "RELEVANT"}}, "relevance.grades does not list"),
    ("date", {"date": "2024-02-30"}, "'date' is '2024-02-30', not a date"),
    ("answerable", {"answerable": "sometimes"}, "'answerable' is \"sometimes\""),
]


@pytest.mark.parametrize("key, change, message", BAD, ids=[b[0] for b in BAD])
def test_bad_new_keys_are_one_line(tmp_path, protocols_benchmark_path, key, change, message):
    data = json.loads(protocols_benchmark_path.read_text(encoding="utf-8"))
    data["queries"][3].update(change)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    res = harness(*cli_args(bad), cwd=tmp_path, check=False)
    assert_one_line_error(res, tmp_path, message)
    assert data["queries"][3]["query_id"] in res.stderr
    assert not (tmp_path / "results" / "protocols").exists()
