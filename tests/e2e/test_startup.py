"""Start-up work that must not come back: a run composes its config once (no check, mode probe
or shipped-config lookup composing it again), bad overrides still get their one error line,
and `python -m harness.compare` never imports scipy.stats. Counted here, never timed
(scripts/bench_startup.py times them)."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.core.confs import register
from harness.core.paths import conf_dir
from tests.helpers.cli import run_module


def _probe(tool: str, *args: str, cwd):
    res = run_module("tests.helpers.startup_probe", tool, *args, cwd=cwd, check=False)
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("probe: "), res.stderr
    return res, json.loads(last.removeprefix("probe: "))


@pytest.mark.parametrize(
    ("args", "cell"),
    [
        ((), "bm25"),
        (("retriever.k1=0.9",), "bm25[k1=0.9]"),  # a variant: its shipped config is read
        (("retriever=bm25-simple", "retriever.k1=1.0"), "bm25-simple[k1=1]"),  # a whole float
        (("retriever=bm25-simple", "retriever.k1=1.5"), "bm25-simple"),  # the shipped value
    ],
)
def test_a_run_composes_its_config_once(tmp_path, args, cell):
    res, probe = _probe("run", *args, "stats.bootstrap=50", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert probe["compositions"] == 1
    assert (tmp_path / "results" / "demo" / cell / "metrics.json").is_file()
    assert "scipy.stats" not in probe["modules"]


def test_the_job_gets_the_config_hydra_composes(tmp_path):
    """The composed-once command gets what Hydra's compose API gives for the same overrides."""
    args = ["retriever=bm25-simple", "retriever.b=0.5", "metrics.k=[3,7]", "device=cpu"]
    res, probe = _probe("config", *args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert probe["compositions"] == 1
    register()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        expected = OmegaConf.to_container(compose("config", overrides=args), resolve=True)
    assert json.loads(res.stdout) == expected


def test_bad_overrides_keep_their_error_lines(tmp_path):
    res, _ = _probe("run", "retrieval.dpeth=3", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: unknown config key 'retrieval.dpeth' (did you mean")
    res, _ = _probe("run", "retriever=bm26", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: unknown retriever 'bm26' (did you mean 'bm25'?)")
    # a Hydra setting the check leaves to Hydra: Hydra's own message, as before
    res, _ = _probe("run", "hydra.nonsense=1", cwd=tmp_path)
    assert res.returncode == 1 and "Could not override 'hydra.nonsense'" in res.stderr
    assert not (tmp_path / "results").exists()


def test_compare_does_not_import_scipy_stats(tmp_path):
    for args in ((), ("retriever=bm25-simple",)):
        res, _ = _probe("run", *args, "stats.bootstrap=50", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    cells = ("results/demo/bm25", "results/demo/bm25-simple")
    res, probe = _probe("compare", *cells, "--bootstrap", "200", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr
    # the t-test ran (the two rank differently: its differences vary) through scipy.special
    assert "scipy.special" in probe["modules"]
    assert "scipy.stats" not in probe["modules"] and "pandas" not in probe["modules"]
