"""The terminal report's one line about ties: only when a shown mean depends on them."""

from harness.report.terminal import table, ties_line


def _overall(counts, ranges):
    mean = {m: 0.5 for m in counts}
    return {"n": 3, "mean": mean, "excluded": dict.fromkeys(counts, 0)} | {
        "tie_queries": counts,
        "ties": ranges,
    }


def test_line_names_the_means_that_depend_on_ties():
    overall = _overall(
        {"coverage@10": 1, "group_ndcg@10": 1, "group_mrr@5": 0},
        {
            "coverage@10": [0.645833, 0.64656],
            "group_ndcg@10": [0.61803, 0.61829],
            "group_mrr@5": [0.5, 0.5],
        },
    )
    line = ties_line(overall, ["group_mrr@5", "coverage@10", "group_ndcg@10"])
    assert line == (
        "ties: 1 query's value depends on tied scores; coverage@10 64.58–64.66, "
        "group_ndcg@10 61.80–61.83 (metrics.json: ties)"
    )
    assert table({"overall": overall}, ["coverage@10"]).endswith(
        "ties: 1 query's value depends on tied scores; coverage@10 64.58–64.66 (metrics.json: ties)"
    )


def test_no_line_without_dependence_or_for_older_cells():
    overall = _overall({"coverage@10": 0}, {"coverage@10": [0.5, 0.5]})
    assert ties_line(overall, ["coverage@10"]) == ""
    older = {"n": 3, "mean": {"coverage@10": 0.5}, "excluded": {"coverage@10": 0}}
    assert ties_line(older, ["coverage@10"]) == ""
    assert "ties" not in table({"overall": older}, ["coverage@10"])


def test_many_metrics_are_cut_short():
    names = [f"m{i}@10" for i in range(6)]
    overall = _overall(dict.fromkeys(names, 3), {m: [0.1, 0.2] for m in names})
    line = ties_line(overall, names)
    assert line.startswith("ties: 3 queries' values depend on tied scores; m0@10 10.00–20.00")
    assert "+2 more" in line
