"""Fusion by hand: reciprocal rank fusion and min-max weighted fusion on fixed part runs."""

import pytest

from harness.core.errors import ConfigError
from harness.core.run import Run, canonical
from harness.core.types import Query
from retrievers.hybrid import Hybrid

CORPUS = {c: None for c in "abcde"}
Q = [Query("q1", "text", (frozenset("a"),))]


class Fixed:
    def __init__(self, name, scores):
        self.name, self.scores = name, scores

    def index(self, corpus):
        pass

    def search(self, queries, *, depth):
        return Run(self.name, {"q1": canonical(self.scores, depth)}, depth)


def _fused(fusion, **kw):
    h = Hybrid(
        name="h",
        parts={"x": Fixed("x", {"a": 3.0, "b": 2.0, "c": 1.0}), "y": Fixed("y", {"c": 9, "d": 1})},
        fusion=fusion,
        **kw,
    )
    h.index(CORPUS)
    r = h.search(Q, depth=10)["q1"]
    return dict(zip(r.ids, r.scores)), r


def test_rrf_by_hand():
    scores, r = _fused("rrf")
    assert scores == pytest.approx({"c": 1 / 63 + 1 / 61, "a": 1 / 61, "b": 1 / 62, "d": 1 / 62})
    assert r.ids == ("c", "a", "d", "b")  # b and d tie: id descending
    assert r.codes.tolist() == [2, 0, 3, 1]


def test_rrf_k_and_weights():
    scores, _ = _fused("rrf", rrf_k=0, weights={"y": 2.0})
    assert scores == pytest.approx({"a": 1.0, "b": 0.5, "c": 1 / 3 + 2.0, "d": 1.0})


def test_weighted_min_max():
    scores, _ = _fused("weighted", weights={"x": 0.3, "y": 0.7})
    # x: a=1, b=0.5, c=0; y: c=1, d=0
    assert scores == pytest.approx({"a": 0.3, "b": 0.15, "c": 0.7, "d": 0.0})


def test_bad_settings():
    parts = {"x": Fixed("x", {}), "y": Fixed("y", {})}
    with pytest.raises(ConfigError, match="unknown retriever.fusion 'rff'"):
        Hybrid(name="h", parts=parts, fusion="rff")
    with pytest.raises(ConfigError, match="weights names z"):
        Hybrid(name="h", parts=parts, weights={"z": 1.0})
    with pytest.raises(ConfigError, match="weights.x must be a number >= 0"):
        Hybrid(name="h", parts=parts, weights={"x": -1})


class AsDict(Fixed):
    def search(self, queries, *, depth):  # a plug-in may answer with a plain dict
        return {"q1": self.scores}


class Broken(Fixed):
    def search(self, queries, *, depth):
        raise ValueError("boom")


def test_a_plugin_part_may_answer_with_a_dict_and_its_error_is_one_line():
    from harness.core.errors import HarnessError

    parts = {"x": Fixed("x", {"a": 3.0, "b": 2.0}), "y": AsDict("y", {"b": 9.0, "c": 1.0})}
    h = Hybrid(name="h", parts=parts, fusion="rrf")
    h.index(CORPUS)
    assert h.search(Q, depth=10)["q1"].ids == ("b", "a", "c")
    h = Hybrid(name="h", parts={"x": Fixed("x", {"a": 1.0}), "y": Broken("y", {})})
    with pytest.raises(
        HarnessError, match=r"the retriever 'y' \(Broken.search\) failed: ValueError"
    ):
        h.search(Q, depth=10)
