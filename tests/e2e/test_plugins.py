"""Plug-in retrievers end to end: a class named with Hydra's `_target_` through the CLI, and
the same objects through the Python API, give the same numbers; a class that does not
implement the protocol gets one error line naming what is missing."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers.cli import assert_one_line_error, harness

EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    shutil.copy(EXAMPLES / "toy_plugins.py", tmp_path / "toy_plugins.py")
    return tmp_path


def _cli_means(cell: Path) -> dict[str, float]:
    return json.loads((cell / "metrics.json").read_text())["results"]["overall"]["mean"]


def test_retriever_class_through_cli_and_api_agree(work, monkeypatch):
    env = {"HARNESS_CACHE_DIR": str(work / "cache")}
    out = harness(
        "retriever=custom",
        "retriever._target_=toy_plugins.WordOverlap",
        "+retriever.alpha=0.5",
        "retriever.name=overlap",
        cwd=work,
        env=env,
    )
    # the plug-in's arguments are settings the shipped custom config lacks: they name the cell
    assert "demo · overlap[alpha=0.5] · 48 queries" in out.stdout
    cell = work / "results" / "demo" / "overlap[alpha=0.5]"
    config = json.loads((cell / "metrics.json").read_text())["config"]["retriever"]
    assert config["_target_"] == "toy_plugins.WordOverlap" and config["alpha"] == 0.5

    import harness as h

    monkeypatch.syspath_prepend(str(work))
    import toy_plugins

    ev = h.evaluate("demo", toy_plugins.WordOverlap(name="overlap", alpha=0.5))
    for metric, value in _cli_means(cell).items():
        assert ev.summary.loc["overall", metric] == value, metric
    # the plug-in's dicts were put in canonical order: run.trec matches the API's run
    api_trec = ev.run.to_trec(work / "api.trec", tag="overlap[alpha=0.5]").read_text()
    assert api_trec == (cell / "run.trec").read_text()


def test_encoder_object_becomes_a_dense_retriever(work, monkeypatch):
    env = {"HARNESS_CACHE_DIR": str(work / "cache")}
    args = ("retriever=custom", "retriever._target_=toy_plugins.HashingEncoder")
    harness(*args, "+retriever.dim=64", "retriever.name=hashing", cwd=work, env=env)
    cell = work / "results" / "demo" / "hashing[dim=64]"
    doc = json.loads((cell / "metrics.json").read_text())
    assert doc["diagnostics"]["similarity"]["embedder"] == "hashing"  # a dense cell
    assert any((work / "cache" / "embeddings").rglob("*.npy"))  # through the embedding cache

    import harness as h

    monkeypatch.syspath_prepend(str(work))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(work / "cache"))
    import toy_plugins

    ev = h.evaluate("demo", toy_plugins.HashingEncoder(dim=64), name="hashing")
    for metric, value in _cli_means(cell).items():
        assert math.isclose(ev.summary.loc["overall", metric], value, abs_tol=1e-12), metric


def test_class_without_the_protocol_is_one_error_line(work):
    res = harness(
        "retriever=custom", "retriever._target_=toy_plugins.NotARetriever", cwd=work, check=False
    )
    assert_one_line_error(res, work, "does not implement the retriever protocol; missing: search")


def test_custom_without_a_target_says_how(work):
    res = harness("retriever=custom", cwd=work, check=False)
    assert_one_line_error(res, work, "retriever._target_ is required")


def test_api_rejects_a_non_retriever_with_what_is_missing():
    import harness as h
    from harness.core.errors import ConfigError

    class Half:
        name = "half"

        def index(self, corpus):
            pass

    with pytest.raises(ConfigError, match=r"missing: search\(queries, \*, depth\)"):
        h.evaluate("demo", Half())


BROKEN = """
class Broken:
    name = "broken"

    def index(self, corpus):
        pass

    def search(self, queries, *, depth):
        raise ValueError("boom")


class BrokenEncoder:
    def encode(self, texts, **kwargs):
        raise RuntimeError("no model")
"""


def test_a_plugin_that_raises_is_one_error_line_naming_it(work, monkeypatch):
    (work / "broken_plugins.py").write_text(BROKEN)
    res = harness("retriever=custom", "retriever._target_=broken_plugins.Broken", cwd=work,
                  check=False)  # fmt: skip
    assert_one_line_error(
        res, work, "the retriever 'broken' (Broken.search) failed: ValueError: boom"
    )

    import harness as h
    from harness.core.errors import HarnessError

    monkeypatch.syspath_prepend(str(work))
    import broken_plugins

    with pytest.raises(
        HarnessError, match=r"\(BrokenEncoder.encode\) failed: RuntimeError: no model"
    ) as got:
        h.evaluate("demo", broken_plugins.BrokenEncoder(), name="enc")
    assert isinstance(got.value.__cause__, RuntimeError)  # the plug-in's traceback stays chained


def test_plugin_errors_stay_one_line_and_a_class_is_not_an_instance(work, monkeypatch):
    (work / "odd_plugins.py").write_text(
        "class TwoLines:\n    name = 'two'\n    def index(self, corpus):\n"
        "        raise RuntimeError('first line\\nsecond line')\n"
        "    def search(self, queries, *, depth):\n        return {}\n"
        "class Silent(TwoLines):\n    name = 'silent'\n    def index(self, corpus):\n"
        "        raise MemoryError()\n"
        "class InitBoom:\n    def __init__(self):\n        raise ValueError('bad init')\n"
    )
    two = harness("retriever=custom", "retriever._target_=odd_plugins.TwoLines", cwd=work,
                  check=False)  # fmt: skip
    assert_one_line_error(two, work, "RuntimeError: first line second line")
    init = harness("retriever=custom", "retriever._target_=odd_plugins.InitBoom", cwd=work,
                   check=False)  # fmt: skip
    assert_one_line_error(init, work, "cannot build it: ValueError: bad init")

    import harness as h
    from harness.core.errors import ConfigError, HarnessError

    monkeypatch.syspath_prepend(str(work))
    import odd_plugins

    with pytest.raises(HarnessError, match=r"\(Silent.index\) failed: MemoryError$"):
        h.evaluate("demo", odd_plugins.Silent())
    with pytest.raises(ConfigError, match=r"evaluate\(\.\.\., TwoLines\): TwoLines is a class; "
                       r"pass an instance, TwoLines\(\.\.\.\)"):  # fmt: skip
        h.evaluate("demo", odd_plugins.TwoLines)
