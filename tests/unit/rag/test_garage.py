"""GaRAGe's pieces (harness.rag.garage, metrics.rag): sentences with their citation markers
removed, [n] markers mapped to the passages shown, attribution by hand, a factual answer
from its sentences' labels with an unreadable label kept unknown, Kleene's AND, the passages
labelled relevant and the deflection split."""

from __future__ import annotations

import math

from harness.core.types import Query
from harness.rag.garage import attribution, both, cited, factual, sentences
from metrics.rag import deflection_split, relevant

NAN = math.nan


def test_sentences_drop_citation_markers_and_keep_abbreviations():
    text = "Paris has 2.1 million people [1]. It is in the U.S. sense a city [2, 3]. Enjoy!"
    assert sentences(text) == [
        "Paris has 2.1 million people.",
        "It is in the U.S. sense a city.",
        "Enjoy!",
    ]
    assert sentences("") == [] and sentences(" [1] ") == []


def test_markers_name_the_passages_shown_and_a_marker_past_them_is_a_miss():
    ids = ["a", "b", "c"]
    assert cited("x [1]. y [3; 2]. z [1]", ids) == {"a", "b", "c"}
    assert cited("x [4]", ids) == {"[4]"}
    assert cited("no markers, [x] or [ ]", ids) == set()


def test_attribution_by_hand():
    # cites a, b, [7]; the reference cites b, d: 1 hit; P = 1/3, R = 1/2, F1 = 2PR/(P+R) = 2/5
    p, r, f1 = attribution({"a", "b", "[7]"}, ["b", "d"])
    assert (math.isclose(p, 1 / 3), r, math.isclose(f1, 0.4)) == (True, 0.5, True)
    assert attribution(set(), ["b"]) == (0.0, 0.0, 0.0)  # citing nothing is not undefined


def test_factual_and_kleene_and():
    assert factual(["supported", "no_rad"]) == 1.0
    assert factual(["supported", None, "contradictory"]) == 0.0  # one bad sentence decides
    assert math.isnan(factual(["supported", None]))  # unknown, never guessed
    assert factual([]) == 1.0  # GaRAGe's rule: no sentence needing support is unsupported
    assert both(0.0, NAN) == 0.0 and both(NAN, 0.0) == 0.0
    assert math.isnan(both(1.0, NAN)) and both(1.0, 1.0) == 1.0


def test_relevant_passages_and_the_deflection_split():
    q = Query("q", "?", (frozenset({"g1", "g2"}),), qrels={"j1": 2, "j0": 0})
    assert relevant(q) == {"g1", "g2", "j1"}
    split = deflection_split([1.0, 0.0, NAN, 1.0], [True, True, True, False])
    # insufficient: the first two read (the NaN one left out); sufficient: the last
    assert split == {
        "insufficient": {"n": 2, "deflected": 0.5},
        "sufficient": {"n": 1, "deflected": 1.0},
    }
