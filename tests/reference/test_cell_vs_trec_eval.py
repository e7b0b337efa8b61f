"""A whole cell cross-checked by pytrec_eval: the cell's own qrels.trec and run.trec, read
back from disk, give the per-query values the cell wrote to per_query.csv."""

import csv
import json
import math

import pytest

from harness.core.errors import ConfigError
from metrics.registry import parse_metric, trec_eval_name
from tests.helpers.cli import harness

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTS = (1, 3, 10)


def _read_trec(path, qrels):
    out: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if qrels:
            out.setdefault(f[0], {})[f[2]] = int(f[3])
        else:
            out.setdefault(f[0], {})[f[2]] = float(f[4])
    return out


def _measure(column, level):
    """The pytrec_eval measure a per_query.csv column holds at `level`, or None. Binary
    metrics at a level other than 1 are named with it ('P(rel=2)@10'); nDCG is graded."""
    try:
        metric = parse_metric(column)
    except ConfigError:
        return None  # query_id, strata, n_groups
    if metric.family.kind != "standard" or metric.level != (level if metric.family.binary else 1):
        return None
    name = trec_eval_name(metric)
    if name is None or (metric.k is not None and metric.k not in CUTS):
        return None
    return name


def _check_cell(cell, level):
    qrels = _read_trec(cell / "qrels.trec", qrels=True)
    run = _read_trec(cell / "run.trec", qrels=False)
    cuts = ",".join(map(str, CUTS))
    measures = {f"{m}.{cuts}" for m in ("ndcg_cut", "recall", "P", "map_cut", "success")}
    ref = pytrec_eval.RelevanceEvaluator(
        qrels, measures | {"map", "Rprec", "recip_rank"}, relevance_level=level
    ).evaluate(run)
    rows = list(csv.DictReader((cell / "per_query.csv").open()))
    checked = 0
    for row in rows:
        q = row["query_id"]
        for col, value in row.items():
            measure = _measure(col, level)
            if measure is None:
                continue
            want = ref.get(q, {}).get(measure)
            got = float(value)
            if want is None or not any(g >= level for g in qrels[q].values()):
                assert math.isnan(got) or got == 0.0, (q, col)
                continue
            assert got == pytest.approx(want, abs=1e-6), (q, col)
            checked += 1
    return checked


def test_demo_cell_matches_trec_eval(tmp_path):
    harness("metrics=standard", "metrics.k=[1,3,10]", cwd=tmp_path)
    assert _check_cell(tmp_path / "results/demo/bm25", level=1) > 48 * 10


def test_graded_beir_cell_matches_trec_eval_at_level_2(tmp_path):
    folder = tmp_path / "graded"
    (folder / "qrels").mkdir(parents=True)
    words = ["salt", "marsh", "mill", "river", "coast", "birds", "wheel", "pans"]
    docs = {f"d{i}": " ".join(words[j % 8] for j in range(i, i + 3)) for i in range(12)}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in docs.items())
    )
    queries = {f"q{i}": f"{words[i]} {words[(i + 3) % 8]}" for i in range(8)}
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items())
    )
    lines = ["query-id\tcorpus-id\tscore"]
    for i in range(8):
        for j in range(4):
            lines.append(f"q{i}\td{(i * 3 + j) % 12}\t{(i + j) % 4}")
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    harness(
        "corpus=beir",
        f"corpus.path={folder}",
        "metrics=standard",
        "metrics.k=[1,3,10]",
        "metrics.relevance_level=2",
        cwd=tmp_path,
    )
    assert _check_cell(tmp_path / "results/graded/bm25", level=2) > 20
