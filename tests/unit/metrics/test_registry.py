"""Metric names parse into metric objects: ir_measures' and trec_eval's names mean what they
mean there, the RARE group metrics have names of their own, a name with two readings is
refused with both, and bad names and cut-offs are clear errors."""

import pytest

from harness.core.errors import ConfigError
from metrics.registry import (
    FAMILIES,
    aggregate_of,
    in_percent,
    metrics_for,
    parse_metric,
    trec_eval_name,
    valid_names,
)


@pytest.mark.parametrize(
    "text,name,family,k",
    [
        # ir_measures, as it prints them
        ("nDCG@10", "nDCG@10", "ndcg", 10),
        ("nDCG", "nDCG", "ndcg", None),
        ("AP", "AP", "map", None),
        ("AP@100", "AP@100", "map", 100),
        ("P@10", "P@10", "P", 10),
        ("R@100", "R@100", "recall", 100),
        ("RR", "RR", "recip_rank", None),
        ("RR@10", "RR@10", "recip_rank", 10),
        ("Rprec", "Rprec", "Rprec", None),
        ("Success@10", "Success@10", "success", 10),
        ("Bpref", "Bpref", "bpref", None),
        ("infAP", "infAP", "infap", None),
        ("ERR@10", "ERR@10", "err", 10),
        ("Judged@10", "Judged@10", "judged", 10),
        ("Judged", "Judged", "judged", None),
        ("NumQ", "NumQ", "num_q", None),
        ("NumRet", "NumRet", "num_ret", None),
        ("NumRel", "NumRel", "num_rel", None),
        ("NumRelRet", "NumRelRet", "num_rel_ret", None),
        ("NumRet(rel=1)", "NumRelRet", "num_rel_ret", None),  # ir_measures' own equivalence
        # ir_measures' aliases
        ("MAP", "AP", "map", None),
        ("Recall@100", "R@100", "recall", 100),
        ("RPrec", "Rprec", "Rprec", None),
        # trec_eval
        ("ndcg_cut_10", "nDCG@10", "ndcg", 10),
        ("ndcg_cut.10", "nDCG@10", "ndcg", 10),
        ("P_10", "P@10", "P", 10),
        ("P.5", "P@5", "P", 5),
        ("recall_100", "R@100", "recall", 100),
        ("map", "AP", "map", None),
        ("map_cut_100", "AP@100", "map", 100),
        ("recip_rank", "RR", "recip_rank", None),
        ("success_10", "Success@10", "success", 10),
        ("bpref", "Bpref", "bpref", None),
        ("gm_map", "gm_map", "gm_map", None),
        ("num_q", "NumQ", "num_q", None),
        ("num_ret", "NumRet", "num_ret", None),
        ("num_rel", "NumRel", "num_rel", None),
        ("num_rel_ret", "NumRelRet", "num_rel_ret", None),
        # this harness's own, and its earlier spellings of the standard ones
        ("coverage@10", "coverage@10", "coverage", 10),
        ("perfrecall@5", "perfrecall@5", "perfrecall", 5),
        ("group_ndcg@10", "group_ndcg@10", "group_ndcg", 10),
        ("group_mrr@10", "group_mrr@10", "group_mrr", 10),
        ("ndcg_cut@10", "nDCG@10", "ndcg", 10),
        ("recall@100", "R@100", "recall", 100),
        ("map_cut@10", "AP@10", "map", 10),
        ("recip_rank@10", "RR@10", "recip_rank", 10),
        ("hit@3", "Success@3", "success", 3),
        ("precision@5", "P@5", "P", 5),
        ("R-Precision", "Rprec", "Rprec", None),
        ("r@100", "R@100", "recall", 100),
    ],
)
def test_names_as_ir_measures_and_trec_eval_write_them(text, name, family, k):
    m = parse_metric(text)
    assert (m.name, m.family.name, m.k) == (name, family, k)
    assert parse_metric(m.name) == m  # what results print parses back to the same metric


@pytest.mark.parametrize(
    "text,readings",
    [
        ("ndcg@10", ("nDCG@10", "group_ndcg@10")),
        ("NDCG@10", ("nDCG@10", "group_ndcg@10")),
        ("MRR@10", ("RR@10", "group_mrr@10")),
        ("mrr@5", ("RR@5", "group_mrr@5")),
        ("ndcg", ("nDCG", "group_ndcg")),
        ("mrr", ("RR", "group_mrr")),
    ],
)
def test_a_name_with_two_readings_is_refused_with_both(text, readings):
    with pytest.raises(ConfigError, match="could mean two things") as err:
        parse_metric(text)
    assert all(f" {r} (" in str(err.value) for r in readings), str(err.value)
    with pytest.raises(ConfigError, match="could mean two things"):
        metrics_for([text], [10], depth=100)


def test_unknown_metric_lists_valid_names_that_all_parse():
    with pytest.raises(ConfigError, match=r"unknown metric 'coverge'.*did you mean 'coverage'"):
        parse_metric("coverge@10")
    with pytest.raises(ConfigError, match=r"did you mean 'nDCG'") as err:
        parse_metric("ndgc@10")
    listed = str(err.value).split("valid: ")[1].split(" (trec_eval")[0].split(", ")
    assert listed == valid_names()
    assert {"nDCG@10", "AP", "RR@10", "group_ndcg@10", "coverage@10"} <= set(listed)
    for name in listed:
        assert parse_metric(name).name == name
    with pytest.raises(ConfigError, match=r"did you mean 'map_cut'"):
        parse_metric("ap_cut@10")


@pytest.mark.parametrize("bad", ["coverage", "coverage@", "coverage@x", "@10", "P_10@5"])
def test_malformed_metric_name(bad):
    with pytest.raises(ConfigError, match="name@k|unknown metric"):
        parse_metric(bad)


def test_a_bare_family_is_not_one_metric_but_expands_over_what_is_there():
    from metrics.registry import expand

    for bare in ("map_cut", "ndcg_cut", "P", "coverage", "success"):
        with pytest.raises(ConfigError, match="needs a cut-off"):
            parse_metric(bare)
    there = ["coverage@5", "nDCG@5", "nDCG@10", "AP", "AP@10", "P(rel=2)@5", "P@5"]
    assert expand("ndcg_cut", there) == ["nDCG@5", "nDCG@10"]
    assert expand("map_cut", there) == ["AP@10"] and expand("map", there) == ["AP"]
    assert expand("P", there) == ["P@5"] and expand("P(rel=2)", there) == ["P(rel=2)@5"]
    assert expand("ndcg_cut_10", there) == ["nDCG@10"] and expand("R@5", there) == []
    with pytest.raises(ConfigError, match="could mean two things"):
        expand("ndcg", there)


@pytest.mark.parametrize(
    "text,name,point",
    [
        ("IPrec@0.5", "IPrec@0.5", 0.5),
        ("IPrec@0.50", "IPrec@0.5", 0.5),
        ("IPrec@1", "IPrec@1.0", 1.0),
        ("IPrec(rel=2)@0.2", "IPrec(rel=2)@0.2", 0.2),
        ("iprec_at_recall_0.50", "IPrec@0.5", 0.5),
        ("iprec_at_recall.0.00", "IPrec@0.0", 0.0),
    ],
)
def test_interpolated_precision_takes_a_recall_level(text, name, point):
    m = parse_metric(text)
    assert (m.name, m.family.name, m.k, m.point) == (name, "iprec", None, point)
    assert parse_metric(m.name) == m


def test_bare_interpolated_precision_is_trec_eval_s_eleven_levels():
    names = [m.name for m in metrics_for(["iprec_at_recall"], [10], depth=10)]
    assert names == [f"IPrec@{i / 10}" for i in range(11)]
    assert [m.name for m in metrics_for(["IPrec"], [5], depth=5)] == names
    with pytest.raises(ConfigError, match="needs a recall level: e.g. IPrec@0.5"):
        parse_metric("IPrec")
    for bad in ("IPrec@1.5", "iprec_at_recall_2"):
        with pytest.raises(ConfigError, match="recall level must be between 0 and 1"):
            parse_metric(bad)
    with pytest.raises(ConfigError, match="K must be a positive integer"):
        parse_metric("P@0.5")


def test_counts_are_totals_and_gm_map_a_geometric_mean():
    assert {f.name for f in FAMILIES.values() if f.aggregate == "sum"} == {
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
    }
    assert [f.name for f in FAMILIES.values() if f.aggregate == "geomean"] == ["gm_map"]
    assert aggregate_of("NumRet") == "sum" and aggregate_of("gm_map") == "geomean"
    assert aggregate_of("AP") == "mean" and aggregate_of("no_such_metric") == "mean"


@pytest.mark.parametrize(
    "name, said",
    [
        ("SetP@10", "ir_measures' SetP"),
        ("set_P", "trec_eval's set_P"),
        ("alpha_nDCG@10", "ir_measures' alpha_nDCG"),
        ("gm_bpref", "trec_eval's gm_bpref"),
    ],
)
def test_measures_of_other_tools_are_named_not_guessed_at(name, said):
    with pytest.raises(ConfigError, match=f"is {said}.*does not compute") as err:
        parse_metric(name)
    assert "did you mean" not in str(err.value)


def test_only_the_rel_parameter_is_read():
    with pytest.raises(ConfigError, match="only the parameter rel=N"):
        parse_metric("P(judged_only=True)@10")
    with pytest.raises(ConfigError, match="does not use a relevance level"):
        parse_metric("nDCG(rel=2)@10")


def test_metrics_for_orders_by_k_then_family():
    names = [m.name for m in metrics_for(["coverage", "group_mrr"], [10, 5], depth=10)]
    assert names == ["coverage@5", "group_mrr@5", "coverage@10", "group_mrr@10"]


@pytest.mark.parametrize("ks", [[0], [-1], [], [True]])
def test_nonpositive_k(ks):
    with pytest.raises(ConfigError, match="metrics.k"):
        metrics_for(["coverage"], ks, depth=10)


def test_depth_below_k():
    with pytest.raises(
        ConfigError, match=r"retrieval.depth=5 is smaller than the largest K \(10\)"
    ):
        metrics_for(["coverage"], [1, 10], depth=5)


def test_uncut_metric_rejects_k_and_cut_metric_needs_k():
    with pytest.raises(ConfigError, match="reads the whole list; drop the @10"):
        parse_metric("rprec@10")
    with pytest.raises(ConfigError, match="needs a cut-off.*R@10"):
        parse_metric("recall")


def test_bare_families_expand_over_k_where_the_tools_cut_them():
    """trec_eval's families (and P, R, Success, the harness's own) at every K; ir_measures'
    nDCG, AP, RR and trec_eval's map, recip_rank are the whole list, as those tools read them."""
    names = [
        m.name
        for m in metrics_for(
            ["ndcg_cut", "map_cut", "R", "success", "coverage", "AP", "map", "RR", "nDCG"],
            [10, 5],
            depth=100,
        )
    ]
    assert names == [
        "nDCG@5",
        "AP@5",
        "R@5",
        "Success@5",
        "coverage@5",
        "nDCG@10",
        "AP@10",
        "R@10",
        "Success@10",
        "coverage@10",
        "nDCG",
        "AP",
        "RR",
    ]


def test_metrics_for_mixes_cut_uncut_and_explicit_names():
    names = [
        m.name for m in metrics_for(["ndcg_cut", "map", "R@100", "coverage"], [10, 5], depth=100)
    ]
    assert names == ["nDCG@5", "coverage@5", "nDCG@10", "coverage@10", "R@100", "AP"]


def test_explicit_k_above_depth():
    with pytest.raises(ConfigError, match="largest K \\(100\\)"):
        metrics_for(["recall_100"], [10], depth=50)


def test_binary_metrics_carry_a_relevance_level_other_than_1_in_their_name():
    names = [m.name for m in metrics_for(["P", "ndcg_cut", "coverage", "map"], [10], 100, 2)]
    assert names == ["P(rel=2)@10", "nDCG@10", "coverage@10", "AP(rel=2)"]
    assert [m.name for m in metrics_for(["P"], [10], 100, 1)] == ["P@10"]
    m = parse_metric("P(rel=3)@5")
    assert (m.name, m.level, m.k) == ("P(rel=3)@5", 3, 5)
    assert parse_metric(m.name) == m
    assert parse_metric("P@5", level=2).name == "P(rel=2)@5"
    assert parse_metric("AP(rel=2)").name == "AP(rel=2)"


@pytest.mark.parametrize(
    "name,trec",
    [
        ("nDCG@10", "ndcg_cut_10"),
        ("nDCG", "ndcg"),
        ("R@100", "recall_100"),
        ("P(rel=2)@5", "P_5"),
        ("AP@10", "map_cut_10"),
        ("AP", "map"),
        ("RR", "recip_rank"),
        ("RR@10", None),
        ("Success@1", "success_1"),
        ("Rprec", "Rprec"),
        ("coverage@10", None),
        ("IPrec@0.5", "iprec_at_recall_0.50"),
        ("infAP", "infAP"),
        ("gm_map", "gm_map"),
        ("NumRelRet", "num_rel_ret"),
        ("ERR@10", None),
        ("Judged@10", None),
    ],
)
def test_trec_eval_names(name, trec):
    assert trec_eval_name(parse_metric(name)) == trec
    if trec not in (None, "ndcg"):  # bare ndcg has two readings outside trec_eval itself
        assert parse_metric(trec).name == name.replace("(rel=2)", "")


def test_only_answer_rank_and_the_counts_are_shown_as_they_are():
    plain = [f.name for f in FAMILIES.values() if not f.percent]
    assert plain == ["num_q", "num_ret", "num_rel", "num_rel_ret", "answer_rank"]
    assert not in_percent("answer_rank") and not in_percent("Answer_Rank")
    # lower is better, yet a share; names the registry cannot parse count as shares
    assert in_percent("outdated@5") and in_percent("coverage@10") and in_percent("P(rel=2)@5")
    assert in_percent("no_such_metric@3") and in_percent("answer_rank@5")
